"""VRAM planning, verdicts and the reservation's bookkeeping on the CPU, with the device's answers injected."""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from talker_cli.gpu import probe as gpu_probe
from talker_cli.cli import app
from talker_cli.config import load_config
from talker_cli.errors import NoGpuError, ResourceError
from talker_cli.gpu.probe import GpuDevice
from talker_cli.llms.models import smollm2_gguf as bundled_gguf
from talker_cli.gpu.model_specs import read_gguf_header, spec_from_folder, spec_from_gguf
from talker_cli.gpu.preflight import JobSize, decide, plan_job
from talker_cli.gpu.reservation import Reservation, sanitize_alloc_conf
from talker_cli.gpu.vram_plan import (
    GIB, MIB, SMALL_POOL_HEADROOM, ModelSpec, StagePlan, Workload, causal_lm_plan, kv_cache_bytes, reservation_bytes,
    whisper_plan,
)

QWEN_7B = ModelSpec("causal-lm", "qwen7b", 7_615_616_512, 2, layers=28, hidden=3584, heads=28, kv_heads=4,
                    head_dim=128, intermediate=18944, vocab=152064)
WHISPER_LARGE = ModelSpec("whisper", "large-v3", 1_543_490_560, 2, layers=32, hidden=1280, heads=20, kv_heads=20,
                          head_dim=64, intermediate=5120, vocab=51866, decoder_layers=32, mel_bins=128)


def gpu(index=0, total_gib=24.0, free_gib=23.0, name="Test GPU"):
    return GpuDevice(index, name, int(total_gib * GIB), int(free_gib * GIB), 0, "injected")


def plan(stage, gib, device="cuda:0", torch_allocated=True):
    return StagePlan(stage, device, stage, int(gib * GIB), 0, 0, torch_allocated)


BUNDLED_GPU_PRESET = str(Path(__file__).parent / "presets" / "gpu-bundled.toml")


def gpu_config(**sections):
    config = load_config(BUNDLED_GPU_PRESET)
    for name, values in sections.items():
        config = replace(config, **{name: replace(getattr(config, name), **values)})
    return config


# --- arithmetic -------------------------------------------------------------------------------

def test_kv_cache_is_two_tensors_per_layer_per_token():
    # 2 (K, V) x 28 layers x 4 heads x 128 dims x 2 bytes = 57344 bytes a token, plus half a layer in flight
    assert kv_cache_bytes(QWEN_7B, 1000) == pytest.approx(57344 * 1000 * (1 + 1 / 56), rel=1e-3)


def test_llm_plan_grows_with_input_length():
    sentence = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=20, new_tokens=64), "llm", "cuda:0")
    five_minutes = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=12000, new_tokens=64), "llm", "cuda:0")
    assert sentence.weights_bytes == five_minutes.weights_bytes == pytest.approx(QWEN_7B.param_count * 2, rel=1e-6)
    assert five_minutes.peak_bytes - sentence.peak_bytes > 1 * GIB
    # Measured on an H200 (bench/results): 2048 + 64 tokens peaked at 14.64 GiB allocated.
    medium = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=2048, new_tokens=64), "llm", "cuda:0")
    assert medium.peak_bytes / GIB == pytest.approx(14.64, rel=0.03)


def test_whisper_plan_grows_with_windows_up_to_the_batch():
    one = whisper_plan(WHISPER_LARGE, Workload(windows=1, batch=8, new_tokens=64), "asr", "cuda:0")
    four = whisper_plan(WHISPER_LARGE, Workload(windows=4, batch=8, new_tokens=64), "asr", "cuda:0")
    ten = whisper_plan(WHISPER_LARGE, Workload(windows=10, batch=8, new_tokens=64), "asr", "cuda:0")
    eight = whisper_plan(WHISPER_LARGE, Workload(windows=8, batch=8, new_tokens=64), "asr", "cuda:0")
    assert one.peak_bytes < four.peak_bytes < ten.peak_bytes == eight.peak_bytes
    assert one.peak_bytes / GIB == pytest.approx(3.15, rel=0.03)  # measured: 3.15 GiB


