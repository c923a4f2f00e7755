"""The voices: text -> speech with its own phone timings (Piper, Kokoro, espeak-ng, Coqui), chosen by
language (tts.make_tts), and how a text is read (mandarin).
"""
