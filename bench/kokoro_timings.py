"""How good Kokoro's own phone timings are as a truth, measured in English, where the acoustic
aligner is known: pocketsphinx agrees with TIMIT's hand labels on 0.818 of boundaries with a bias of
-0.3 ms (bench/lipsync.py). Kokoro (its Japanese voice, fed espeak-ng's English IPA) speaks each
NAME.txt sentence of CORPUS_DIR; its timings (moved DECODER_LEAD_FRAMES earlier, as talker moves
them) are compared with pocketsphinx's alignment of its sound. Prints one line: boundaries within
25 ms and the signed error's percentiles (aligned - Kokoro).

    python bench/kokoro_timings.py CORPUS_DIR [--limit N] [--lead FRAMES]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--lead", type=int, default=None, help="decoder lead in frames (default: talker's)")
    args = parser.parse_args()

    from lipsync import boundary_errors

    from talker_cli.voices import kokoro_tts
    from talker_cli.aligners.alignment import ALIGN_RATE, PocketsphinxAligner
    from talker_cli.artifacts import Speech
    from talker_cli.audio_io import resample
    from talker_cli.config import TtsConfig
    from talker_cli.voices.espeak_tts import ipa_of

    if args.lead is not None:
        kokoro_tts.DECODER_LEAD_FRAMES = args.lead
    voice = kokoro_tts.KokoroTts(TtsConfig(), "ja")
    voice.load()
    voice.g2p = lambda sentence: ipa_of(sentence, "en-us")
    aligner = PocketsphinxAligner()
    aligner.load()
    errors, missed = [], 0
    for path in sorted(args.corpus.glob("*.txt"))[: args.limit]:
        text = path.read_text().split(None, 2)[2].strip()  # TIMIT's .txt: first and last sample, then the text
        speech = voice.synthesize(text)
        heard = Speech(resample(speech.samples, speech.sample_rate, ALIGN_RATE), ALIGN_RATE, "recording")
        found, lost = boundary_errors(list(speech.native_phones), list(aligner.align(heard, text).phones))
        errors += found
        missed += lost
    ms = np.array(errors) * 1000
    within = float(np.sum(np.abs(ms) <= 25)) / max(len(ms) + missed, 1)
    p10, p25, p50, p75, p90 = np.percentile(ms, [10, 25, 50, 75, 90])
    print(f"lead {kokoro_tts.DECODER_LEAD_FRAMES} frames: {len(ms) + missed} boundaries, within 25 ms {within:.3f}, "
          f"aligned - Kokoro ms p10 {p10:.1f} p25 {p25:.1f} median {p50:.1f} p75 {p75:.1f} p90 {p90:.1f}")


if __name__ == "__main__":
    main()
