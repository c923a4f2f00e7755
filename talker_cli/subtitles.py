"""Subtitles (SRT and WebVTT) from the aligned words: short cues broken at sentence ends and pauses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .artifacts import Word

MAX_CHARS = 42
MAX_UNSPACED_CHARS = 16  # Chinese and Japanese: each character takes two columns
PAUSE_BREAK_S = 0.5
_SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")


@dataclass(frozen=True)
class Cue:
    start_s: float
    end_s: float
    text: str


def cues_from_words(words: Sequence[Word]) -> list[Cue]:
    """Words as they are written (no spaces between Chinese or Japanese ones: an ASR's 我们 一起 去
    was shown so), in cues of at most MAX_CHARS, or MAX_UNSPACED_CHARS for text without spaces."""
    from .language import join_words

    written = lambda ws: join_words([w.text for w in ws])  # noqa: E731
    limit = MAX_UNSPACED_CHARS if unspaced(written(words)) else MAX_CHARS
    cues: list[Cue] = []
    current: list[Word] = []
    for word in [piece for w in words for piece in _pieces(w, limit)]:
        if current:
            text = written(current + [word])
            pause = word.start_s - current[-1].end_s
            if len(text) > limit or pause > PAUSE_BREAK_S or current[-1].text.endswith(_SENTENCE_ENDS):
                # A sentence's last word alone on screen reads badly: a long cue gives it a companion.
                orphan = len(text) > limit and pause <= PAUSE_BREAK_S and word.text.endswith(_SENTENCE_ENDS)
                carried = 1 if orphan and len(current) > 2 else 0
                kept = current[:len(current) - carried]
                cues.append(Cue(kept[0].start_s, kept[-1].end_s, written(kept)))
                current = current[len(kept):]
        current.append(word)
    if current:
        cues.append(Cue(current[0].start_s, current[-1].end_s, written(current)))
    return cues


def _pieces(word: Word, limit: int) -> list[Word]:
    """A word longer than a cue's width (a URL, a string of letters) in pieces that fit, its time
    shared by their lengths: a 3,000-letter word was one cue of 3,000 characters."""
    if len(word.text) <= limit:
        return [word]
    parts = [word.text[i:i + limit] for i in range(0, len(word.text), limit)]
    step = (word.end_s - word.start_s) / len(word.text)
    return [Word(part, word.start_s + i * limit * step, word.start_s + (i * limit + len(part)) * step)
            for i, part in enumerate(parts)]


def unspaced(text: str) -> bool:
    """Written without spaces between words (Chinese, Japanese)."""
    from .language import written_unspaced

    return any(written_unspaced(c) for c in text)


def _lines(tokens: Sequence[str], limit: int, joiner: str) -> list[str]:
    """Tokens packed into lines of at most `limit` characters, a sentence's end ending its line."""
    lines, line = [], ""
    for token in tokens:
        if line and len(line) + len(joiner) + len(token) > limit:
            lines.append(line)
            line = token
        else:
            line = f"{line}{joiner}{token}" if line else token
        if line.endswith(_SENTENCE_ENDS):
            lines.append(line)
            line = ""
    return lines + [line] if line else lines


def cues_from_text(text: str, start_s: float, end_s: float) -> list[Cue]:
    """No per-word labels: lay the text's lines over the speech by character count. Text written
    without spaces is cut after its punctuation, and within MAX_UNSPACED_CHARS characters."""
    if unspaced(text):
        import re

        clauses = re.findall(r"[^，。！？、；：,.!?;:\s]+[，。！？、；：,.!?;:]*", text)
        tokens = [c[i:i + MAX_UNSPACED_CHARS] for c in clauses for i in range(0, len(c), MAX_UNSPACED_CHARS)]
        lines = _lines(tokens, MAX_UNSPACED_CHARS, "")
    else:
        lines = _lines([t[i:i + MAX_CHARS] for t in text.split() for i in range(0, len(t), MAX_CHARS)], MAX_CHARS, " ")
    total = sum(len(x) for x in lines) or 1
    cues, t = [], start_s
    for x in lines:
        span = (end_s - start_s) * len(x) / total
        cues.append(Cue(t, t + span, x))
        t += span
    return cues


def make_cues(words: Sequence[Word], text: str) -> list[Cue]:
    if words and all(w.text for w in words):
        return cues_from_words(words)
    if words:
        return cues_from_text(text, words[0].start_s, words[-1].end_s)
    return []


def _timestamp(seconds: float) -> str:
    ms = int(round(max(seconds, 0.0) * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"


def to_srt(cues: Sequence[Cue]) -> str:
    blocks = [f"{i}\n{_timestamp(c.start_s)} --> {_timestamp(c.end_s)}\n{c.text}\n" for i, c in enumerate(cues, 1)]
    return "\n".join(blocks)


def to_vtt(cues: Sequence[Cue]) -> str:
    """WebVTT: a header, then cues with '.' before the milliseconds."""
    escape = lambda text: text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731
    blocks = [f"{_timestamp(c.start_s).replace(',', '.')} --> {_timestamp(c.end_s).replace(',', '.')}\n{escape(c.text)}\n"
              for c in cues]
    return "\n".join(["WEBVTT\n", *blocks])
