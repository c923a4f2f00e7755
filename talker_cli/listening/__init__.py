"""Listening to a recording: Whisper's reading of it (asr, with the frames it is read in and where its
models come from) and where speech is heard in it (voice_activity)."""
