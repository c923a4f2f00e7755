"""On a real CUDA GPU: the reservation, the staged lifecycle under it, OOM handling, check-gpu.

Run with: pytest -m gpu tests/test_gpu.py  (results of the last H200 run: bench/results/gpu-tests-h200.txt)
"""

import gc
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

from talker_cli.config import TalkerConfig  # noqa: E402
from talker_cli.errors import ResourceError  # noqa: E402
from talker_cli.gpu.model_specs import spec_from_folder  # noqa: E402
from talker_cli.jobs.pipeline import run_job  # noqa: E402
from talker_cli.gpu.reservation import Reservation  # noqa: E402
from talker_cli.jobs.stages import Job, PreflightStage, Stage  # noqa: E402
from talker_cli.gpu.vram_plan import GIB, Workload, plan_stage, reservation_bytes  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def save_model(folder: Path, kind: str) -> Path:
    """A random-init model of a real architecture, saved as safetensors (bf16)."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    if kind == "llama":
        cfg = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=12,
                          num_attention_heads=16, num_key_value_heads=4, tie_word_embeddings=False)
        model = LlamaForCausalLM(cfg)
    else:
        cfg = GPT2Config(vocab_size=50257, n_positions=2048, n_embd=1024, n_layer=16, n_head=16)
        model = GPT2LMHeadModel(cfg)
    model.to(torch.bfloat16).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    base = tmp_path_factory.mktemp("models")
    return {"llm": save_model(base / "llama", "llama"), "tts": save_model(base / "gpt2", "gpt2")}


class ModelStage(Stage):
    """Loads a saved transformers model onto the GPU, generates, and is freed by the runner."""

    def __init__(self, name, folder, prompt, new):
        self.name, self.folder, self.prompt, self.new = name, folder, prompt, new

    def load(self, job):
        from transformers import AutoModelForCausalLM

        self.engine = AutoModelForCausalLM.from_pretrained(self.folder, dtype=torch.bfloat16, device_map="cuda:0")
        self.engine.generation_config.eos_token_id = None
        self.engine.generation_config.pad_token_id = 0

    def run(self, job):
        ids = torch.randint(0, 1000, (1, self.prompt), device="cuda:0")
        with torch.inference_mode():
            out = self.engine.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=self.new,
                                       min_new_tokens=self.new, do_sample=False)
        assert out.shape[1] == self.prompt + self.new
        return {}

    def unload(self):
        self.engine = None


def assert_released():
    """After the run every cached block is back with the driver: reserved is what is still in use."""
    cached = torch.cuda.memory_reserved(0) - torch.cuda.memory_allocated(0)
    assert cached < 64 * 2**20, f"{cached / 2**20:.0f} MiB still cached, {torch.cuda.memory_allocated(0) / 2**20:.0f} MiB in use"


def gpu_job(tmp_path):
    config = TalkerConfig()
    config = replace(config, llm=replace(config.llm, device="cuda:0"), tts=replace(config.tts, device="cuda:0"))
    return Job(photo=tmp_path / "p.png", output=tmp_path / "o.mp4", config=config, text="hi")


def test_one_reservation_serves_every_stage_without_new_device_allocations(tmp_path, models):
    work = {"llm": (2048, 32), "tts": (256, 256)}
    plans = {name: plan_stage(spec_from_folder(models[name], "bfloat16"), Workload(prompt_tokens=p, new_tokens=n), name, "cuda:0")
             for name, (p, n) in work.items()}
    job = gpu_job(tmp_path)
    reservation = Reservation("cuda:0", reservation_bytes(list(plans.values())), cap_fraction=0.9)
    reservation.make()
    reserved_after_make = torch.cuda.memory_reserved(0)
    job.run.reservations["cuda:0"] = reservation
    job.planned = {name: p.peak_bytes for name, p in plans.items()}
    stages = [ModelStage(name, models[name], *work[name]) for name in ("llm", "tts", "llm")]
    manifest = run_job(job, stages)
    rows = [s["details"]["vram"] for s in manifest["stages"]]
    for row in rows:
        assert row["device_allocs"] == 0, row
        assert row["alloc_retries"] == 0 and row["ooms"] == 0
        assert row["peak_reserved_bytes"] == reserved_after_make  # nothing beyond the reservation
        assert abs(row["planner_error"]) < 0.10, row
    assert_released()
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    print(json.dumps({"reservation_bytes": reservation.bytes, "ledger": rows}, indent=1))


def test_preflight_plans_and_reserves_from_a_model_folder(tmp_path, models):
    job = gpu_job(tmp_path)
    from .model_builders import TINY_VITS, save_coqui_vits

    voice = save_coqui_vits(tmp_path / "vits", **TINY_VITS)  # a voice that is there; on the CPU, not planned
    job.config = replace(job.config, llm=replace(job.config.llm, model=str(models["llm"]), dtype="bfloat16"),
                         tts=replace(job.config.tts, backend="coqui", voice=str(voice), device="cpu"))
    job.reply = True
    manifest = run_job(job, [PreflightStage()])
    assert manifest["vram"]["fits"] and manifest["vram"]["devices"][0]["name"].startswith("NVIDIA")
    planned = manifest["vram"]["plans"][0]["peak_bytes"]
    assert manifest["vram"]["devices"][0]["reservation_bytes"] > planned
    assert_released()


class Greedy(Stage):
    name = "llm"

    def run(self, job):
        torch.empty(int(40 * GIB), dtype=torch.uint8, device="cuda:0")


def test_a_stage_that_outgrows_the_cap_fails_with_figures_and_leaves_nothing(tmp_path):
    job = gpu_job(tmp_path)
    reservation = Reservation("cuda:0", int(2 * GIB), cap_fraction=0.1)  # 0.1 of an H200: ~14 GiB
    reservation.make()
    job.run.reservations["cuda:0"] = reservation
    job.planned = {"llm": int(1.5 * GIB)}
    with pytest.raises(ResourceError, match=r"stage llm ran out of GPU memory on cuda:0 \(planned 1.50 GiB"):
        run_job(job, [Greedy()])
    assert list(tmp_path.iterdir()) == []
    assert_released()


RESERVE_THEN_MIXED = """
import os, sys, torch
sys.path.insert(0, {root!r})
from talker_cli.gpu.reservation import sanitize_alloc_conf
if {sanitize}:
    sanitize_alloc_conf()
