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
    assert config.render.max_side == 1024  # from the preset


def test_unknown_preset_names_the_choices():
    with pytest.raises(UsageError, match="unknown preset 'nope'.*cpu"):
        load_config("nope")


@pytest.mark.parametrize(
    "toml, message",
    [
        ("[render]\nfsp = 25\n", "unknown key 'fsp' in \\[render\\]"),
        ("[rendr]\nfps = 25\n", "unknown table \\[rendr\\]"),
        ("[render]\nfps = 'fast'\n", "expected int"),
        ("[render]\nfps = 7\n", "render.fps must be one of"),
        ("[render\nfps = 25\n", "not valid TOML"),
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
