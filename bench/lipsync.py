"""Lip-sync benchmark on hand-labelled speech: the `--audio` analysis path against TIMIT-style labels.

For every NAME.wav in CORPUS_DIR with NAME.phn (phone boundaries in samples, TIMIT's 61 phones),
NAME.wrd and NAME.txt beside it, runs what `talker render --audio` runs before drawing (ASR,
alignment, visemes, blendshapes) and scores it against the labels:

  boundary_within_25ms    phone boundaries within 25 ms of the labelled ones (TIMIT folded to 39
                          phones, stop closure and release merged, an affricate's closure
                          joined to it; the two phone strings are paired
                          by edit distance, and a labelled boundary with no partner counts as a miss)
  median_boundary_ms      median |error| of the paired boundaries; bias_ms their signed mean
  viseme_frame_agreement  10 ms frames whose final viseme equals the labels' phones through the
                          project's own phone->viseme table
  closure_recall          video frames inside a labelled P/B/M that the track shows closed
  closures_missed         labelled P/B/M with no closed video frame
  asr_wer                 word error rate of the transcript against NAME.txt
  onset_lead_ms           median time the mouth starts moving before the first labelled sound
  release_lag_ms          median time it still moves after the last one (both at video frames)
  moving_at_first_frame   utterances whose mouth is already moving in the first video frame

    python bench/lipsync.py CORPUS_DIR [--json] [--preset cpu] [--limit N] [--aligner espeak-warp]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from talker_cli.artifacts import Phone, Speech, VisemeSegment  # noqa: E402
from talker_cli.face.visemes import phones_to_segments  # noqa: E402

TIMIT_RATE = 16000
CLOSED = 0.5  # mouthClose at or above this is a closed mouth
# TIMIT's 61 phones -> ARPAbet (the project's alphabet); closures are handled before this.
TIMIT_TO_ARPABET = {
    "ax": "AH", "ax-h": "AH", "ix": "IH", "axr": "ER", "ux": "UW", "hv": "HH", "el": "L", "em": "M",
    "en": "N", "nx": "N", "eng": "NG", "dx": "D", "h#": "SIL", "pau": "SIL", "epi": "SIL",
}
CLOSURES = {"bcl": "B", "dcl": "D", "gcl": "G", "pcl": "P", "tcl": "T", "kcl": "K"}
# An affricate is a stop closed and released as a fricative: TIMIT labels its closure with the stop's
# ("tcl ch", "dcl jh"), while a dictionary's CH and JH include it.
AFFRICATES = {"CH": "T", "JH": "D"}
# The 39-phone folding of Lee and Hon (1989) on top of ARPAbet, for pairing the two strings.
FOLD_39 = {"AO": "AA", "ZH": "SH"}


def read_timit_phones(path: Path) -> list[Phone]:
    """A .phn file -> ARPAbet phones, each closure merged with its release (or standing for it)."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    phones: list[Phone] = []
    for i, (a, b, label) in enumerate(rows):
        start, end = int(a) / TIMIT_RATE, int(b) / TIMIT_RATE
        if label == "q":  # glottal stop: no phone of its own in the 39 set; its time goes to the one before
            if phones:
                phones[-1] = Phone(phones[-1].label, phones[-1].start_s, end)
            continue
        if label in CLOSURES:
            stop = CLOSURES[label]
            phones.append(Phone(stop, start, end))
            continue
        arpabet = TIMIT_TO_ARPABET.get(label, label.upper())
        closed_as = AFFRICATES.get(arpabet, arpabet)  # the stop whose closure starts this phone
        if phones and i > 0 and rows[i - 1][2] in CLOSURES and CLOSURES[rows[i - 1][2]] == closed_as:
            phones[-1] = Phone(arpabet, phones[-1].start_s, end)  # the release joins its closure
            continue
        if phones and arpabet == "SIL" and phones[-1].label == "SIL":
            phones[-1] = Phone("SIL", phones[-1].start_s, end)
            continue
        phones.append(Phone(arpabet, start, end))
    return phones


