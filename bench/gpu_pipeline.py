"""The whole pipeline on a CUDA GPU with large random-init models of real architectures.

    python bench/gpu_pipeline.py build DIR        # models + DIR/gpu.toml (a preset that points at them)
    python bench/gpu_pipeline.py run DIR [--lengths 30,150] [--out FILE]

build: whisper-large-v3 in openai-whisper's .pt format (fp16), a Qwen2.5-7B-shaped LLM folder
(bf16 safetensors) with a word-level tokenizer of 152064 pronounceable pseudo-words (random weights
then say sayable things), and a Coqui VITS folder of the released VCTK shape (109 speakers).
Random weights say random things; whisper's output head is set to say "hello" whatever it hears,
so its transcript, and the LLM's prompt, grow with the audio.

run: for each audio length, `talker render --audio X --reply` in its own process (the CLI, as
users run it): audio -> ASR -> LLM -> TTS -> alignment -> visemes -> render -> MP4. Prints each
stage's seconds and the VRAM ledger (planned vs measured peak, device allocations after the
reservation, retries, OOMs) and writes them as JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GIB = 2**30
VCTK_SPEAKERS = [f"p{n}" for n in range(225, 225 + 109)]
WHISPER_LARGE_V3 = dict(n_mels=128, n_audio_ctx=1500, n_audio_state=1280, n_audio_head=20, n_audio_layer=32,
                        n_vocab=51866, n_text_ctx=448, n_text_state=1280, n_text_head=20, n_text_layer=32)
QWEN_7B = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
               num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768)


def build_whisper(path: Path, shape: dict = WHISPER_LARGE_V3, device: str = "cuda") -> None:
    import torch
    from whisper.model import ModelDimensions, Whisper
    from whisper.tokenizer import get_tokenizer

    dims = ModelDimensions(**shape)
    torch.manual_seed(0)
    with torch.device(device):
        model = Whisper(dims)
    hello = get_tokenizer(multilingual=True, num_languages=100).encode(" hello")[0]
    with torch.no_grad():
        model.decoder.positional_embedding.normal_(0.0, 0.02)  # torch.empty in openai-whisper
        embedding = model.decoder.token_embedding.weight  # logits = ln(x) @ E.T: favour one row
        embedding[hello] *= 10
        model.decoder.ln.weight.zero_()
        model.decoder.ln.bias.copy_(embedding[hello] / embedding[hello].norm())
    state = {k: v.half().cpu() for k, v in model.state_dict().items()}
    torch.save({"dims": dims.__dict__, "model_state_dict": state}, path)


def pseudo_words(count: int) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    return ["".join(p) for p in itertools.islice(itertools.product(syllables, repeat=3), count)]


def build_llm(folder: Path, shape: dict = QWEN_7B, device: str = "cuda") -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    vocab_size = shape["vocab_size"]
    # A byte-level BPE, as Qwen's, learnt from pronounceable pseudo-words and "hello" (whisper's
    # transcript, so the LLM's prompt grows with the audio): random weights then say sayable things.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    words = pseudo_words(200_000)
    tok.train_from_iterator([" hello" * 100] + [" ".join(words[i:i + 1000]) for i in range(0, len(words), 1000)], trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }} {{ m['content'] }}<|im_end|> {% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant {% endif %}")
    config = Qwen2Config(**shape, tie_word_embeddings=False, eos_token_id=tok.token_to_id("<|im_end|>"), pad_token_id=0)
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def build(folder: Path) -> None:
    from tests.model_builders import save_coqui_vits

    folder.mkdir(parents=True, exist_ok=True)
    # Models already there are kept: a second build on the same machine only adds what is missing.
    for name, make, done in (("whisper-large-v3-random.pt", build_whisper, "whisper-large-v3-random.pt"),
                             ("qwen2.5-7b-random", build_llm, "qwen2.5-7b-random/tokenizer.json")):
        if (folder / done).exists():  # the tokenizer is saved last
            continue
        started = time.perf_counter()
        make(folder / name)
        print(f"built {name} in {time.perf_counter() - started:.1f} s", flush=True)
    if not (folder / "vits-vctk-random" / "config.json").exists():
        save_coqui_vits(folder / "vits-vctk-random", speakers=VCTK_SPEAKERS)  # the released VCTK shapes
    write_presets(folder)


def write_presets(folder: Path) -> None:
    """gpu.toml for the pipeline runs; gpu-batch.toml, with short replies and small frames, for bench/batch.py."""
    for name, new_tokens, side in (("gpu.toml", 160, 512), ("gpu-batch.toml", 24, 384)):
        (folder / name).write_text(f"""[asr]
