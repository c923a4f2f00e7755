"""The package as users install it: a built wheel, outside the checkout, still finds its presets and renders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig

import pytest

from .conftest import ROOT, SAMPLES


@pytest.mark.slow
def test_a_built_wheel_lists_its_presets_and_renders_from_outside_the_checkout(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--disable-pip-version-check", "-w", str(wheels), str(ROOT)], check=True, capture_output=True)
    (wheel,) = wheels.glob("talker-*.whl")
    # A fresh virtual environment beside the project's: talker from the wheel, its console script
    # included; its dependencies from the project's environment, reached through a .pth line (which
    # does not read that folder's own .pth files, the checkout's editable install among them).
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True)
    site = next(fresh.glob("lib/python*/site-packages"))
    (site / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh / "bin" / "python"), "install", "--no-deps",
                    "--quiet", "--disable-pip-version-check", str(wheel)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = lambda *args: subprocess.run([str(fresh / "bin" / "talker"), *args], cwd=tmp_path, env=env,  # noqa: E731
                                       capture_output=True, text=True)
    where = subprocess.run([str(fresh / "bin" / "python"), "-c", "import talker_cli; print(talker_cli.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site))
    listed = run("presets")
    assert listed.returncode == 0, listed.stderr
    assert {"cpu", "gpu-12gb", "gpu-24gb"} <= set(listed.stdout.split())
    out = tmp_path / "hi.mp4"
    rendered = run("render", "--photo", str(SAMPLES / "face.png"), "--text", "Hi.", "-o", str(out), "--json", "-q")
    assert rendered.returncode == 0, rendered.stderr
    assert json.loads(rendered.stdout)["config"]["render"]["fps"] == 25 and out.stat().st_size > 0
    # Mandarin from the wheel's own voices (package data), not the Japanese voice
    spoken = run("lipsync", "--text", "你好，今天天气很好。", "-o", str(tmp_path / "zh"), "--json", "-q")
    assert spoken.returncode == 0, spoken.stderr
    tts = next(s for s in json.loads(spoken.stdout)["stages"] if s["name"] == "tts")
    assert tts["model"].startswith("Kokoro-82M int8, voice z"), tts["model"]
