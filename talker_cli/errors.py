"""Every exit code talker gives, and one exception hierarchy that carries them; the CLI turns an
exception into its code at one boundary (documented in the README)."""

import errno
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    INTERNAL = 1  # a bug: the message asks for a report, --verbose shows the traceback
    USAGE = 2  # bad flags, unknown or invalid preset or setting, output paths that cannot be used
    INPUT = 3  # photo, text or audio that cannot be used
    MODEL_MISSING = 4  # a model or library is missing
    RESOURCES = 5  # memory, GPU or disk space
    STAGE_FAILED = 6  # a stage failed while running
    NO_GPU = 7  # no GPU is usable for a job that needs one
    SOME_FAILED = 10  # batch: some jobs failed
    ALL_FAILED = 11  # batch: every job failed
    BUSY = 12  # the GPU is busy with another talker job (see --wait)
    INTERRUPTED = 130  # Ctrl-C
    TERMINATED = 143  # SIGTERM


class TalkerError(Exception):
    exit_code = ExitCode.STAGE_FAILED

    def __init__(self, message: str):
        # One line, always: batch logs and cron mails read better that way.
        super().__init__(" ".join(str(message).split()))


class UsageError(TalkerError):
    exit_code = ExitCode.USAGE


class InputError(TalkerError):
    exit_code = ExitCode.INPUT


class ModelMissingError(TalkerError):
    exit_code = ExitCode.MODEL_MISSING


class ResourceError(TalkerError):
    exit_code = ExitCode.RESOURCES


class StageError(TalkerError):
    exit_code = ExitCode.STAGE_FAILED


class NoGpuError(TalkerError):
    exit_code = ExitCode.NO_GPU


class BusyError(TalkerError):
    exit_code = ExitCode.BUSY


def os_error(error: OSError) -> TalkerError:
    """A file system refusal as one line: a full disk is short of resources, anything else is a path
    the user gave that cannot be used."""
    where = f" {error.filename}" if error.filename else ""
    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return ResourceError(f"cannot write{where}: {reason}; free some space and run again")
    return UsageError(f"cannot use{where}: {reason}")


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so every finally block (freeing the GPU, removing partial
    files) runs before the process exits."""


def stop_cleanly_on_sigterm() -> None:
    """SIGTERM raises Terminated in the main thread, so a job stops as it does on Ctrl-C."""
    import signal

    def terminate(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