backend = "openai-whisper"
model = "{folder / 'whisper-large-v3-random.pt'}"
device = "cuda"

[llm]
backend = "transformers"
model = "{folder / 'qwen2.5-7b-random'}"
device = "cuda"
dtype = "bfloat16"
max_new_tokens = {new_tokens}

[tts]
backend = "coqui"
voice = "{folder / 'vits-vctk-random'}"
speaker_name = "p225"
device = "cuda"

[render]
max_side = {side}
""")


def long_audio(source: Path, seconds: float, target: Path) -> None:
    with wave.open(str(source)) as w:
        params, frames = w.getparams(), w.readframes(w.getnframes())
    repeats = int(seconds * params.framerate * params.sampwidth * params.nchannels // len(frames)) + 1
    data = (frames * repeats)[: int(seconds * params.framerate) * params.sampwidth * params.nchannels]
    with wave.open(str(target), "wb") as w:
        w.setparams(params)
        w.writeframes(data)


def run(folder: Path, lengths: list[float], out: Path) -> None:
    results = []
    for seconds in lengths:
        audio = folder / f"speech-{seconds:.0f}s.wav"
        long_audio(ROOT / "samples" / "speech.wav", seconds, audio)
        video = folder / f"talk-{seconds:.0f}s.mp4"
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "talker_cli", "render", "--photo", str(ROOT / "samples" / "face.png"),
             "--audio", str(audio), "--reply", "--preset", str(folder / "gpu.toml"), "-o", str(video), "--json", "--quiet", "--force"],
            capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print(f"{seconds:.0f} s audio: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}", flush=True)
            results.append({"audio_s": seconds, "exit": proc.returncode, "stderr": proc.stderr[-4000:]})
            continue
        manifest = json.loads(proc.stdout)
        results.append({"audio_s": seconds, "exit": 0, "wall_s": round(wall, 1), "manifest": manifest})
        print(f"{seconds:.0f} s audio: exit 0 in {wall:.1f} s, video {manifest['video']['duration_s']:.1f} s", flush=True)
    out.write_text(json.dumps(results, indent=1))
    print_tables(results)


def print_tables(results: list[dict]) -> None:
    print("\n| audio s | stage | device | seconds | planned GiB | peak allocated GiB | peak reserved GiB "
          "| device allocs | retries | OOMs | planner error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for result in results:
        for stage in result.get("manifest", {}).get("stages", []):
            row = (stage.get("details") or {}).get("vram")
            if not stage["ran"]:
                continue
            cells = ["-"] * 7
            if row:
                error = row.get("planner_error")
                cells = [f"{row['planned_bytes'] / GIB:.2f}", f"{row['peak_allocated_bytes'] / GIB:.2f}",
                         f"{row['peak_reserved_bytes'] / GIB:.2f}", str(row["device_allocs"]), str(row["alloc_retries"]),
                         str(row["ooms"]), "-" if error is None else f"{100 * error:+.1f}%"]
            print(f"| {result['audio_s']:.0f} | {stage['name']} | {stage['device']} | {stage['seconds']:.2f} | "
                  + " | ".join(cells) + " |")
    for result in results:
        if "manifest" in result:
            m = result["manifest"]
            print(f"\n{result['audio_s']:.0f} s audio: wall {result['wall_s']} s, video {m['video']['duration_s']:.1f} s, "
                  f"spoken {len(m['spoken_text'].split())} words")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["build", "run"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--lengths", default="30,150", help="audio lengths in seconds, comma-separated")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "gpu-pipeline-h200.json")
    args = parser.parse_args()
    if args.action == "build":
        build(args.folder.resolve())
    else:
        run(args.folder.resolve(), [float(s) for s in args.lengths.split(",")], args.out)


if __name__ == "__main__":
    main()
