# schedlab. `make help` lists the targets. Each target first makes .venv and installs the
# project with the extras it needs (pyproject.toml is the one list).
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
LAB_ARGS ?=
# the pipeline profile: default (in this checkout), teaching (faster, for a class) or paper (hours),
# both of which run in runs/PROFILE/; empty = default
PROFILE ?=
export PATH := $(abspath $(BIN)):$(PATH)

.DEFAULT_GOAL := help
.PHONY: help reproduce test lab lock bench notebooks-sync clean-outputs

help:  ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# one stamp per set of extras: `$(VENV)/.installed-test,trace` installs .[test,trace], every package at
# the exact version requirements/lock.txt names (pyproject.toml keeps ranges for library users)
LOCK := requirements/lock.txt
$(VENV)/.installed-%: pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[$*]'
	touch $@

# refresh the pinned versions on purpose (newest that pyproject.toml allows), then run `make reproduce`
# and commit dvc.lock with the new requirements/lock.txt: other versions can change outputs' last bits
lock:  ## re-pin requirements/lock.txt (then make reproduce, and commit dvc.lock with it)
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet -e '.[test,trace,lab]'
	{ sed -n '1,/^# ---/p' $(LOCK); .venv-lock/bin/python -m pip freeze --exclude-editable | sort -f; } > $(LOCK).new
	mv $(LOCK).new $(LOCK) && rm -rf .venv-lock

# the trace extra (torch CPU) is needed by nona_decima_train (REINFORCE gradients); inference
# everywhere else is NumPy. PROFILE=teaching|paper runs in runs/PROFILE/, a copy of the working
# tree: params.yaml, dvc.lock and git here stay as they were (schedlab reproduce --profile).
reproduce: $(VENV)/.installed-test,trace  ## every table and figure (PROFILE=default|teaching|paper)
ifeq ($(filter-out default,$(PROFILE)),)
	$(BIN)/schedlab fetch
	$(BIN)/dvc repro
	$(BIN)/schedlab timings
else
	$(BIN)/schedlab reproduce --profile $(PROFILE)
	SCHEDLAB_ROOT=$(abspath runs/$(PROFILE)) $(BIN)/schedlab timings
endif

# the trace extra (torch CPU, transformers) lets the GPT-2 tracer, Decima's torch cross-check
# and its training loop run as tests
test: $(VENV)/.installed-test,trace  ## the test suite, as CI runs it
	$(BIN)/python -m pytest

# on a server: make lab LAB_ARGS="--no-browser --ip=0.0.0.0 --port=8888", then open the printed URL
lab: $(VENV)/.installed-test,trace,lab  ## JupyterLab on the repository, open at notebooks/start_here.ipynb
	JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
		$(BIN)/jupyter lab --notebook-dir=. --LabApp.default_url=/lab/tree/notebooks/start_here.ipynb \
		$(LAB_ARGS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: $(VENV)/.installed-test,trace  ## speed figures (benchmarks/bench_*.py)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

notebooks-sync: $(VENV)/.installed-test,trace  ## re-pair notebooks/*.ipynb with their .py scripts after an edit
	$(BIN)/schedlab notebook sync

clean-outputs:  ## remove pipeline outputs (results/, figures/, executed notebooks)
	rm -rf results data/executed data/scratch figures/*/
