"""A run's scratch folder is removed when the run ends, and by a later run when the run was killed."""

from __future__ import annotations

import fcntl
import os
import time

from talker_cli.jobs.work_folder import LOCK, STALE_S, remove_abandoned, work_folder


def test_a_killed_runs_folder_goes_and_a_living_runs_stays(tmp_path, monkeypatch):
    old = time.time() - STALE_S - 60

    def folder(name: str, age: float = old, locked: bool = False) -> object:
        path = tmp_path / name
        path.mkdir()
        (path / "speech.wav").write_bytes(b"RIFF")
        fd = None
        if locked:
            fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            (path / LOCK).write_bytes(b"")
        os.utime(path, (age, age))
        return fd

    folder("talker-run-killed01")
    living = folder("talker-run-living01", locked=True)
    folder("talker-ab12cd34")  # an older talker's, which had no lock
    folder("talker-run-recent01", age=time.time())  # too new to judge
    folder("talker-locks-0")  # the GPU locks, and MFA's folder inside a run: not scratch folders
    folder("talker-mfa-ab12cd34")
    (tmp_path / "talker-run-linked01").symlink_to(tmp_path / "talker-locks-0")
    remove_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "talker-locks-0", "talker-mfa-ab12cd34", "talker-run-linked01", "talker-run-living01", "talker-run-recent01"]
    os.close(living)
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
    remove_abandoned(tmp_path)  # another user's run leaves this user's folders be
    assert (tmp_path / "talker-run-living01").is_dir()
    monkeypatch.setattr(os, "getuid", lambda: real_uid)
    remove_abandoned(tmp_path)
    assert not (tmp_path / "talker-run-living01").exists()  # its run has ended without cleaning up


def test_a_run_holds_its_folder_while_it_lives_and_removes_it_after(tmp_path, monkeypatch):
    from talker_cli.jobs.outputs import held

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with work_folder() as root:
        assert root.parent == tmp_path and held(root / LOCK)
        os.utime(root, (0, 0))
        remove_abandoned(tmp_path)  # another run starting now: old, but locked
        assert root.is_dir()
    assert not root.exists()