def test_openai_whisper_plan_counts_float32_weights_and_the_word_timing_pass():
    # openai-whisper large-v3 loaded from a path not named like an official model: float32 weights,
    # word timing over the last 16 layers' 20 heads. Measured on an H200 (bench/results,
    # gpu-pipeline-h200.json): 7.92 GiB peak allocated, the same for 30 s and 120 s of audio.
    spec = replace(WHISPER_LARGE, stored_dtype_bytes=4, alignment_heads=16 * 20)
    for windows in (1, 4):
        timed = whisper_plan(spec, Workload(windows=windows, batch=1, new_tokens=224, word_timing=True), "asr", "cuda:0")
        assert timed.peak_bytes / GIB == pytest.approx(7.92, rel=0.03)
    official = whisper_plan(replace(spec, alignment_heads=10), Workload(windows=1, new_tokens=224, word_timing=True),
                            "asr", "cuda:0")
    untimed = whisper_plan(spec, Workload(windows=1, new_tokens=224), "asr", "cuda:0")
    assert untimed.peak_bytes < official.peak_bytes < timed.peak_bytes


def test_reservation_is_the_largest_torch_stage_plus_margin_and_small_pool():
    plans = [plan("asr", 3.0), plan("llm", 14.0), plan("ext", 20.0, torch_allocated=False)]
    assert reservation_bytes(plans, margin=0.03) == pytest.approx(14.0 * 1.03 * GIB + SMALL_POOL_HEADROOM, abs=512)
    assert reservation_bytes([plan("ext", 2.0, torch_allocated=False)]) == 0


# --- reading shapes without loading -----------------------------------------------------------

def test_gguf_header_gives_smollm_shapes_without_loading():
    meta, elements = read_gguf_header(bundled_gguf())
    assert meta["general.architecture"] == "llama"
    spec = spec_from_gguf(bundled_gguf(), "bfloat16")
    assert spec.param_count == elements == 134_515_008  # SmolLM2-135M, tied embeddings counted once
    assert (spec.layers, spec.hidden, spec.heads, spec.kv_heads, spec.vocab) == (30, 576, 9, 3, 49152)
    assert spec.weight_bytes == 2 * 134_515_008


def test_safetensors_headers_count_parameters(tmp_path):
    from safetensors.numpy import save_file

    save_file({"a": np.zeros((3, 4), np.float16), "b": np.zeros(10, np.float16)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text('{"model_type": "llama", "hidden_size": 4, "num_hidden_layers": 1, '
                                          '"num_attention_heads": 1, "vocab_size": 3, "intermediate_size": 8}')
    spec = spec_from_folder(tmp_path, "float16")
    assert spec.param_count == 22 and spec.weight_bytes == 44 and spec.kind == "causal-lm"


def test_job_plan_only_covers_stages_that_run_on_a_gpu():
    config = gpu_config()
    assert plan_job(config, JobSize(text_chars=100)) == []  # TTS only: Piper runs on the CPU
    reply = plan_job(config, JobSize(text_chars=100, reply=True))
    assert [p.stage for p in reply] == ["llm"]
    audio = plan_job(config, JobSize(audio_s=95.0))
    assert [p.stage for p in audio] == ["asr"] and not audio[0].torch_allocated


# --- verdicts ---------------------------------------------------------------------------------

def test_fits_on_a_large_card():
    verdict = decide([plan("llm", 14.6)], [gpu(total_gib=24, free_gib=23)], gpu_config())
    assert verdict.fits and verdict.devices[0].reservation_bytes > 14.6 * GIB
    assert verdict.devices[0].need_bytes > verdict.devices[0].reservation_bytes  # plus the CUDA context


def test_does_not_fit_and_says_what_would():
    config = gpu_config(llm={"cpu_fallback": False})
    llm = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=2048, new_tokens=64), "llm", "cuda:0")
    verdict = decide([llm], [gpu(total_gib=12, free_gib=11.5)], config)
    assert not verdict.fits and verdict.gpu_usable
    assert "does not fit cuda:0" in verdict.message
    assert any('quantize = "4bit"' in s for s in verdict.suggestions)
    assert any("smaller preset" in s for s in verdict.suggestions)


