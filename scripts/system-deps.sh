#!/usr/bin/env bash
# System packages talker needs on a fresh Debian/Ubuntu machine: ffprobe (tests check MP4s with
# it), the GL/GLib runtime that OpenCV and MediaPipe load, and espeak-ng (Coqui TTS phoneme
# models phonemize through it), Node and npm (the tests' glTF validator). Installs only what is missing.
set -euo pipefail
need=()
command -v ffprobe >/dev/null 2>&1 || need+=(ffmpeg)
ldconfig -p | grep -q 'libGL.so.1' || need+=(libgl1)
ldconfig -p | grep -q 'libglib-2.0.so.0' || need+=(libglib2.0-0)
command -v espeak-ng >/dev/null 2>&1 || need+=(espeak-ng)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)  # the tests validate glTF files with Khronos' validator
if [ ${#need[@]} -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
