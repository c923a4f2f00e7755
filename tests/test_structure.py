"""The package's shape: no module imports another in a cycle, and nothing imports the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "talker_cli"


def module_name(path: Path) -> str:
    """talker_cli/face/rig.py -> face.rig; a package's __init__ is the package."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def imports() -> dict[str, set[str]]:
    """Each module (subpackages' modules as face.rig) -> the package modules it imports, at the top
    or inside functions."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name.split(".")[:-1] if path.stem != "__init__" or name == "__init__" else name.split(".")
        found = set()
        tree = ast.parse(path.read_text())
        for block in [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]:
            block.body = []  # imports for annotations only are not run
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            if node.module:
                target = ".".join([*base, node.module])
                found.add(target if target in modules else ".".join([*base, node.module.split(".")[0]]))
            else:
                found |= {".".join([*base, alias.name]) for alias in node.names}
        graph[name] = found & set(modules)
    return graph


def test_the_import_graph_has_no_cycle():
    graph, state = imports(), {}

    def visit(module, path):
        if state.get(module) == "open":
            raise AssertionError("import cycle: " + " -> ".join(path + [module]))
        if state.get(module) == "done":
            return
        state[module] = "open"
        for other in sorted(graph[module]):
            visit(other, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        visit(module, [])


def test_only_the_entry_point_imports_the_cli():
    assert {m for m, deps in imports().items() if "cli" in deps} == {"__main__"}


FAMILIES = {
    "face": {"rig", "eyes", "painter", "frames", "calibration", "blendshapes", "visemes", "emotions", "video"},
    "voices": {"tts", "coqui_tts", "espeak_tts", "kokoro_tts", "speech_join", "mandarin"},
    "aligners": {"alignment", "recording_alignment", "synthesis_alignment", "mfa", "speech_edges", "phonemes", "readings"},
    "llms": {"llm", "models", "chat", "transformers_llm", "llama_cpp_llm"},
    "gpu": {"preflight", "reservation", "vram_plan", "probe", "locks", "model_specs"},
    "listening": {"asr", "whisper_frames", "whisper_models", "voice_activity"},
    "jobs": {"job_request", "job", "stages", "preflight_stage", "input_stages", "model_stages", "track_stages",
             "render_stage", "pipeline", "batch", "batch_file", "ray_runner", "work_folder", "work_cache",
             "outputs", "input_files", "progress", "metering", "metrics"},
}


def test_each_family_of_modules_lives_in_its_own_package():
    """The renderer (face/), the voices, the aligners, the LLMs, the GPU preflight, listening and running jobs each
    in a package, as the formats live in exports/."""
    top = {p.stem for p in PACKAGE.glob("*.py")}
    for package, modules in FAMILIES.items():
        assert not modules & top, f"{package} modules outside talker_cli/{package}/: {sorted(modules & top)}"
        assert modules <= {p.stem for p in (PACKAGE / package).glob("*.py")}, package


def test_at_most_a_dozen_modules_stay_at_the_top_and_none_is_long():
    """The CLI, the API, config, errors, artifacts and the like: the rest lives with its family; a
    module over 450 lines does more than one task."""
    top = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert len(top) <= 12, sorted(top)
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 450}
    assert not long, long


def test_each_package_imports_on_its_own():
    """A fresh interpreter imports each package first of all (a circle through an __init__ fails here
    even where the graph's test reads it as broken by a late import)."""
    import subprocess
    import sys

    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")) + ["config"]
    for name in packages:
        done = subprocess.run([sys.executable, "-c", f"import talker_cli.{name}"], capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr[-500:])


def test_the_settings_name_the_formats_without_importing_their_writers():
    """config -> exports -> arkit -> face.blendshapes -> config was a circle: the formats' names are
    a module that imports nothing."""
    assert imports()["exports.formats"] == set() and "exports" not in imports()["config"]