def test_quantized_llm_plans_small_linear_weights_and_keeps_embeddings():
    bf16 = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=2048, new_tokens=64), "llm", "cuda:0")
    plans = {bits: causal_lm_plan(replace(QWEN_7B, quant_bits=bits), Workload(prompt_tokens=2048, new_tokens=64),
                                  "llm", "cuda:0") for bits in (4, 8)}
    embeddings = 2 * 152064 * 3584  # input embedding and output head, untied, stay in bf16
    linear = QWEN_7B.param_count - embeddings
    assert plans[8].weights_bytes == pytest.approx(linear * 1 + embeddings * 2, abs=512)
    assert plans[4].weights_bytes == pytest.approx(linear * 0.5625 + embeddings * 2, abs=512)
    assert plans[4].peak_bytes < plans[8].peak_bytes < bf16.peak_bytes
    assert plans[4].detail.endswith(", 4-bit") and "bit" not in bf16.detail
    # one MLP matrix dequantized at a time rides on top of the activations
    assert plans[4].activation_bytes - bf16.activation_bytes == pytest.approx(18944 * 3584 * 2, abs=512)


def test_a_job_too_big_in_bf16_fits_a_12gb_card_in_4_bits(tmp_path):
    from transformers import Qwen2Config

    folder = tmp_path / "qwen7b"
    folder.mkdir()
    config_json = Qwen2Config(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                              num_attention_heads=28, num_key_value_heads=4, tie_word_embeddings=False).to_json_string()
    (folder / "config.json").write_text(config_json)  # shapes alone: planned on the meta device
    card = [gpu(total_gib=12, free_gib=11.5)]
    size = JobSize(text_chars=2000, reply=True)
    for quantize, fits in (("", False), ("8bit", True), ("4bit", True)):
        config = gpu_config(llm={"model": str(folder), "dtype": "bfloat16", "quantize": quantize, "cpu_fallback": False})
        verdict = decide(plan_job(config, size), card, config)
        assert verdict.fits == fits, (quantize, verdict.message)
    assert not any("quantize" in s for s in decide(plan_job(config, size), [gpu(total_gib=4, free_gib=3.9)], config).suggestions)


def test_other_processes_memory_counts_against_the_job():
    verdict = decide([plan("llm", 10.0)], [gpu(total_gib=24, free_gib=8)], gpu_config(llm={"cpu_fallback": False}))
    assert not verdict.fits and "free" in verdict.devices[0].reason


def test_mem_ratio_caps_the_reservation():
    config = gpu_config(llm={"cpu_fallback": False}, gpu={"mem_ratio": 0.5})
    verdict = decide([plan("llm", 14.0)], [gpu(total_gib=24, free_gib=24)], config)
    assert not verdict.fits and "cap" in verdict.devices[0].reason
    assert any("--mem-ratio" in s for s in verdict.suggestions)


def test_a_stage_that_cannot_fit_falls_back_to_the_cpu_when_allowed():
    plans = [plan("llm", 14.0), plan("asr", 1.0, torch_allocated=False)]
    verdict = decide(plans, [gpu(total_gib=12, free_gib=11)], gpu_config())
    assert verdict.fits and list(verdict.fallbacks) == ["llm"]
    assert verdict.devices[0].reservation_bytes == 0 and verdict.devices[0].external_bytes == 1 * GIB


def test_no_gpu_at_all_runs_on_the_cpu_or_is_refused():
    assert decide([plan("llm", 1.0)], [], gpu_config()).fallbacks == {"llm": "cuda:0 is not usable"}
    verdict = decide([plan("llm", 1.0)], [], gpu_config(llm={"cpu_fallback": False}))
    assert not verdict.fits and not verdict.gpu_usable


def test_each_device_gets_its_own_reservation():
    plans = [plan("asr", 3.0, "cuda:0"), plan("llm", 14.0, "cuda:1")]
    verdict = decide(plans, [gpu(0), gpu(1)], gpu_config())
    assert verdict.fits
    by_device = {d.device: d.reservation_bytes for d in verdict.devices}
    assert by_device["cuda:0"] < 4 * GIB < 14 * GIB < by_device["cuda:1"]


# --- reservation bookkeeping with the allocator's answers injected ------------------------------

