"""Batch files: one job per line (JSON Lines) or per row (CSV with a header), checked before any work.

Columns: output, exactly one of text / text_file / audio, and optionally photo, transcript (the
words of the audio, when known), reply (true/false), preset, and the settings of SETTING_COLUMNS (language, format, emotion, ...). With a photo the job
renders a video and output is a file name ending in .mp4; without one it writes animation files
only (as `talker lipsync`) and output is their stem. Paths are taken relative to the batch file and
must stay inside its folder or a folder given with --allow.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

# column -> (config table, key, type): a job's own value of a preset setting
SETTING_COLUMNS = {
    "language": ("input", "language", str), "format": ("output", "formats", str),
    "emotion": ("render", "emotion", str), "head_motion": ("render", "head_motion", float),
    "blink_rate": ("render", "blink_rate", float), "mouth_scale": ("render", "mouth_open_scale", float),
    "crop": ("render", "crop", str),
}
COLUMNS = {"photo", "output", "text", "text_file", "audio", "transcript", "reply", "preset", *SETTING_COLUMNS}
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no", ""}


@dataclass(frozen=True)
class JobSpec:
    line: int
    photo: Path | None  # None: animation files only
    output: str
    text: str | None = None
    text_file: Path | None = None
    audio: Path | None = None
    transcript: str | None = None  # the audio's words, when known
    reply: bool = False
    preset: str | None = None
    settings: tuple[tuple[str, str, object], ...] = ()  # (table, key, value) over the preset, from the columns


def _settings(row: dict, where: str) -> tuple[tuple[str, str, object], ...]:
    """The row's own settings, each checked here against the setting's rule, so that a bad value is
    blamed on its line and column before any job runs."""
    from ..config import RULES

    settings = []
    for column, (table, key, kind) in SETTING_COLUMNS.items():
        if column not in row:
            continue
        value = row[column]
        rule = RULES[f"{table}.{key}"]
        if kind is float:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise UsageError(f"{where}: column {column}: {value!r:.40} is not a number; it must be {rule.what}") from None
        elif column == "format":
            value = str(value).replace(" ", "")
        if not rule.allows(value):
            raise UsageError(f"{where}: column {column}: {value!r:.40} is not allowed; it must be {rule.what}")
        settings.append((table, key, value))
    return tuple(settings)


def _rows(path: Path) -> list[tuple[int, dict]]:
    try:
        content = path.read_text(encoding="utf-8-sig")  # a byte-order mark, as Excel writes one, is not a column
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read batch file {path}: {error}") from None
    if path.suffix.lower() == ".csv":
        reader = csv.reader(content.splitlines())
        header = next(reader, None)
        if not header:
            raise UsageError(f"{path}: the CSV has no header row")
        header = [h.strip() for h in header]
        rows = []
        for number, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise UsageError(f"{path}:{number}: {len(row)} fields, the header has {len(header)}")
            rows.append((number, {k: v.strip() for k, v in zip(header, row) if v.strip() != ""}))
        return rows
    rows = []
    for number, text in enumerate(content.splitlines(), start=1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path}:{number}: not valid JSON ({error.msg})") from None
        if not isinstance(value, dict):
            raise UsageError(f"{path}:{number}: each line must be a JSON object")
        rows.append((number, value))
    return rows


def _inside(path: Path, allowed: list[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for folder in allowed)


def preset_of(value: str | None, base: Path, folders: list[Path], where: str) -> str | None:
    """A shipped preset's name, or a .toml path confined like every other path of the batch."""
    if value is None or not value.endswith(".toml"):
        return value
    resolved = (base / value).resolve()
    if not _inside(resolved, folders):
        raise UsageError(f"{where}: preset {value!r} is outside the allowed folders; pass --allow DIR")
    return str(resolved)


def read_batch(path: Path, allowed: list[Path] | None = None) -> list[JobSpec]:
    from .input_files import check_file

    check_file(path, "batch file", UsageError)
    if path.suffix.lower() not in (".jsonl", ".csv"):
        raise UsageError(f"batch file must end in .jsonl or .csv: {path}")
    base = path.resolve().parent
    folders = [base] + [Path(a).resolve() for a in allowed or []]
    specs, outputs = [], {}
    for number, row in _rows(path):
        where = f"{path}:{number}"
        unknown = set(row) - COLUMNS
        if unknown:
            raise UsageError(f"{where}: unknown column {sorted(unknown)[0]!r}; columns: {', '.join(sorted(COLUMNS))}")

        def local(key: str) -> Path | None:
            if key not in row:
                return None
            resolved = (base / str(row[key])).resolve()
            if not _inside(resolved, folders):
                raise UsageError(f"{where}: {key} {row[key]!r} is outside the allowed folders; pass --allow DIR")
            return resolved

        for key, value in row.items():
            if (key == "reply" and isinstance(value, bool)) or (
                    SETTING_COLUMNS.get(key, (0, 0, str))[2] is float and isinstance(value, (int, float))):
                continue
            if not isinstance(value, str) or "\0" in value:
                raise UsageError(f"{where}: {key} must be a text without NUL characters, got {value!r:.40}")
        if "output" not in row:
            raise UsageError(f"{where}: output is required")
        sources = [k for k in ("text", "text_file", "audio") if k in row]
        if len(sources) != 1:
            raise UsageError(f"{where}: give exactly one of text, text_file, audio")
        if "transcript" in row and ("audio" not in row or not any(c.isalnum() for c in str(row["transcript"]))):
            raise UsageError(f"{where}: transcript gives the words of the audio: give it with audio, and words")
        output = str(row["output"])
        video = "photo" in row
        if not video and output.lower().endswith(".mp4"):
            raise UsageError(f"{where}: output {output!r} names a video but the job has no photo; "
                             "give a photo, or an output name without .mp4 for animation files only")
        if "/" in output or "\\" in output or output.startswith(".") or (video and not output.endswith(".mp4")):
            what = "a plain file name ending in .mp4" if video else "a plain file name (the stem of the animation files)"
            raise UsageError(f"{where}: output must be {what}, got {output!r}")
        if output in outputs:
            raise UsageError(f"{where}: output {output!r} is already used on line {outputs[output]}")
        outputs[output] = number
        reply = row.get("reply", False)
        if isinstance(reply, str):
            if reply.lower() not in _TRUE | _FALSE:
                raise UsageError(f"{where}: reply must be true or false, got {reply!r}")
            reply = reply.lower() in _TRUE
        specs.append(JobSpec(
            line=number, photo=local("photo"), output=output,
            text=str(row["text"]) if "text" in row else None, text_file=local("text_file"),
            audio=local("audio"), transcript=row.get("transcript"), reply=bool(reply), preset=preset_of(row.get("preset"), base, folders, where),
            settings=_settings(row, where),
        ))
    if not specs:
        raise UsageError(f"{path} holds no jobs")
    return specs
