"""How long the voices take to load and to speak, and the CPU seconds they take, with onnxruntime's
default session (its graph optimized at load, its threads spinning while they wait) and with talker's
(voices/sessions.py: neither), alternating in one process.

    python bench/voice_load.py [--repeats 3] [--seconds 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENGLISH = ("The quick brown fox jumps over the lazy dog, and then it runs far away into the woods. "
           "Nobody saw where it went, but everyone heard it singing by the river at night. ")
MANDARIN = "今天天气很好，我们一起去公园散步吧。春天来了，花儿都开了，小鸟在树上唱歌。"


def timed_engine(language: str, talkers: bool):
    """A voice loaded with talker's session or onnxruntime's default one, and its load's seconds."""
    import onnxruntime

    from talker_cli.config import TtsConfig
    from talker_cli.voices import kokoro_tts, sessions, tts

    def default_session(model):
        return onnxruntime.InferenceSession(str(model) if isinstance(model, Path) else model,
                                            providers=["CPUExecutionProvider"])

    for module in (tts, kokoro_tts):
        module.cpu_session = sessions.cpu_session if talkers else default_session
    engine = tts.make_tts(TtsConfig(), language)
    started = time.perf_counter()
    engine.load()
    return engine, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="about this much English speech")
    args = parser.parse_args()
    from talker_cli.voices.kokoro_tts import installed as kokoro_installed

    english = ENGLISH * max(1, round(args.seconds / 10))
    cases = [("en", english)] + ([("zh", MANDARIN)] if kokoro_installed() else [])
    print("| voice | session | load s | speak s | speak CPU s | speech s | load + speak / default's | CPU / default's |")
    print("|---|---|---|---|---|---|---|---|")
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    for language, text in cases:
        figures = {False: ([], [], []), True: ([], [], [])}  # loads, speaking, its CPU seconds
        for _ in range(args.repeats):
            for talkers in (False, True):
                engine, load_s = timed_engine(language, talkers)
                started, cpu = time.perf_counter(), time.process_time()
                speech = engine.synthesize(text)
                figures[talkers][0].append(load_s)
                figures[talkers][1].append(time.perf_counter() - started)
                figures[talkers][2].append(time.process_time() - cpu)
                engine.unload()
        whole = {k: median(v[0]) + median(v[1]) for k, v in figures.items()}
        for talkers in (False, True):
            loads, speaks, cpus = figures[talkers]
            print(f"| {type(engine).__name__} ({language}) | {'talker' if talkers else 'default'} | {median(loads):.3f} | "
                  f"{median(speaks):.3f} | {median(cpus):.2f} | {len(speech.samples) / speech.sample_rate:.1f} | "
                  f"{whole[talkers] / whole[False]:.3f} | {median(cpus) / median(figures[False][2]):.3f} |")


if __name__ == "__main__":
    main()
