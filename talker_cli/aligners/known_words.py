"""A recording's words as the user knows them (--transcript), timed by the ASR's reading of it.

The ASR's words anchor the alignment's spans (recording_alignment.py); where the user gives the words,
those are aligned instead, each taking the time of the ASR's characters it matches (a character-level
match, so "7" against "seven", a split or joined word or a misheard one costs only its own stretch):
a word with no matched character is spread over the time between its matched neighbours. Misheard
words cost the mouth its shape where they differ ("bile" for "by r" closed an open mouth), and
names, commands and spelled letters are what a small ASR mishears most.

Words that are not the recording's are refused rather than forced onto it: GRID's worst misheard
sentence still shares 0.47 of its letters with the true one in order, two unrelated TIMIT sentences
a median 0.21, and a long text given for a short take (or the reverse) far less.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from ..artifacts import Transcript, Word
from ..errors import InputError

MIN_SHARED = 0.25  # of the longer's letters, the share the given and the heard words must have in common

# Han, kana and hangul are written without spaces: each character is a word of its own here.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def given_words(text: str) -> list[str]:
    """The text's words: split at spaces, characters of unspaced scripts one by one."""
    words: list[str] = []
    for token in text.split():
        if _UNSPACED.search(token):
            words += [piece for piece in re.split(f"({_UNSPACED.pattern})", token) if piece.strip()]
        else:
            words.append(token)
    return words


def _letters(word: str) -> str:
    """What of a word is compared: its letters and digits, lower case."""
    return "".join(c for c in unicodedata.normalize("NFKC", word).lower() if c.isalnum())


def _char_spans(words: tuple[Word, ...]) -> tuple[str, list[tuple[float, float]]]:
    """The ASR's words as one string of letters, with the stretch of time of each (its word's, shared
    equally among its letters)."""
    chars, spans = [], []
    for w in words:
        letters = _letters(w.text)
        step = (w.end_s - w.start_s) / len(letters)
        for i, c in enumerate(letters):
            chars.append(c)
            spans.append((w.start_s + i * step, w.start_s + (i + 1) * step))
    return "".join(chars), spans


def timed_given_words(text: str, heard: tuple[Word, ...], compared=lambda words: words) -> tuple[Word, ...]:
    """The text's words, each timed from the ASR's words it matches (see the module); untimed (0, 0)
    when the ASR timed nothing, and the aligner then aligns the whole recording at once. `compared`
    maps the given words to what is compared with the heard ones (Chinese in the ASR's characters).
    InputError when the two share too little (MIN_SHARED)."""
    words = given_words(text)
    heard = tuple(w for w in heard if _letters(w.text) and w.end_s > w.start_s)
    if not heard:
        return tuple(Word(w, 0.0, 0.0) for w in words)
    heard_chars, heard_spans = _char_spans(heard)
    letters = [_letters(w) for w in compared(words)]
    blocks = SequenceMatcher(None, "".join(letters), heard_chars, autojunk=False).get_matching_blocks()
    shared = sum(block.size for block in blocks) / max(sum(map(len, letters)), len(heard_chars))
    if shared < MIN_SHARED:
        said = " ".join(w.text for w in heard)
        raise InputError(f"--transcript does not match the recording: {shared:.0%} of its letters were heard in order "
                         f"(heard: {said[:60]!r}{'...' if len(said) > 60 else ''}); give the words of this recording")
    owner = [i for i, word in enumerate(letters) for _ in word]  # given character -> its word
    matched: list[list[tuple[float, float]]] = [[] for _ in words]
    for block in blocks:
        for k in range(block.size):
            matched[owner[block.a + k]].append(heard_spans[block.b + k])
    timed = [(spans[0][0], spans[-1][1]) if spans else None for spans in matched]
    return tuple(Word(word, *span) for word, span in zip(words, _fill_gaps(timed, heard[0].start_s, heard[-1].end_s)))


def _fill_gaps(timed: list[tuple[float, float] | None], first_s: float, last_s: float) -> list[tuple[float, float]]:
    """Words with no time share the stretch between their timed neighbours (the ASR's first and last
    times at the ends), in order and equally."""
    out: list[tuple[float, float]] = []
    i = 0
    while i < len(timed):
        if timed[i] is not None:
            start, end = timed[i]
            start = min(max(start, out[-1][1]), end) if out else start
            out.append((start, end))
            i += 1
            continue
        j = i
        while j < len(timed) and timed[j] is None:
            j += 1
        start = out[-1][1] if out else min(first_s, timed[j][0] if j < len(timed) else first_s)
        end = timed[j][0] if j < len(timed) else max(last_s, start)
        step = max(end - start, 0.0) / (j - i)
        out += [(start + k * step, start + (k + 1) * step) for k in range(j - i)]
        i = j
    return out


def with_given_words(transcript: Transcript, text: str) -> Transcript:
    """The transcript with the user's words in place of the ASR's, timed by them. Chinese is compared
    in the characters of the ASR's transcript (simplified or traditional, as the job asked)."""
    compared = lambda words: words  # noqa: E731
    if transcript.language == "zh":
        from ..language import in_chinese_characters

        traditional = in_chinese_characters([transcript.text], "zh-TW") == [transcript.text]
        compared = lambda words: in_chinese_characters(words, "zh-TW" if traditional else "zh")  # noqa: E731
    return Transcript(text=text, words=timed_given_words(text, transcript.words, compared),
                      language=transcript.language, no_speech_prob=transcript.no_speech_prob)
