"""How long the voices take to load and to speak, with onnxruntime's graph optimizations at load
(its default) and without them (talker's, voices/sessions.py), alternating in one process.

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


def timed_engine(language: str, optimized: bool):
    """A voice loaded with or without the graph optimizations, and its load's seconds."""
    import onnxruntime

    from talker_cli.config import TtsConfig
    from talker_cli.voices import kokoro_tts, sessions, tts

    def session(model):
        options = onnxruntime.SessionOptions()
        if not optimized:
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        return onnxruntime.InferenceSession(str(model) if isinstance(model, Path) else model, sess_options=options,
                                            providers=["CPUExecutionProvider"])

    for module in (sessions, tts, kokoro_tts):
        module.cpu_session = session
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
    print("| voice | graph optimized at load | load s (median) | speak s (median) | speech s | load + speak / optimized's |")
    print("|---|---|---|---|---|---|")
    for language, text in cases:
        figures = {True: ([], []), False: ([], [])}
        for _ in range(args.repeats):
            for optimized in (True, False):
                engine, load_s = timed_engine(language, optimized)
                started = time.perf_counter()
                speech = engine.synthesize(text)
                figures[optimized][0].append(load_s)
                figures[optimized][1].append(time.perf_counter() - started)
                engine.unload()
        median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        whole = {k: median(v[0]) + median(v[1]) for k, v in figures.items()}
        for optimized in (True, False):
            loads, speaks = figures[optimized]
            print(f"| {type(engine).__name__} ({language}) | {'yes' if optimized else 'no'} | {median(loads):.3f} | "
                  f"{median(speaks):.3f} | {len(speech.samples) / speech.sample_rate:.1f} | {whole[optimized] / whole[True]:.3f} |")


if __name__ == "__main__":
    main()
