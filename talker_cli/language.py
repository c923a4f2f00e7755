"""The writing system of a text, and whether a voice's language is written in it.

A voice reading a script it does not know says nonsense (an English voice reads Hanzi as "Chinese
letter" and spells Cyrillic); that is refused before any stage, naming the script and the voice.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

from .errors import UsageError

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


def script_of(char: str) -> str | None:
    """The script of one letter ('LATIN', 'CJK', 'CYRILLIC'...); None for a letter of a script not known here."""
    prefix = unicodedata.name(char, "").split(" ", 1)[0]
    return prefix if prefix in _SCRIPTS else None


def scripts_of(text: str) -> Counter[str]:
    """How many of the text's letters each known script has."""
    counts = Counter(script_of(c) for c in text if c.isalpha())
    counts.pop(None, None)
    return counts


def check_voice_speaks(text: str, voice_language: str, voice: str) -> None:
    """Refuse a text with letters of a script the voice's language is not written in (exit 2): even a
    few would be read out as character names."""
    family = voice_language.replace("-", "_").split("_")[0].lower()
    allowed = _LANGUAGE_SCRIPTS.get(family, {"LATIN"})
    foreign = [(n, s) for s, n in scripts_of(text).items() if s not in allowed]
    if not foreign:
        return
    script = max(foreign)[1]
    raise UsageError(
        f"the text is written in {_SCRIPTS[script]} script, which the voice {voice} ({voice_language}) cannot "
        "speak; pass --tts-model with a Piper voice of the text's language (VOICE.onnx with its .onnx.json)"
    )
