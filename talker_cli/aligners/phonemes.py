"""One phoneme set for every aligner: ARPAbet without stress digits, plus SIL.

Piper and espeak-ng speak IPA one code point at a time; pocketsphinx and MFA's english_us_arpa
speak ARPAbet. Everything is mapped here so visemes see a single alphabet.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from ..artifacts import Phone

ARPABET = (
    "AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW "
    "V W Y Z ZH SIL"
).split()

VOWELS = frozenset({"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"})

# Longest clusters first when tokenizing IPA.
IPA_TO_ARPABET = {
    "aɪ": "AY", "aʊ": "AW", "eɪ": "EY", "oʊ": "OW", "ɔɪ": "OY", "tʃ": "CH", "dʒ": "JH",
    "ɑ": "AA", "ɒ": "AA", "a": "AA", "æ": "AE", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ɔ": "AO",
    "o": "OW", "ɛ": "EH", "e": "EH", "ɜ": "ER", "ɝ": "ER", "ɚ": "ER", "ɪ": "IH", "ᵻ": "IH",
    "i": "IY", "ʊ": "UH", "u": "UW", "b": "B", "d": "D", "ð": "DH", "f": "F", "ɡ": "G",
    "g": "G", "h": "HH", "k": "K", "l": "L", "m": "M", "n": "N", "ŋ": "NG", "p": "P",
    "ɹ": "R", "r": "R", "ɾ": "D", "s": "S", "ʃ": "SH", "t": "T", "θ": "TH", "v": "V",
    "w": "W", "j": "Y", "z": "Z", "ʒ": "ZH", "ʔ": "T", "x": "K", "ç": "HH", "ɬ": "L",
}
# Sounds of other languages (espeak-ng's IPA), each as the English phone whose mouth shape is
# closest: front rounded vowels are rounded, retroflex and alveolo-palatal sibilants are SH/ZH,
# uvular and velar fricatives are K/G, the bilabial approximant is lip-to-teeth, not a closure.
IPA_TO_ARPABET.update({
    "y": "UW", "ʏ": "UH", "ø": "OW", "œ": "OW", "ɶ": "OW", "ɯ": "UH", "ɤ": "AH", "ɨ": "IH", "ʉ": "UW",
    "ɵ": "OW", "ɘ": "AH", "ɞ": "AH", "ɛ̃": "EH", "ɲ": "N", "ɳ": "N", "ɱ": "M", "ʎ": "L", "ɭ": "L", "ɫ": "L",
    "ɺ": "L", "β": "V", "ɸ": "F", "ʋ": "V", "χ": "K", "ʁ": "G", "ɣ": "G", "ʀ": "R", "ɻ": "R", "q": "K",
    "ɢ": "G", "c": "K", "ɟ": "G", "ɕ": "SH", "ʑ": "ZH", "ʂ": "SH", "ʐ": "ZH", "ʈ": "T", "ɖ": "D",
    "ħ": "HH", "ʕ": "HH", "ɦ": "HH", "ʝ": "Y", "ɰ": "W", "ɥ": "W", "ɴ": "NG",
    # affricates written as one letter (Kokoro's phonemes): the mouth of their sibilant
    "ʨ": "CH", "ʥ": "JH", "ʧ": "CH", "ʤ": "JH", "ʦ": "S", "ʣ": "Z", "ꭧ": "CH",
    # and as two (espeak-ng's Mandarin j/q and zh/ch, Japanese ち, Russian ч): one phone, as tʃ is,
    # not a t and then a sibilant ("ts" stays two: English "cats")
    "tɕ": "CH", "dʑ": "JH", "tʂ": "CH", "dʐ": "JH", "ʈʂ": "CH", "ɖʐ": "JH",
})
_PREFIX_MARKS = {"ˈ", "ˌ"}  # stress: its time belongs to the next phoneme
_SILENCE = set(".,;:!?—–-…\"'()[]") | {"^", "$", "_"}
_WORD_BREAK = " "


# MFA's english_mfa dictionary speaks IPA with multi-letter diphthongs and diacritics.
_MFA_IPA = {"aj": "AY", "aw": "AW", "ej": "EY", "ow": "OW", "ɔj": "OY", "ʉ": "UW", "ɫ": "L", "c": "K", "ɟ": "G",
            "ʎ": "L", "ɲ": "N", "ɒ": "AA", "ɐ": "AH", "spn": "SIL", "sil": "SIL", "": "SIL"}
_MFA_MARKS = str.maketrans("", "", "ʰʷːˑ̩̃ʲ")


def mfa_label(label: str) -> str:
    """An MFA phone (ARPA 'AH0' or IPA 'tʃ', 'aj', 'tʰ') -> ARPAbet."""
    if label[:1].isupper():
        return arpabet_label(label)
    core = label.translate(_MFA_MARKS)
    return _MFA_IPA.get(core) or IPA_TO_ARPABET.get(core) or "SIL"


def arpabet_label(label: str) -> str:
    """'AH0' -> 'AH'; unknown labels (noise, +SPN+) -> 'SIL'."""
    core = label.rstrip("012").upper()
    return core if core in ARPABET else "SIL"


def ipa_durations_to_phones(
    symbols: Sequence[tuple[str, float]], start_s: float = 0.0
) -> tuple[list[Phone], list[tuple[float, float]]]:
    """Per-code-point IPA durations (Piper's alignments) -> ARPAbet phones and word spans.

    Returns the phones (contiguous, starting at start_s) and the (start, end) of each word,
    where words are runs of speech between spaces or punctuation.
    """
    phones: list[Phone] = []
    words: list[tuple[float, float]] = []
    t = start_s
    pending = 0.0  # stress marks waiting for their phoneme
    word_start: float | None = None
    i = 0
    while i < len(symbols):
        symbol, duration = symbols[i]
        pair = symbol + symbols[i + 1][0] if i + 1 < len(symbols) else ""
        if pair in IPA_TO_ARPABET:
            label, duration, step = IPA_TO_ARPABET[pair], duration + symbols[i + 1][1], 2
        elif symbol in IPA_TO_ARPABET:
            label, step = IPA_TO_ARPABET[symbol], 1
        elif _letter_of(symbol) in IPA_TO_ARPABET:  # a letter written with its diacritic (Japanese ä)
            label, step = IPA_TO_ARPABET[_letter_of(symbol)], 1
        elif symbol in _PREFIX_MARKS:
            pending += duration
            i += 1
            continue
        elif symbol == _WORD_BREAK and phones and phones[-1].label != "SIL" and _sound_follows(symbols, i):
            # a space between two words spoken on is no pause: its time (often a stop's closure, or
            # the glide into the next word) goes to the sound after it, as an aligner would time it
            if word_start is not None:
                words.append((word_start, t))
                word_start = None
            pending += duration
            i += 1
            continue
        elif symbol == _WORD_BREAK or symbol in _SILENCE:
            label, step = "SIL", 1
        else:  # length marks, combining diacritics: extend what came before
            if phones:
                last = phones[-1]
                phones[-1] = Phone(last.label, last.start_s, last.end_s + duration)
            else:
                pending += duration
            t += duration
            i += 1
            continue
        duration += pending
        pending = 0.0
        if label == "SIL":
            if word_start is not None:
                words.append((word_start, t))
                word_start = None
        elif word_start is None:
            word_start = t
        phones.append(Phone(label, t, t + duration))
        t += duration
        i += step
    if word_start is not None:
        words.append((word_start, t))
    return merge_adjacent(phones), words


def _sound_follows(symbols: Sequence[tuple[str, float]], i: int) -> bool:
    """Whether the next symbol after position i is part of a sound, not a pause."""
    return i + 1 < len(symbols) and symbols[i + 1][0] != _WORD_BREAK and symbols[i + 1][0] not in _SILENCE


def _letter_of(symbol: str) -> str:
    """The letter of a precomposed letter with a diacritic (ä -> a); a mark stays itself."""
    return unicodedata.normalize("NFD", symbol)[:1]


def ipa_labels(symbols: Sequence[str]) -> list[str]:
    """IPA code points with no timing (a word's pronunciation) -> its ARPAbet phones, silences left out."""
    phones, _ = ipa_durations_to_phones([(s, 0.01) for s in symbols])
    return [p.label for p in phones if p.label != "SIL"]


def merge_adjacent(phones: Iterable[Phone]) -> list[Phone]:
    """Join neighbouring silences and close tiny gaps, so the track is contiguous."""
    merged: list[Phone] = []
    for phone in phones:
        if merged and phone.label == "SIL" and merged[-1].label == "SIL":
            merged[-1] = Phone("SIL", merged[-1].start_s, phone.end_s)
        else:
            merged.append(phone)
    return merged
