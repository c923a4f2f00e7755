"""Coqui VITS of the released VCTK shape (random-init) on cuda:0: the TTS stage's planned against
measured peak VRAM for texts whose sentences are 20 to 222 characters long. Needs a CUDA GPU and
coqui-tts.

    python bench/vits_lengths.py
"""

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCE = "This sentence is one of several and it goes on for a while, said on its own and then "


def main() -> None:
    from talker_cli.config import TalkerConfig
    from talker_cli.jobs.pipeline import run_job
    from talker_cli.jobs.stages import InputStage, Job, PreflightStage, TtsStage
    from tests.model_builders import save_coqui_vits

    folder = Path(tempfile.mkdtemp())
    voice = save_coqui_vits(folder / "vits", speakers=["p225", "p226"])
    config = TalkerConfig()
    config = replace(config, tts=replace(config.tts, backend="coqui", voice=str(voice), device="cuda:0"))
    print("| longest sentence (chars) | speech s | planned MiB | peak allocated MiB | planner error | device allocs |")
    print("|---|---|---|---|---|---|")
    for words in (4, 9, 18, 30, 50):
        sentence = " ".join((SENTENCE * 5).split()[:words])
        job = Job(photo=folder / "p.png", output=folder / "o.mp4", config=config, text=f"{sentence}. " * 3)
        manifest = run_job(job, [PreflightStage(), InputStage(), TtsStage()])
        row = next(s for s in manifest["stages"] if s["name"] == "tts")["details"]["vram"]
        print(f"| {len(sentence)} | {job.artifacts.speech.duration_s:.1f} | {row['planned_bytes'] / 2**20:.0f} | "
              f"{row['peak_allocated_bytes'] / 2**20:.0f} | {row['planner_error']:+.1%} | {row['device_allocs']} |", flush=True)


if __name__ == "__main__":
    main()