def pair_phones(truth: list[str], found: list[str]) -> list[tuple[int, int]]:
    """Edit-distance alignment of two label strings: the (truth, found) index pairs it matches or substitutes."""
    n, m = len(truth), len(found)
    cost = np.zeros((n + 1, m + 1), dtype=np.int32)
    cost[:, 0] = np.arange(n + 1)
    cost[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            sub = cost[i - 1, j - 1] + (0 if truth[i - 1] == found[j - 1] else 1)
            cost[i, j] = min(sub, cost[i - 1, j] + 1, cost[i, j - 1] + 1)
    pairs, i, j = [], n, m
    while i > 0 and j > 0:
        if cost[i, j] == cost[i - 1, j - 1] + (0 if truth[i - 1] == found[j - 1] else 1):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif cost[i, j] == cost[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def fold(label: str) -> str:
    return FOLD_39.get(label, label)


def boundary_errors(truth: list[Phone], found: list[Phone]) -> tuple[list[float], int]:
    """Signed errors (found - truth, seconds) of the paired boundaries, and the labelled boundaries missed."""
    found = [p for p in found if p.end_s > p.start_s]
    pairs = dict(pair_phones([fold(p.label) for p in truth], [fold(p.label) for p in found]))
    errors, missed = [], 0
    for i in range(1, len(truth)):  # every labelled boundary: the start of each phone but the first
        if i in pairs and pairs[i] > 0:
            errors.append(found[pairs[i]].start_s - truth[i].start_s)
        else:
            missed += 1
    return errors, missed


def frame_labels(segments: list[VisemeSegment], duration_s: float, step_s: float = 0.01) -> list[str]:
    centres = (np.arange(int(duration_s / step_s)) + 0.5) * step_s
    starts = np.array([s.start_s for s in segments])
    labels = []
    for t in centres:
        k = int(np.searchsorted(starts, t, side="right")) - 1
        labels.append(segments[k].viseme if k >= 0 and t < segments[k].end_s else "sil")
    return labels


def closure_scores(truth: list[Phone], mouth_close: np.ndarray, fps: int) -> tuple[int, int, int]:
    """(frames inside labelled closures, of them shown closed, closures with no closed frame)."""
    inside = shown = missed = 0
    for phone in truth:
        if phone.label not in ("P", "B", "M"):
            continue
        centres = [k for k in range(len(mouth_close)) if phone.start_s <= (k + 0.5) / fps < phone.end_s]
        touching = range(int(phone.start_s * fps), min(int(np.ceil(phone.end_s * fps)), len(mouth_close)))
        inside += len(centres)
        shown += sum(mouth_close[k] >= CLOSED for k in centres)
        missed += not any(mouth_close[k] >= CLOSED for k in touching)
    return inside, shown, missed


MOVING = 0.05  # a mouth weight above this is a mouth in motion


def edge_offsets(truth: list[Phone], mouth: np.ndarray, fps: int) -> tuple[float, float] | None:
    """(seconds the mouth moves before the first labelled sound, seconds it moves after the last)."""
    spoken = [p for p in truth if p.label != "SIL"]
    moving = np.flatnonzero(mouth.max(axis=1) > MOVING)
    if not spoken or not moving.size:
        return None
    return spoken[0].start_s - moving[0] / fps, (moving[-1] + 1) / fps - spoken[-1].end_s


def words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def word_errors(reference: list[str], hypothesis: list[str]) -> int:
    d = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hypothesis, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[-1]


def analyze(path: Path, config, asr, aligner) -> dict:
    """The --audio path up to the blendshapes, as the stages run it."""
    from talker_cli.audio_io import decode_audio
    from talker_cli.face.blendshapes import INDEX, blendshape_track
    from talker_cli.face.visemes import viseme_track

    samples = decode_audio(path, TIMIT_RATE)
    speech = Speech(samples, TIMIT_RATE, "recording", source_path=path)
    transcript = asr.transcribe(speech)
    track = aligner.align(speech, transcript.text, transcript.words)
    segments = viseme_track(track.phones, config.visemes)
    weights = blendshape_track(segments, speech.duration_s, config.visemes, config.render)
    return {"transcript": transcript.text, "track": track, "segments": segments, "duration_s": speech.duration_s,
            "mouth_close": weights.weights[:, INDEX["mouthClose"]], "fps": weights.fps,
            "mouth": weights.weights[:, [i for n, i in INDEX.items() if n.startswith(("jaw", "mouth"))]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--limit", type=int, default=0, help="score only the first N utterances")
    parser.add_argument("--aligner", choices=("pocketsphinx", "espeak-warp"), default="pocketsphinx",
                        help="espeak-warp: the path of languages without an acoustic model, here on English speech")
    args = parser.parse_args()

    from talker_cli.aligners.alignment import EspeakWarpAligner, PocketsphinxAligner
    from talker_cli.listening.asr import make_asr
    from talker_cli.config import load_config

    config = load_config(args.preset, {})
    names = sorted(p.with_suffix("") for p in args.corpus.glob("*.wav")
                   if all(p.with_suffix(s).is_file() for s in (".phn", ".wrd", ".txt")))
    if args.limit:
        names = names[: args.limit]
    if not names:
        sys.exit(f"no NAME.wav with NAME.phn, NAME.wrd and NAME.txt in {args.corpus}")
    asr = make_asr(config.asr)
    asr.load()
    aligner = PocketsphinxAligner() if args.aligner == "pocketsphinx" else EspeakWarpAligner("en-us")
    aligner.load()

    errors, missed_boundaries, agree, frames = [], 0, 0, 0
    closure_frames = closure_shown = closures_missed = 0
    word_err = ref_words = 0
    failures, audio_s, busy_s = [], 0.0, 0.0
    sources: Counter[str] = Counter()
    edges, moving_at_start = [], 0
    for name in names:
        truth = read_timit_phones(name.with_suffix(".phn"))
        reference = words_of(name.with_suffix(".txt").read_text().split(None, 2)[2])
        start = time.perf_counter()
        try:
            result = analyze(name.with_suffix(".wav"), config, asr, aligner)
        except Exception as error:  # a benchmark records failures and goes on
            failures.append(f"{name.name}: {type(error).__name__}: {error}")
            continue
        busy_s += time.perf_counter() - start
        audio_s += result["duration_s"]
        sources.update(s.source for s in result["track"].spans)
        e, m = boundary_errors(truth, list(result["track"].phones))
        errors += e
        missed_boundaries += m
        found = frame_labels(result["segments"], result["duration_s"])
        wanted = frame_labels(phones_to_segments(truth), result["duration_s"])
        agree += sum(a == b for a, b in zip(found, wanted))
        frames += len(wanted)
        inside, shown, missed = closure_scores(truth, result["mouth_close"], result["fps"])
        closure_frames += inside
        closure_shown += shown
        closures_missed += missed
        edges += [edge_offsets(truth, result["mouth"], result["fps"])]
        moving_at_start += int(result["mouth"][0].max() > MOVING)
        word_err += word_errors(reference, words_of(result["transcript"]))
        ref_words += len(reference)
    aligner.unload()
    asr.unload()

    abs_ms = np.abs(np.array(errors)) * 1000 if errors else np.array([np.nan])
    boundaries = len(errors) + missed_boundaries
    report = {
        "utterances": len(names), "failures": len(failures),
        "boundary_within_25ms": round(float((abs_ms <= 25).sum() / max(boundaries, 1)), 4),
        "median_boundary_ms": round(float(np.median(abs_ms)), 1),
        "bias_ms": round(float(np.mean(errors) * 1000), 1) if errors else None,
        "viseme_frame_agreement": round(agree / max(frames, 1), 4),
        "closure_recall": round(closure_shown / max(closure_frames, 1), 4),
        "closures_missed": closures_missed,
        "asr_wer": round(word_err / max(ref_words, 1), 4),
        "onset_lead_ms": round(float(np.median([e[0] for e in edges if e])) * 1000, 1),
        "release_lag_ms": round(float(np.median([e[1] for e in edges if e])) * 1000, 1),
        "moving_at_first_frame": moving_at_start,
        "seconds_per_audio_second": round(busy_s / max(audio_s, 1e-9), 4),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "audio_s": round(audio_s, 1), "span_sources": dict(sources), "failed": failures,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"| {'figure':<24} | {'value':>10} |")
    print(f"|{'-' * 26}|{'-' * 12}|")
    for key, value in report.items():
        if key != "failed":
            print(f"| {key:<24} | {str(value):>10} |")
    for line in failures:
        print("failed:", line, file=sys.stderr)


if __name__ == "__main__":
    main()
