"""The aligners: speech + text -> timed phones (the voice's own timings, pocketsphinx in spans anchored
on the ASR's words, espeak-ng warped onto a recording, Montreal Forced Aligner), and the phone set
they share (phonemes).
"""
