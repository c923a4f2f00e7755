"""Long recordings: the `--audio` analysis path (ASR, alignment, visemes, blendshapes) on one real
recording repeated to N minutes, each length in its own process so its peak RSS is its own.

Prints minutes, seconds, seconds per audio second, peak RSS and which alignment paths served.
Memory should stay flat and time grow linearly with length.

    python bench/long_recording.py [RECORDING] [--minutes 1,10,60] [--preset cpu] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RECORDING = ROOT.parent / "shared" / "speech" / "jfk.flac"

ONE_RUN = """
import json, resource, sys, time
from collections import Counter
import numpy as np
sys.path.insert(0, sys.argv[4])
from talker_cli.aligners.alignment import PocketsphinxAligner
from talker_cli.artifacts import Speech
from talker_cli.listening.asr import make_asr
from talker_cli.audio_io import decode_audio
from talker_cli.face.blendshapes import blendshape_track
from talker_cli.config import load_config
from talker_cli.face.visemes import viseme_track
config = load_config(sys.argv[3], {})
one = decode_audio(__import__("pathlib").Path(sys.argv[1]), 16000)
samples = np.tile(one, int(np.ceil(float(sys.argv[2]) * 60 * 16000 / len(one))))[: int(float(sys.argv[2]) * 60 * 16000)]
del one
speech = Speech(samples, 16000, "recording")
start = time.perf_counter()
asr = make_asr(config.asr)
asr.load()
transcript = asr.transcribe(speech)
asr.unload()
asr_s = time.perf_counter() - start
aligner = PocketsphinxAligner()
aligner.load()
track = aligner.align(speech, transcript.text, transcript.words)
aligner.unload()
weights = blendshape_track(viseme_track(track.phones, config.visemes), speech.duration_s, config.visemes, config.render)
seconds = time.perf_counter() - start
print(json.dumps({"minutes": float(sys.argv[2]), "seconds": round(seconds, 1), "asr_seconds": round(asr_s, 1),
                  "seconds_per_audio_second": round(seconds / speech.duration_s, 4),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "frames": weights.frame_count, "words": len(transcript.words),
                  "paths": dict(Counter(s.source for s in track.spans))}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording", nargs="?", type=Path, default=DEFAULT_RECORDING)
    parser.add_argument("--minutes", default="1,10,60")
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.recording.is_file():
        sys.exit(f"no recording at {args.recording}; pass one")
    rows = []
    for minutes in args.minutes.split(","):
        out = subprocess.run([sys.executable, "-c", ONE_RUN, str(args.recording), minutes, args.preset, str(ROOT)],
                             capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out))
        print(json.dumps(rows[-1]), file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| minutes | seconds | ASR seconds | s per audio s | peak RSS MiB | paths |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['minutes']:g} | {r['seconds']} | {r['asr_seconds']} | {r['seconds_per_audio_second']} "
              f"| {r['peak_rss_mib']} | {r['paths']} |")


if __name__ == "__main__":
    main()