class FakeCuda:
    """Answers like torch.cuda for one device of `total` bytes; records what was asked."""

    class OutOfMemoryError(RuntimeError):
        pass

    def __init__(self, total, free):
        self.total, self.free, self.fraction, self.allocated = total, free, None, []
        self.stats = {"num_device_alloc": 0, "num_alloc_retries": 0, "num_ooms": 0,
                      "allocated_bytes.all.peak": 0, "reserved_bytes.all.peak": 0}
        self.emptied = False
        self.events = []

    def get_device_properties(self, device):
        return SimpleNamespace(total_memory=self.total)

    def set_per_process_memory_fraction(self, fraction, device):
        self.fraction = fraction

    def mem_get_info(self, device):
        return self.free, self.total

    def memory_stats(self, device):
        return dict(self.stats)

    def reset_peak_memory_stats(self, device):
        self.stats["allocated_bytes.all.peak"] = 0

    def empty_cache(self):
        self.emptied = True
        self.events.append("empty_cache")

    def synchronize(self, device):
        pass


def fake_torch(total=24 * GIB, free=23 * GIB):
    cuda = FakeCuda(total, free)

    def empty(n, dtype=None, device=None):
        if n > cuda.free:
            raise cuda.OutOfMemoryError("CUDA out of memory")
        cuda.allocated.append(n)
        cuda.stats["num_device_alloc"] += 1
        return object()

    clear_workspaces = SimpleNamespace(_cuda_clearCublasWorkspaces=lambda: cuda.events.append("clear_cublas_workspaces"))
    return SimpleNamespace(cuda=cuda, empty=empty, uint8="uint8", device=lambda d: d, _C=clear_workspaces)


def test_reservation_is_one_big_block_plus_small_pool_and_capped():
    torch = fake_torch()
    reservation = Reservation("cuda:0", 10 * GIB, 0.9, torch=torch)
    reservation.make()
    assert torch.cuda.fraction == 0.9
    assert torch.cuda.allocated[0] == 10 * GIB - SMALL_POOL_HEADROOM
    assert sum(torch.cuda.allocated[1:]) == SMALL_POOL_HEADROOM and set(torch.cuda.allocated[1:]) == {MIB}
    reservation.release()
    assert torch.cuda.emptied and torch.cuda.fraction == 1.0
    # the cuBLAS workspace lives in the reserved block: it must go first or it pins the segment
    assert torch.cuda.events == ["clear_cublas_workspaces", "empty_cache"]


def test_reservation_over_the_cap_or_over_free_memory_is_refused():
    with pytest.raises(ResourceError, match="over the cap of 50%"):
        Reservation("cuda:0", 20 * GIB, 0.5, torch=fake_torch()).make()
    with pytest.raises(ResourceError, match="only 4.00 GiB free"):
        Reservation("cuda:0", 10 * GIB, 0.9, torch=fake_torch(free=4 * GIB)).make()


def test_ledger_counts_device_allocations_retries_and_the_planner_error():
    torch = fake_torch()
    reservation = Reservation("cuda:0", 10 * GIB, 0.9, torch=torch)
    reservation.make()
    reservation.stage_begin("llm", planned_bytes=int(9.0 * GIB))
    torch.cuda.stats.update({"allocated_bytes.all.peak": int(10 * GIB), "num_device_alloc": torch.cuda.stats["num_device_alloc"] + 2,
                             "num_alloc_retries": 1})
    row = reservation.stage_end()
    assert (row.device_allocs, row.alloc_retries, row.ooms) == (2, 1, 0)
    assert row.planner_error == pytest.approx(-0.1)


