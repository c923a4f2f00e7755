"""How sure the language identifier must be: English messages and their translations from the
system's gettext catalogues (/usr/share/locale/LANG/LC_MESSAGES/*.mo, Debian's translations of its
own programs: texts nobody here wrote), identified as `talker` identifies a text in Latin letters.

For each threshold: how many of up to 3,000 English messages (4-30 words) would be spoken in another
language, and for each language the share of its translations spoken in it (and, after the slash,
those given to a third language); the last row is talker's whole rule, with the texts it refuses to
tell after a second slash. Prints one table.

    python bench/language_id.py [--english 3000] [--per-language 400]
"""

from __future__ import annotations

import argparse
import gettext
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGUAGES = ["fr", "de", "es", "it", "pt", "nl", "pl", "sv", "cs", "tr", "vi", "id", "da", "fi", "hu", "ro"]
THRESHOLDS = [0.6, 0.7, 0.8, 0.9, 0.95]


def clean(message: str) -> str:
    """A message less its printf and format fields, markup and accelerator marks."""
    return " ".join(re.sub(r"%\S+|\{[^}]*\}|<[^>]*>|&\w+|_", " ", message).split())


def sentence_like(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+", text)
    return 4 <= len(words) <= 30 and sum(map(len, words)) > 20


def pairs(language: str) -> list[tuple[str, str]]:
    """(English, translation) of every sentence-like message in the language's catalogues."""
    out = []
    for path in sorted(Path("/usr/share/locale", language, "LC_MESSAGES").glob("*.mo")):
        try:
            with open(path, "rb") as handle:
                catalogue = gettext.GNUTranslations(handle)._catalog
        except Exception:  # a catalogue this Python cannot read
            continue
        for english, translated in catalogue.items():
            if isinstance(english, str) and isinstance(translated, str) and translated != english:
                english, translated = clean(english), clean(translated)
                if sentence_like(translated):
                    out.append((english, translated))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--english", type=int, default=3000)
    parser.add_argument("--per-language", type=int, default=400)
    args = parser.parse_args()

    from talker_cli.language import detect_latin_language

    catalogues = {language: pairs(language) for language in LANGUAGES}
    english = sorted({e for found in catalogues.values() for e, _ in found if sentence_like(e)})
    random.Random(0).shuffle(english)
    english = [(text, *detect_latin_language(text)) for text in english[: args.english]]
    translated = {language: [detect_latin_language(t) for _, t in found[: args.per_language]]
                  for language, found in catalogues.items() if found}
    print(f"| sure at | English messages spoken in another language (of {len(english)}) | "
          + " | ".join(translated) + " |")
    print("|---|---|" + "---|" * len(translated))
    for threshold in THRESHOLDS:
        wrong = sum(code != "en" and p >= threshold for _, code, p in english)
        cells = []
        for language, found in translated.items():
            right = sum(code == language and p >= threshold for code, p in found) / len(found)
            third = sum(code not in (language, "en") and p >= threshold for code, p in found)
            cells.append(f"{right:.2f}/{third}")
        print(f"| {threshold} | {wrong} | " + " | ".join(cells) + " |")
    # talker's whole rule: sure at SURE_OF_LANGUAGE, and a text with letters English does not write is
    # given to the detector's guess from GUESS_WITH_FOREIGN_LETTERS or refused (after the second slash)
    told_english = [told(text) for text, _, _ in english]
    cells = []
    for language, found in catalogues.items():
        if found:
            codes = [told(t) for _, t in found[: args.per_language]]
            cells.append(f"{codes.count(language) / len(codes):.2f}/{sum(c not in (language, 'en', None) for c in codes)}"
                         f"/{codes.count(None)}")
    print(f"| talker | {sum(c != 'en' for c in told_english)} ({told_english.count(None)} refused) | "
          + " | ".join(cells) + " |")


def told(text: str) -> str | None:
    """The language talker speaks a text in; None when it refuses to tell."""
    from talker_cli.errors import InputError
    from talker_cli.language import decide_language

    try:
        return decide_language(text, "auto")[0]
    except InputError:
        return None


if __name__ == "__main__":
    main()
