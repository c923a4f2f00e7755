"""talker: a face photo plus text or speech -> an MP4 of that face speaking, offline.

From Python: talker_cli.render(photo, output, text=...) and talker_cli.lipsync(output, text=...) run the
jobs the commands run and return their manifests (talker_cli/api.py); the command line is `talker`.
"""

__version__ = "0.1.0"

__all__ = ["JobRequest", "lipsync", "render", "run"]


def __getattr__(name: str):
    # Loaded when first used: `import talker_cli` stays light for the command line and the tests.
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'talker_cli' has no attribute {name!r}")