def test_allocator_options_that_release_cached_blocks_are_removed():
    env = {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128,expandable_segments:True"}
    assert sanitize_alloc_conf(env) == ["max_split_size_mb:128"]
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    env = {"PYTORCH_ALLOC_CONF": "garbage_collection_threshold:0.6"}
    sanitize_alloc_conf(env)
    assert "PYTORCH_ALLOC_CONF" not in env


def test_cuda_visible_devices_is_respected_in_device_numbering(monkeypatch):
    monkeypatch.setattr(gpu_probe, "_nvml_devices", lambda environ: [gpu(0, name="third card")])
    assert gpu_probe.probe_devices({"CUDA_VISIBLE_DEVICES": "2"})[0].label == "cuda:0"
    assert gpu_probe._visible({"CUDA_VISIBLE_DEVICES": "2, GPU-abc"}) == ["2", "GPU-abc"]
    assert gpu_probe._visible({}) is None


# --- the commands -----------------------------------------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize("devices, code", [([gpu(total_gib=24, free_gib=23)], 0), ([gpu(total_gib=0.5, free_gib=0.4)], 0), ([], 7)])
def test_check_gpu_exit_codes(monkeypatch, devices, code):
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: devices)
    result = runner.invoke(app, ["check-gpu", "--preset", BUNDLED_GPU_PRESET, "--text", "Why is the sky blue?", "--reply", "--json"])
    assert result.exit_code == code, result.output
    import json

    summary = json.loads(result.stdout)
    assert summary["plans"][0]["stage"] == "llm" and summary["plans"][0]["peak_bytes"] > 0


def test_check_gpu_refuses_when_fallback_is_off(monkeypatch, tmp_path):
    preset = tmp_path / "strict.toml"
    preset.write_text('[llm]\ndevice = "cuda"\ncpu_fallback = false\n')
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [gpu(total_gib=0.5, free_gib=0.4)])
    result = runner.invoke(app, ["check-gpu", "--preset", str(preset), "--text", "Hi", "--reply"])
    assert result.exit_code == 5
    assert "verdict: the job does not fit cuda:0" in result.stdout and "would fit:" in result.stdout


def test_render_is_refused_before_any_stage_when_it_cannot_fit(monkeypatch, tmp_path, face_photo):
    preset = tmp_path / "strict.toml"
    preset.write_text('[llm]\ndevice = "cuda"\ncpu_fallback = false\n')
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [gpu(total_gib=0.5, free_gib=0.4)])
    out = tmp_path / "a.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "Hi", "--reply", "--preset", str(preset), "-o", str(out)])
    assert result.exit_code == 5
    assert "stage photo" not in result.stderr and "does not fit" in result.stderr
    assert not out.exists()


def test_render_with_no_gpu_and_no_fallback_exits_no_gpu(monkeypatch, tmp_path, face_photo):
    preset = tmp_path / "strict.toml"
    preset.write_text('[llm]\ndevice = "cuda"\ncpu_fallback = false\n')
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [])
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "Hi", "--reply", "--preset", str(preset),
                                 "-o", str(tmp_path / "a.mp4")])
    assert result.exit_code == NoGpuError.exit_code == 7


@pytest.mark.slow
def test_render_falls_back_to_the_cpu_and_says_so(monkeypatch, tmp_path, face_photo, caplog):
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [])
    out = tmp_path / "a.mp4"
    result = runner.invoke(app, ["render", "--photo", str(face_photo), "--text", "What is two plus two?", "--reply",
                                 "--preset", BUNDLED_GPU_PRESET, "-o", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    import json

    manifest = json.loads(result.stdout)
    assert manifest["vram"]["fallbacks"] == {"llm": "cuda is not usable"}
    assert {s["name"]: s for s in manifest["stages"]}["llm"]["device"] == "cpu"
    assert "stage llm runs on the CPU: cuda is not usable" in caplog.text
    # the config stays as asked (a stage never rewrites it); where the LLM ran is its placement
    assert manifest["config"]["llm"]["device"] == "cuda" and manifest["placement"]["llm"] == "cpu"


def test_a_stage_on_plain_cuda_uses_the_reservation_of_cuda_0():
    from talker_cli.jobs.stages import Job

    job = Job(photo=None, output=None, config=gpu_config(), text="hi")
    assert job.stage_device("llm") == "cuda:0" and job.stage_device("render") == "cpu"


@pytest.mark.parametrize("preset, missing", [("gpu-24gb", "Qwen/Qwen2.5-7B-Instruct"), ("gpu-12gb", "Qwen/Qwen2.5-3B-Instruct")])
def test_gpu_tier_presets_name_the_model_they_miss(monkeypatch, preset, missing):
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [gpu(total_gib=24, free_gib=23)])
    result = runner.invoke(app, ["check-gpu", "--preset", preset, "--text", "Hi", "--reply"])
    if result.exit_code == 0:
        pytest.skip(f"{missing} is in this machine's Hugging Face cache")
    assert result.exit_code == 4 and f"model {missing} is not in the Hugging Face cache" in result.stderr
    assert "--llm-model" in result.stderr


def test_gpu_tier_presets_plan_whisper_from_its_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = runner.invoke(app, ["check-gpu", "--preset", "gpu-24gb", "--audio", str(Path(__file__).parent.parent / "samples" / "speech.wav")])
    assert result.exit_code == 4 and f"{tmp_path}/whisper/large-v3.pt" in result.stderr and "--asr-model" in result.stderr


def test_the_llm_plan_holds_the_kv_cache_of_every_token_it_will_generate():
    short = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=20, new_tokens=64), "llm", "cuda:0")
    long = causal_lm_plan(QWEN_7B, Workload(prompt_tokens=20, new_tokens=8064), "llm", "cuda:0")
    # the prompt, hence the prefill's activations, is the same: the difference is the cache
    assert long.peak_bytes - short.peak_bytes == pytest.approx(kv_cache_bytes(QWEN_7B, 8000), rel=0.02)


