"""talker: a face photo plus text or speech -> an MP4 of that face speaking, offline."""

__version__ = "0.1.0"
