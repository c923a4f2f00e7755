"""Languages benchmark: each language rendered with its default voice, then heard back.

For three sentences of each language: `talker render` with the language's default voice writes an MP4; its own audio
is transcribed by the multilingual ASR (Whisper base) in that language and scored against the
input text (character error rate, spaces and punctuation left out; and the reading error rate, the
same over units of sound: pinyin syllables with tones for Mandarin, whichever characters wrote them,
the kana of the reading for Japanese); the same audio, fed back as a recording, is aligned as
`talker render --audio` would align it and its phone boundaries are compared with the voice's own
phone timings (fraction within 25 ms). Error rates are the mean over the sentences, boundaries are
counted over all three. Each sentence's language is also decided from its text alone, as a render
without --language decides it. Prints one table.

    python bench/languages.py [--json]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SENTENCES = {
    "zh": ["今天天气很好，我们一起去公园散步吧。", "我喜欢在周末看书和喝茶。", "这个城市的交通非常方便。"],
    # Written as Japanese is written, kanji and kana (Whisper writes what it hears so).
    "ja": ["こんにちは、私は話す顔です。", "今日はとてもいい天気ですね。", "駅まで歩いて10分です。"],
    "es": ["Buenos días, me llamo Pablo y vivo en Madrid.", "Mañana vamos a la playa con mis amigos.",
           "El tren sale a las ocho de la mañana."],
    "de": ["Guten Morgen, ich wohne in Berlin und arbeite gern.", "Das Wetter ist heute sehr schön.",
           "Wir fahren morgen mit dem Zug nach Hamburg."],
    "ru": ["Доброе утро, меня зовут Иван, я живу в Москве.", "Сегодня хорошая погода, пойдём гулять.",
           "Я люблю читать книги вечером."],
}


def letters(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def cer(reference: str, hypothesis: str) -> float:
    return edit_rate(letters(reference), letters(hypothesis))


def reading(text: str, code: str) -> list[str]:
    """What the text says, as units of sound: Mandarin as pinyin syllables with tones (whichever
    characters, simplified or traditional, wrote them), Japanese as the kana of its reading (わ
    heard where the text writes the particle は), other languages as their letters."""
    if code == "zh":
        from pypinyin import Style, lazy_pinyin

        return [s for s in lazy_pinyin(letters(text), style=Style.TONE3, neutral_tone_with_five=True) if s.isalnum()]
    if code == "ja":
        from talker_cli.voices.espeak_tts import to_kana

        return list(letters(to_kana(text)))
    return list(letters(text))


def edit_rate(a, b) -> float:
    """Edit distance between two sequences over the first one's length."""
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1] / max(len(a), 1)


def voice_timings(code: str, text: str) -> list:
    """The voice's own phone timings of the text, in a fresh process as the render's were: espeak-ng
    keeps some state across voices (the first text after another language's pauses longer)."""
    script = ("import pickle, sys\nfrom talker_cli.config import TtsConfig\nfrom talker_cli.voices.tts import make_tts\n"
              f"voice = make_tts(TtsConfig(), {code!r})\nvoice.load()\n"
              f"sys.stdout.buffer.write(pickle.dumps(list(voice.synthesize({text!r}).native_phones)))")
    return pickle.loads(subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from lipsync import boundary_errors

    from talker_cli.aligners.alignment import EspeakWarpAligner
    from talker_cli.artifacts import Speech
    from talker_cli.listening.asr import ASR_RATE, make_asr
    from talker_cli.audio_io import decode_audio
    from talker_cli.config import AsrConfig
    from talker_cli.language import decide_language

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for code, texts in SENTENCES.items():
            asr = make_asr(AsrConfig(), code)
            asr.load()
            aligner = EspeakWarpAligner(code)
            aligner.load()
            cers, readings, heard_texts, errors, missed, seconds, audio_s = [], [], [], [], 0, 0.0, 0.0
            for k, text in enumerate(texts):
                out = Path(folder) / f"{code}{k}.mp4"
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "talker_cli", "render", "--photo", str(ROOT / "samples" / "face.png"),
                                "--text", text, "--language", code, "-o", str(out), "-q", "--force"], check=True)
                seconds += time.perf_counter() - started
                manifest = json.loads(out.with_suffix(".json").read_text())
                audio_s += manifest["video"]["duration_s"]
                heard = Speech(decode_audio(out, ASR_RATE), ASR_RATE, "recording", source_path=out)
                transcript = asr.transcribe(heard)
                track = aligner.align(heard, transcript.text, transcript.words)
                e, m = boundary_errors(voice_timings(code, text), list(track.phones))
                errors += e
                missed += m
                cers.append(cer(text, transcript.text))
                readings.append(edit_rate(reading(text, code), reading(transcript.text, code)))
                heard_texts.append(transcript.text)
            asr.unload()
            aligner.unload()
            within = sum(abs(e) <= 0.025 for e in errors) / max(len(errors) + missed, 1)
            rows.append({"language": code, "voice": manifest["stages"][5]["model"], "cer": round(sum(cers) / len(cers), 3),
                         "reading_error_rate": round(sum(readings) / len(readings), 3),
                         "heard": heard_texts, "told_from_text": sum(decide_language(t, "auto")[0] == code for t in texts),
                         "boundary_within_25ms": round(within, 3), "boundaries": len(errors) + missed,
                         "seconds_per_audio_second": round(seconds / audio_s, 3)})
            print(json.dumps(rows[-1], ensure_ascii=False), file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    print("| language | told from the text | voice | CER of the MP4's audio | reading error rate | boundaries within 25 ms "
          "| s per audio s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['language']} | {r['told_from_text']}/{len(SENTENCES[r['language']])} | {r['voice']} | {r['cer']} "
              f"| {r['reading_error_rate']} | {r['boundary_within_25ms']} | {r['seconds_per_audio_second']} |")


if __name__ == "__main__":
    main()
