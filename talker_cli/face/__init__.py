"""The face: timed phonemes -> visemes -> blendshape weights -> frames of the photo -> the MP4.

visemes (timing rules), blendshapes (the track), emotions (tags and their blends), rig (the photo's
face as displacement fields), painter (the mouth's interior), frames (a frame of the video), video
(encoding). Pixels are made here and nowhere else.
"""