def test_with_no_driver_the_probe_answers_without_importing_torch():
    import subprocess
    import sys

    code = ("import sys\nfrom talker_cli.gpu.probe import probe_devices\n"
            "import pynvml\ndef no_driver(): raise pynvml.NVMLError(9)\npynvml.nvmlInit = no_driver\n"
            "print(probe_devices(), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "False"]


def test_check_gpu_makes_the_renders_own_checks_before_planning(monkeypatch, tmp_path):
    """One preflight: a job render refuses is refused by check-gpu with the same code and line."""
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [gpu(total_gib=24, free_gib=23)])
    command = ["--text", "hi", "--tts-model", "/nope/voice.onnx"]
    checked = runner.invoke(app, ["check-gpu", *command])
    rendered = runner.invoke(app, ["render", "--photo", "samples/face.png", *command, "-o", str(tmp_path / "x.mp4")])
    assert checked.exit_code == rendered.exit_code == 4
    assert checked.stderr == rendered.stderr and "/nope/voice.onnx" in checked.stderr


def test_check_gpu_plans_the_job_render_would_run_with_the_same_language_and_voice(monkeypatch, tmp_path):
    """A French-looking prompt: its reply is refused by both without --language (SmolLM2 answers in
    English only), planned by both with it."""
    monkeypatch.setattr(gpu_probe, "probe_devices", lambda: [gpu(total_gib=24, free_gib=23)])
    monkeypatch.setattr("talker_cli.llms.llm.multilingual_default", lambda: False)
    prompt = ["--text", "Bonjour, je m'appelle Marie et j'habite à Lyon.", "--reply"]
    for extra, code in [([], 2), (["--language", "en"], 0), (["--language", "en", "--tts-backend", "nope"], 2)]:
        checked = runner.invoke(app, ["check-gpu", *prompt, *extra])
        assert checked.exit_code == code, checked.stderr
        if code:
            rendered = runner.invoke(app, ["render", "--photo", "samples/face.png", *prompt, *extra, "-o", str(tmp_path / "x.mp4")])
            assert rendered.exit_code == code and checked.stderr == rendered.stderr


def test_the_asr_stage_is_planned_with_both_whispers_where_a_second_may_read():
    """English that tiny.en is unsure of is read again by Whisper base in the same stage: both
    models are held, so both are planned; with one reading, tiny.en alone."""
    from talker_cli.config import load_config
    from talker_cli.gpu.model_specs import spec_from_ctranslate2
    from talker_cli.gpu.preflight import default_spec
    from talker_cli.listening.whisper_models import bundled_whisper, multilingual_whisper

    tiny, base = spec_from_ctranslate2(bundled_whisper()), spec_from_ctranslate2(multilingual_whisper())
    both = default_spec("asr", load_config("cpu", {"asr": {"device": "cuda"}}))
    assert both.external_bytes == tiny.external_bytes + base.external_bytes
    one = default_spec("asr", load_config("cpu", {"asr": {"device": "cuda", "second_opinion": False, "language": "en"}}))
    assert one.external_bytes == tiny.external_bytes
