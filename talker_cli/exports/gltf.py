"""glTF 2.0 (.gltf with the data inside, or .glb): one animation of a placeholder face mesh.

The mesh is one triangle carrying the 52 ARKit morph targets (names in mesh.extras.targetNames, as
three.js and Blender read them); the animation drives its morph-target weights and its node's
rotation from the track. Retarget it onto any character whose morph targets use ARKit's names.
"""

from __future__ import annotations

import base64
import json
import struct

import numpy as np

FLOAT, ARRAY_BUFFER = 5126, 34962


def _quaternions(head_deg: np.ndarray) -> np.ndarray:
    """(yaw, pitch, roll) degrees -> glTF quaternions (x, y, z, w): yaw about +Y, pitch about +X
    (nodding down, the face looking along +Z), roll about +Z, applied roll first."""
    yaw, pitch, roll = (np.radians(head_deg[:, i].astype(np.float64)) / 2 for i in range(3))

    def axis(angle, index):
        q = np.zeros((len(angle), 4))
        q[:, index] = np.sin(angle)
        q[:, 3] = np.cos(angle)
        return q

    def multiply(a, b):
        ax, ay, az, aw = a.T
        bx, by, bz, bw = b.T
        return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                         aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], axis=1)

    return multiply(multiply(axis(yaw, 1), axis(pitch, 0)), axis(roll, 2)).astype(np.float32)


def document(animation) -> tuple[dict, bytes]:
    """The glTF JSON (without the buffer's location) and its binary buffer."""
    track = animation.track
    n, k = track.frame_count, len(track.names)
    head = track.head if track.head is not None else np.zeros((n, 3), np.float32)
    blobs = [
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),  # the placeholder triangle
        np.zeros((3, 3), np.float32),  # every target's displacement (shared)
        ((np.arange(n) + 0.5) / track.fps).astype(np.float32),  # frame centres, seconds
        np.ascontiguousarray(track.weights, dtype=np.float32),
        _quaternions(head),
    ]
    views, offset, data = [], 0, b""
    for index, blob in enumerate(blobs):
        raw = blob.tobytes()
        view = {"buffer": 0, "byteOffset": offset, "byteLength": len(raw)}
        if index < 2:
            view["target"] = ARRAY_BUFFER
        views.append(view)
        data += raw + b"\0" * (-len(raw) % 4)
        offset = len(data)
    times = blobs[2]
    accessors = [
        {"bufferView": 0, "componentType": FLOAT, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
        {"bufferView": 1, "componentType": FLOAT, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [0, 0, 0]},
        {"bufferView": 2, "componentType": FLOAT, "count": n, "type": "SCALAR",
         "min": [float(times[0])], "max": [float(times[-1])]},
        {"bufferView": 3, "componentType": FLOAT, "count": n * k, "type": "SCALAR"},
        {"bufferView": 4, "componentType": FLOAT, "count": n, "type": "VEC4"},
    ]
    gltf = {
        "asset": {"version": "2.0", "generator": "talker"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "face", "mesh": 0}],
        "meshes": [{
            "name": "arkit-face",
            "primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 1}] * k}],
            "weights": [0.0] * k,
            "extras": {"targetNames": list(track.names)},
        }],
        "animations": [{
            "name": "speech",
            "samplers": [{"input": 2, "output": 3, "interpolation": "LINEAR"},
                         {"input": 2, "output": 4, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}},
                         {"sampler": 1, "target": {"node": 0, "path": "rotation"}}],
        }],
        "buffers": [{"byteLength": len(data)}],
        "bufferViews": views,
        "accessors": accessors,
    }
    return gltf, data


def to_gltf(animation) -> str:
    gltf, data = document(animation)
    gltf["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")
    return json.dumps(gltf, separators=(",", ":")) + "\n"


def to_glb(animation) -> bytes:
    gltf, data = document(animation)
    text = json.dumps(gltf, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(data), b"BIN\0") + data
    return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks
