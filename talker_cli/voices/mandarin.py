"""How a Mandarin text is read: numbers as they are said, then words (jieba) and their pinyin
(pypinyin's phrase readings), with the polyphones pypinyin and misaki read wrong in context put right.

Measured on everyday sentences (bench/mandarin_voices.py): 调高 was read diào gāo, 还我 hái wǒ,
很长 hěn zhǎng, 你得早点 nǐ dé, 7:15 qī : shíwǔ, 2支笔 èr zhī. The rules below say where each
reading holds; every other character keeps pypinyin's reading of its word.
"""

from __future__ import annotations

import logging
import re

HAN = r"\u4e00-\u9fff"
# Measure words before which 2 is said liǎng (两个, 两支), not èr
MEASURES = "个本支只张条件位次天点块杯斤瓶双把台辆家种页名岁座口门节匹头间场部首份"
CHINESE_DIGITS = "零一二三四五六七八九十百千万亿点"
PRONOUNS = ("我们", "你们", "他们", "她们", "咱们", "大家", "我", "你", "他", "她", "它", "咱", "您")


def spoken_numbers(text: str) -> str:
    """Digits written out in Hanzi as they are said: 7:15 qī diǎn shíwǔ fēn, 2支 liǎng zhī, then the
    rest by cn2an (a year digit by digit, 15% bǎi fēn zhī shíwǔ, 32.5 sānshí'èr diǎn wǔ)."""
    import cn2an

    def clock(match: re.Match) -> str:
        hour, minute = int(match[1]), int(match[2])
        return f"{hour}点" + ("" if minute == 0 else f"零{minute}分" if minute < 10 else f"{minute}分")

    text = re.sub(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])", clock, text)
    text = cn2an.transform(text, "an2cn")
    # a lone 二 (not 十二, 二十, 第二) before a measure word is 两
    return re.sub(rf"(?<![第{CHINESE_DIGITS}])二(?=[{MEASURES}])", "两", text)


def _syllables(word: str) -> list[str]:
    from pypinyin import Style, lazy_pinyin

    return lazy_pinyin(word, style=Style.TONE3, neutral_tone_with_five=True, errors=lambda chars: list(chars))


def _in_context(words: list[str], readings: list[list[str]]) -> None:
    """Put the polyphones right where the words around them decide (in place)."""
    chars = [(w, k) for w, word in enumerate(words) for k in range(len(word))]
    text = "".join(words)
    for i, (w, k) in enumerate(chars):
        char, before, after = text[i], text[:i], text[i + 1:]
        reading = None
        if char == "调" and re.match(r"[高低大小亮暗快慢好准匀温音成到回]", after) and not before.endswith("声"):
            reading = "tiao2"  # adjust: 调高, 调低, 调好, 调到
        elif char == "还" and re.match(r"(我|你|他|她|它|您|钱|书|债|款|账|清|给)", after) and not re.match(
                r"(你好|我好|他好|她好)", after):
            reading = "huan2"  # give back: 还我, 还钱, 还给
        elif char == "长" and re.search(r"(很|太|真|好|多|更|最|不|挺|这么|那么|非常|特别|比较)$", before) and not re.match(
                r"[得大成出高]", after):
            reading = "chang2"  # long: 很长, 太长了 (长得, 长大, 长高 are growing)
        elif char == "得" and len(words[w]) == 1 and before.endswith(PRONOUNS) and not re.match(
                r"[了到出知意分奖病手罪失逞益]", after):
            reading = "dei3"  # must: 你得早点, 我得走了
        elif char == "得" and len(words[w]) == 1 and not re.match(r"[了到出知意分奖病手罪失逞益]", after) and re.search(
                rf"[{HAN}]$", before):
            reading = "de5"  # the complement particle: 长得高, 跑得快
        if reading is not None:
            readings[w][k] = reading


def word_splitter():
    """jieba, quiet and with its dictionary cache in talker's own cache folder: its default is a fixed
    name in the shared temporary folder, which it loads."""
    import jieba

    from ..offline import cache_root

    jieba.setLogLevel(logging.WARNING)
    folder = cache_root() / "jieba"
    folder.mkdir(parents=True, exist_ok=True)
    jieba.dt.tmp_dir = str(folder)
    return jieba


def words_with_pinyin(text: str) -> list[tuple[str, list[str]]]:
    """A Han text (no digits, no Latin letters: spoken_numbers first) as jieba's words, each with one
    pinyin syllable per character (tone numbers, neutral 5); characters that are not Han are words
    of their own with themselves as their reading."""
    words = [w for w in word_splitter().lcut(text, cut_all=False) if w]
    readings = [_syllables(w) if re.fullmatch(f"[{HAN}]+", w) else [w] for w in words]
    for w, (word, reading) in enumerate(zip(words, readings)):
        if re.fullmatch(f"[{HAN}]+", word) and len(reading) != len(word):
            readings[w] = [s for c in word for s in _syllables(c)]  # one syllable per character, always
    _in_context(words, readings)
    return list(zip(words, readings))


def to_pinyin(text: str) -> str:
    """Hanzi -> pinyin syllables with tone numbers (neutral tone 5), numbers as said; other characters
    kept (espeak-ng's cmn-latn-pinyin voice reads this)."""
    syllables = [s for _, reading in words_with_pinyin(spoken_numbers(text)) for s in reading]
    return re.sub(r"\s+", " ", " ".join(syllables)).strip()
