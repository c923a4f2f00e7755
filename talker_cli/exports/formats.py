"""The animation formats talker writes: each name, and the suffix of its file beside the others (OUT +
suffix). A module of its own, importing nothing, so that the settings can name the formats without
importing the writers (which import the face's track, which takes its settings)."""

FORMATS = {
    "arkit-json": ".blendshapes.json",
    "livelink": ".livelink.csv",
    "gltf": ".gltf",
    "glb": ".glb",
    "rhubarb-tsv": ".tsv",
    "rhubarb-json": ".rhubarb.json",
    "rhubarb-xml": ".xml",
    "rhubarb-dat": ".dat",
    "vrm": ".vrm.json",
    "srt": ".srt",
    "vtt": ".vtt",
}
