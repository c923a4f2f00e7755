"""Montreal Forced Aligner as an aligner backend: a one-file corpus, `mfa align`, the TextGrid read back.

MFA is a conda package with Kaldi inside; talker calls its command and never downloads models: the
dictionary and acoustic model are local files or names already in MFA's pretrained-models folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..artifacts import Phone, PhoneTrack, Speech, Word
from ..audio_io import write_wav
from ..errors import ModelMissingError, StageError
from .phonemes import merge_adjacent, mfa_label


def mfa_root() -> Path:
    return Path(os.environ.get("MFA_ROOT_DIR") or Path.home() / "Documents" / "MFA")


def resolve_model(value: str, kind: str) -> str:
    """A path that exists, or a name present under MFA's pretrained_models/<kind>/."""
    if not value:
        raise ModelMissingError(f"MFA needs [alignment] mfa_{'acoustic_model' if kind == 'acoustic' else kind} in the preset")
    if Path(value).exists():
        return value
    folder = mfa_root() / "pretrained_models" / kind
    if any(p.stem == value or p.name == value for p in folder.glob("*")) if folder.is_dir() else False:
        return value
    raise ModelMissingError(f"MFA {kind} model {value!r} not found as a path or in {folder}; set it in the preset's [alignment] table")


def prepare_corpus(folder: Path, speech: Speech, text: str) -> Path:
    """MFA's corpus layout: speaker/utterance.wav beside utterance.lab holding the transcript."""
    speaker = folder / "corpus" / "speaker"
    speaker.mkdir(parents=True)
    write_wav(speaker / "utterance.wav", speech.samples, speech.sample_rate)
    (speaker / "utterance.lab").write_text(" ".join(text.split()) + "\n", encoding="utf-8")
    return folder / "corpus"


_INTERVAL = re.compile(r'xmin = ([\d.eE+-]+)\s*xmax = ([\d.eE+-]+)\s*text = "((?:[^"]|"")*)"')


def read_textgrid(content: str) -> dict[str, list[tuple[float, float, str]]]:
    """Tiers of a long-format TextGrid: {name: [(start, end, label), ...]}."""
    tiers: dict[str, list[tuple[float, float, str]]] = {}
    for block in re.split(r"item \[\d+\]:", content)[1:]:
        name = re.search(r'name = "([^"]*)"', block)
        if name is None:
            continue
        tiers[name.group(1)] = [(float(a), float(b), t.replace('""', '"'))
                                for a, b, t in _INTERVAL.findall(block.split("intervals: size", 1)[-1])]
    return tiers


def track_from_textgrid(content: str) -> PhoneTrack:
    tiers = read_textgrid(content)
    phones_tier = next((v for k, v in tiers.items() if "phone" in k.lower()), None)
    words_tier = next((v for k, v in tiers.items() if "word" in k.lower()), [])
    if phones_tier is None:
        raise StageError("MFA's TextGrid has no phones tier")
    phones = merge_adjacent(Phone(mfa_label(label), a, b) for a, b, label in phones_tier)
    words = tuple(Word(label, a, b) for a, b, label in words_tier if label and label not in ("<eps>", "sil", "spn"))
    return PhoneTrack(phones=tuple(phones), words=words, source="mfa")


class MfaAligner:
    name = "mfa"

    def __init__(self, dictionary: str, acoustic_model: str):
        self.dictionary_setting, self.acoustic_setting = dictionary, acoustic_model
        self.model_path = ""

    def load(self) -> None:
        self.command = shutil.which("mfa")
        if self.command is None:
            raise ModelMissingError("the mfa command is not on PATH; install Montreal Forced Aligner "
                                    "(conda install -c conda-forge montreal-forced-aligner) or use alignment.backend = \"auto\"")
        self.dictionary = resolve_model(self.dictionary_setting, "dictionary")
        self.acoustic = resolve_model(self.acoustic_setting, "acoustic")
        self.model_path = self.acoustic

    def align(self, speech: Speech, text: str, anchors: tuple[Word, ...] = ()) -> PhoneTrack:
        with tempfile.TemporaryDirectory(prefix="talker-mfa-") as tmp:
            folder = Path(tmp)
            corpus = prepare_corpus(folder, speech, text)
            out = folder / "aligned"
            command = [self.command, "align", "--clean", "--single_speaker", "--output_format", "long_textgrid",
                       str(corpus), self.dictionary, self.acoustic, str(out)]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            grids = sorted(out.rglob("*.TextGrid"))
            if result.returncode != 0 or not grids:
                reason = (result.stderr or result.stdout).strip().splitlines()
                raise StageError(f"mfa align failed: {reason[-1] if reason else 'no TextGrid written'}")
            return track_from_textgrid(grids[0].read_text(encoding="utf-8"))

    def unload(self) -> None:
        pass
