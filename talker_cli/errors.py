"""One exception hierarchy; the CLI turns each class into its exit code.

Exit codes (documented in the README):
  0  success
  2  usage: bad flags, unknown or invalid preset, output folder missing
  3  bad input: photo, text or audio that cannot be used
  4  missing model or library
  5  insufficient resources (memory, GPU)
  6  a stage failed while running
  7  no GPU is usable for a job that needs one
  10 batch: some jobs failed;  11 batch: every job failed
  12 the GPU is busy with another talker job (see --wait)
  130 interrupted (Ctrl-C);  143 terminated (SIGTERM)
"""


class TalkerError(Exception):
    exit_code = 6

    def __init__(self, message: str):
        # One line, always: batch logs and cron mails read better that way.
        super().__init__(" ".join(str(message).split()))


class UsageError(TalkerError):
    exit_code = 2


class InputError(TalkerError):
    exit_code = 3


class ModelMissingError(TalkerError):
    exit_code = 4


class ResourceError(TalkerError):
    exit_code = 5


class StageError(TalkerError):
    exit_code = 6


class NoGpuError(TalkerError):
    exit_code = 7


EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_TERMINATED = 143  # SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so every finally block (freeing the GPU, removing partial
    files) runs before the process exits."""
