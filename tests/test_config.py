import pytest

from talker_cli.config import TalkerConfig, available_presets, load_config
from talker_cli.errors import UsageError


def test_default_preset_is_cpu_and_loads():
    config = load_config()
    assert config.render.device == "cpu"
    assert config.tts.backend == "piper"


def test_every_shipped_preset_validates():
    names = available_presets()
    assert {"cpu", "gpu-12gb", "gpu-24gb"} <= set(names)
    for name in names:
        assert isinstance(load_config(name), TalkerConfig)


def test_flags_override_preset():
    config = load_config("gpu-24gb", {"render": {"fps": 25}})
    assert config.render.fps == 25
    assert config.asr.model == "large-v3"  # from the preset


def test_unknown_preset_names_the_choices():
    with pytest.raises(UsageError, match="unknown preset 'nope'.*cpu"):
        load_config("nope")


@pytest.mark.parametrize(
    "toml, message",
    [
        ("[render]\nfsp = 25\n", "unknown key 'fsp' in \\[render\\]"),
        ("[rendr]\nfps = 25\n", "unknown table \\[rendr\\]"),
        ("[render]\nfps = 'fast'\n", "expected int"),
        ("[render]\nfps = 7\n", "\\[render\\] fps = 7 is not allowed; it must be 24, 25, 30, 50 or 60"),
        ("[render\nfps = 25\n", "not valid TOML"),
        # every setting has a range or a set of values, NaN and infinities included (the audit's cases first)
        ('[video]\nx264_preset = "bogus"\n', "x264_preset = 'bogus' is not allowed; it must be an x264 preset"),
        ("[tts]\nlead_silence_s = -0.5\n", "lead_silence_s = -0.5 is not allowed; it must be a number from 0"),
        ("[visemes]\nsmoothing_s = nan\n", "smoothing_s = nan is not allowed"),
        ("[render]\nseed = -5\n", "seed = -5 is not allowed"),
        ('[asr]\ndevice = "banana"\n', "device = 'banana' is not allowed; it must be \"cpu\", \"cuda\" or \"cuda:N\""),
        ("[gpu]\nmem_ratio = inf\n", "mem_ratio = inf is not allowed"),
        ("[llm]\nmax_new_tokens = 0\n", "max_new_tokens = 0 is not allowed"),
        ('[video]\naudio_bitrate = "loud"\n', "audio_bitrate = 'loud' is not allowed"),
        ("[video]\naudio_rate = 12345\n", "audio_rate = 12345 is not allowed"),
        ('[tts]\ndevice = "cuda"\n', "Piper voices run on the CPU"),
        ('[alignment]\nbackend = "guess"\n', "backend = 'guess' is not allowed"),
    ],
)
def test_bad_preset_files_are_refused_with_the_key_named(tmp_path, toml, message):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(UsageError, match=message):
        load_config(str(path))


def test_int_is_accepted_where_float_is_expected(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text("[visemes]\nanticipation_s = 0\n")
    assert load_config(str(path)).visemes.anticipation_s == 0.0


def test_every_setting_has_a_rule():
    from dataclasses import fields

    from talker_cli.config import RULES, TalkerConfig

    keys = {f"{t.name}.{f.name}" for t in fields(TalkerConfig) for f in fields(t.default_factory())}
    assert keys == set(RULES)


def test_the_cpu_preset_is_the_defaults_written_once():
    """Defaults live in the config's dataclasses only: the cpu preset restates none of them."""
    assert load_config("cpu") == TalkerConfig()
    from talker_cli.config import preset_path

    assert "[" not in "".join(line for line in preset_path("cpu").read_text().splitlines() if not line.startswith("#"))
