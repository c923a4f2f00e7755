"""VRAM benchmark on a CUDA GPU: four memory strategies side by side, and the planner's error.

Random-init models of real architectures (memory depends on shapes only): whisper-large-v3 (fp16),
a Qwen2.5-7B-shaped LLM (bf16) and a ~550M GPT-2-style TTS decoder (bf16), at three input lengths.
Strategies, each in its own process:
  a  all models resident at once
  b  staged (load, run, free in turn), cache kept
  c  staged, empty_cache() between stages
  d  talker: plan, one reservation through the caching allocator, stages in turn
Prints peak reserved bytes, their ratio to the largest stage's peak allocated bytes, device
allocations after the reservation, allocation retries and OOMs, and the planner's error per stage.

    python bench/vram.py                   # all modes, all lengths; writes bench/results/vram-h200.json
    python bench/vram.py --mode d --length short
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GIB = 2**30
LENGTHS = {
    # asr: 30 s windows and tokens per window; llm: prompt + new tokens; tts: text + audio-code tokens
    "short": {"asr_windows": 1, "asr_tokens": 32, "llm_prompt": 256, "llm_new": 16, "tts_prompt": 64, "tts_new": 64},
    "medium": {"asr_windows": 4, "asr_tokens": 48, "llm_prompt": 2048, "llm_new": 16, "tts_prompt": 512, "tts_new": 128},
    "long": {"asr_windows": 10, "asr_tokens": 64, "llm_prompt": 8192, "llm_new": 16, "tts_prompt": 2048, "tts_new": 256},
}
ASR_BATCH = 8  # windows decoded together


def configs():
    from transformers import GPT2Config, Qwen2Config, WhisperConfig

    whisper = WhisperConfig(
        vocab_size=51866, num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20, decoder_layers=32,
        decoder_attention_heads=20, d_model=1280, encoder_ffn_dim=5120, decoder_ffn_dim=5120,
        max_source_positions=1500, max_target_positions=448,
    )
    llm = Qwen2Config(
        vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768, tie_word_embeddings=False,
    )
    tts = GPT2Config(vocab_size=50257, n_positions=8192, n_embd=1280, n_layer=24, n_head=20)
    return {"asr": (whisper, "float16"), "llm": (llm, "bfloat16"), "tts": (tts, "bfloat16")}


def build(name, cfg, dtype):
    import torch
    from transformers import GPT2LMHeadModel, Qwen2ForCausalLM, WhisperForConditionalGeneration

    cls = {"asr": WhisperForConditionalGeneration, "llm": Qwen2ForCausalLM, "tts": GPT2LMHeadModel}[name]
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        with torch.device("cuda"):
            model = cls(cfg)
    finally:
        torch.set_default_dtype(torch.float32)
    model.eval()
    if hasattr(model, "generation_config"):
        model.generation_config.eos_token_id = None
        model.generation_config.pad_token_id = 0
    return model


def run_stage(name, model, size):
    import torch
    from transformers.modeling_outputs import BaseModelOutput

    with torch.inference_mode():
        if name == "asr":
            windows = size["asr_windows"]
            for start in range(0, windows, ASR_BATCH):
                b = min(ASR_BATCH, windows - start)
                features = torch.randn(b, 128, 3000, dtype=torch.float16, device="cuda")
                encoded = model.model.encoder(features).last_hidden_state
                del features
                ids = torch.full((b, 4), 50258, device="cuda")
                out = model(encoder_outputs=BaseModelOutput(last_hidden_state=encoded), decoder_input_ids=ids, use_cache=True)
                for _ in range(size["asr_tokens"]):
                    ids = out.logits[:, -1].float().argmax(-1, keepdim=True)
                    out = model(encoder_outputs=BaseModelOutput(last_hidden_state=encoded), decoder_input_ids=ids,
                                past_key_values=out.past_key_values, use_cache=True)
                del out, encoded, ids
        else:
            prompt, new = (size["llm_prompt"], size["llm_new"]) if name == "llm" else (size["tts_prompt"], size["tts_new"])
            ids = torch.randint(0, 1000, (1, prompt), device="cuda")
            output = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                                    do_sample=False)
            assert output.shape[1] == prompt + new
            del output, ids
        torch.cuda.synchronize()


def plans_for(size):
    from talker_cli.gpu.model_specs import meta_param_count, spec_from_config
    from talker_cli.gpu.vram_plan import Workload, plan_stage

    plans = {}
    for name, (cfg, dtype) in configs().items():
        d = cfg.to_dict()
        params, buffers = meta_param_count(d)
        spec = spec_from_config(d, params, dtype, name, buffers)
        if name == "asr":
            work = Workload(windows=size["asr_windows"], batch=ASR_BATCH, new_tokens=size["asr_tokens"])
        elif name == "llm":
            work = Workload(prompt_tokens=size["llm_prompt"], new_tokens=size["llm_new"], built_from_config=True)
        else:
            work = Workload(prompt_tokens=size["tts_prompt"], new_tokens=size["tts_new"], built_from_config=True)
        plans[name] = plan_stage(spec, work, name, "cuda:0")
    return plans


def stats():
    import torch

    return torch.cuda.memory_stats()


def measure_mode(mode, length):
    import torch

    size = LENGTHS[length]
    cfgs = configs()
    plans = plans_for(size)
    reservation = None
    torch.cuda.reset_peak_memory_stats()
    base = stats()
    after_reserve = None
    if mode == "d":
        from talker_cli.gpu.reservation import Reservation
        from talker_cli.gpu.vram_plan import reservation_bytes

        reservation = Reservation("cuda:0", reservation_bytes(list(plans.values())), cap_fraction=0.9)
        reservation.make()
        after_reserve = stats()
    stages = {}
    run_peak_reserved = 0
    started = time.perf_counter()
    resident = {}
    if mode == "a":
        for name, (cfg, dtype) in cfgs.items():
            resident[name] = build(name, cfg, dtype)
    for name, (cfg, dtype) in cfgs.items():
        if reservation:
            reservation.stage_begin(name, plans[name].peak_bytes)
        else:
            torch.cuda.reset_peak_memory_stats()
        before = stats()
        t = time.perf_counter()
        model = resident[name] if mode == "a" else build(name, cfg, dtype)
        run_stage(name, model, size)
        del model
        if mode != "a":
            gc.collect()
        s = stats()
        row = {
            "seconds": round(time.perf_counter() - t, 2),
            "peak_allocated": s["allocated_bytes.all.peak"],
            "peak_reserved": s["reserved_bytes.all.peak"],
            "planned": plans[name].peak_bytes,
            "device_allocs": s["num_device_alloc"] - before["num_device_alloc"],
            "retries": s["num_alloc_retries"] - before["num_alloc_retries"],
            "ooms": s["num_ooms"] - before["num_ooms"],
        }
        if mode == "a":  # weights of all three are resident: the stage's own peak is not separable
            row["peak_allocated"] = s["allocated_bytes.all.peak"]
        stages[name] = row
        print(f"[{mode} {length}] {name}: {row['seconds']} s, peak allocated {gib(row['peak_allocated'])} GiB, "
              f"planned {gib(row['planned'])} GiB", flush=True)
        run_peak_reserved = max(run_peak_reserved, s["reserved_bytes.all.peak"])
        if reservation:
            reservation.stage_end()
        if mode == "c":
            torch.cuda.empty_cache()
    resident.clear()
    gc.collect()
    end = stats()
    result = {
        "mode": mode, "length": length, "seconds": round(time.perf_counter() - started, 1),
        "peak_reserved": run_peak_reserved,
        "reserved_at_end": end["reserved_bytes.all.current"],
        "stages": stages,
        "device_allocs_after_reservation": (end["num_device_alloc"] - after_reserve["num_device_alloc"]) if after_reserve else None,
        "device_allocs_total": end["num_device_alloc"] - base["num_device_alloc"],
        "retries": end["num_alloc_retries"] - base["num_alloc_retries"],
        "ooms": end["num_ooms"] - base["num_ooms"],
        "reservation_bytes": reservation.bytes if reservation else None,
    }
    if reservation:
        reservation.release()
    torch.cuda.empty_cache()
    return result


def child(mode, lengths, out):
    results = []
    for length in lengths:
        results.append(measure_mode(mode, length))
        Path(out).write_text(json.dumps(results, indent=1))  # partial results survive a timeout


def gib(n):
    return f"{n / GIB:.2f}"


def report(results):
    # The largest stage's own peak comes from the staged runs (b), where one model is resident.
    largest = {}
    for r in results:
        if r["mode"] == "b":
            largest[r["length"]] = max(s["peak_allocated"] for s in r["stages"].values())
    print("| length | mode | peak reserved GiB | / largest stage peak allocated | device allocs after reservation | retries | OOMs |")
    print("|---|---|---|---|---|---|---|")
    names = {"a": "all resident", "b": "staged, cache kept", "c": "staged, empty_cache", "d": "talker reservation"}
    for r in sorted(results, key=lambda r: (list(LENGTHS).index(r["length"]), r["mode"])):
        after = "-" if r["device_allocs_after_reservation"] is None else str(r["device_allocs_after_reservation"])
        ratio = r["peak_reserved"] / largest[r["length"]] if r["length"] in largest else float("nan")
        print(f"| {r['length']} | {names[r['mode']]} | {gib(r['peak_reserved'])} | {ratio:.3f} | {after} | {r['retries']} | {r['ooms']} |")
    print()
    print("| length | stage | planned GiB | measured peak allocated GiB | planner error |")
    print("|---|---|---|---|---|")
    for r in results:
        if r["mode"] != "d":
            continue
        for name, s in r["stages"].items():
            error = (s["planned"] - s["peak_allocated"]) / s["peak_allocated"]
            print(f"| {r['length']} | {name} | {gib(s['planned'])} | {gib(s['peak_allocated'])} | {error:+.1%} |")


def main():
    parser = argparse.ArgumentParser(description="VRAM strategies side by side on a CUDA GPU")
    parser.add_argument("--mode", choices=list("abcd"))
    parser.add_argument("--length", choices=list(LENGTHS))
    parser.add_argument("--modes", default="abcd", help="strategies to run, in order")
    parser.add_argument("--budget-s", type=float, default=0, help="start no new run after this many seconds")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "vram-h200.json"))
    args = parser.parse_args()
    lengths = [args.length] if args.length else list(LENGTHS)
    if args.mode:
        child(args.mode, lengths, args.out)
        return
    results = []
    started = time.perf_counter()
    # One process per strategy and length: each starts with an empty allocator, as a job does.
    for length in lengths:
        for mode in args.modes:
            if args.budget_s and time.perf_counter() - started > args.budget_s:
                print(f"time budget spent: {mode} {length} not run", flush=True)
                continue
            part = Path(args.out).with_suffix(f".{mode}-{length}.json")
            subprocess.run([sys.executable, __file__, "--mode", mode, "--length", length, "--out", str(part)], check=False)
            if part.exists():
                results += json.loads(part.read_text())
                part.unlink()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    report(results)


if __name__ == "__main__":
    main()