block = torch.empty(4 * 2**30, dtype=torch.uint8, device="cuda"); del block
before = torch.cuda.memory_stats()["num_device_alloc"]
held = [torch.empty(n, dtype=torch.uint8, device="cuda") for n in [300 << 20, 64 << 20, 700 << 20, 5 << 20] * 2]
del held
print(torch.cuda.memory_reserved(), torch.cuda.memory_stats()["num_device_alloc"] - before)
"""


@pytest.mark.parametrize("sanitize", [False, True])
def test_small_max_split_size_breaks_the_reservation_unless_removed(sanitize):
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:128")
    code = RESERVE_THEN_MIXED.format(root=str(ROOT), sanitize=sanitize)
    reserved, new_allocs = map(int, subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                                   text=True, check=True).stdout.split())
    if sanitize:
        assert reserved == 4 * 2**30 and new_allocs == 0
    else:  # the 4 GiB block was handed back: the reservation was a lie
        assert new_allocs > 0


def test_check_gpu_reads_the_real_card_fast(models, tmp_path):
    from .model_builders import save_coqui_vits

    voice = save_coqui_vits(tmp_path / "vits", speakers=["p225"])  # the preset's Coqui voice, in its released shape
    command = [sys.executable, "-m", "talker_cli", "check-gpu", "--preset", "gpu-24gb", "--reply", "--text",
               "Tell me about the sea. " * 50, "--llm-model", str(models["llm"]), "--tts-model", str(voice), "--json"]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["gpus"][0]["total_bytes"] > 100 * GIB and summary["fits"]
    print(f"check-gpu took {seconds:.2f} s")
    assert seconds < 2.0


@pytest.mark.parametrize("quantize", ["4bit", "8bit"])
def test_quantized_llm_weights_match_the_plan(models, quantize):
    pytest.importorskip("bitsandbytes", reason="4/8-bit loading needs bitsandbytes: pip install 'talker[quantize]'")
    from transformers import AutoModelForCausalLM

    from talker_cli.config import LlmConfig
    from talker_cli.llms.transformers_llm import TransformersLlm

    llm = TransformersLlm(LlmConfig(model=str(models["llm"]), device="cuda:0", dtype="bfloat16", quantize=quantize))
    gc.collect()  # an earlier test's model freed now, not while this one loads
    before = torch.cuda.memory_allocated(0)
    model = AutoModelForCausalLM.from_pretrained(models["llm"], dtype=torch.bfloat16, **llm._quantized_loading(quantize))
    held = torch.cuda.memory_allocated(0) - before
    spec = replace(spec_from_folder(models["llm"], "bfloat16"), quant_bits=int(quantize[0]))
    print(f"{quantize}: held {held / 2**20:.0f} MiB, planned {spec.weight_bytes / 2**20:.0f} MiB")
    del model
    gc.collect()
    assert abs(spec.weight_bytes - held) / held < 0.10


def test_coqui_vits_speaks_inside_its_plan_on_the_gpu(tmp_path):
    """The released VCTK VITS shape, random-init: preflight plans the longest segment and reserves;
    the TTS stage then makes no allocation from the driver and stays under its plan."""
    from talker_cli.jobs.stages import InputStage, TtsStage

    from .model_builders import save_coqui_vits

    voice = save_coqui_vits(tmp_path / "vits", speakers=["p225", "p226"])
    job = gpu_job(tmp_path)
    job.config = replace(job.config, tts=replace(job.config.tts, backend="coqui", voice=str(voice), device="cuda:0"))
    job.text = "This sentence is one of several, each said on its own. " * 12
    manifest = run_job(job, [PreflightStage(), InputStage(), TtsStage()])
    row = next(s for s in manifest["stages"] if s["name"] == "tts")["details"]["vram"]
    print(f"tts: planned {row['planned_bytes'] / 2**20:.0f} MiB, peak {row['peak_allocated_bytes'] / 2**20:.0f} MiB")
    assert row["device_allocs"] == 0 and row["alloc_retries"] == 0 and row["ooms"] == 0
    assert 0 < row["peak_allocated_bytes"] <= row["planned_bytes"]
    assert_released()
