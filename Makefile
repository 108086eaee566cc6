# schedlab: `make reproduce` (every table and figure), `make test` (the test suite, as CI runs it),
# `make lab` (JupyterLab on notebooks/), `make bench` (speed figures). Each target first makes
# .venv and installs the project with the extras it needs (pyproject.toml is the one list).
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
LAB_ARGS ?=
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: reproduce test lab bench clean-outputs

# one stamp per set of extras: `$(VENV)/.installed-test,trace` installs .[test,trace]
$(VENV)/.installed-%: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$*]'
	touch $@

# the trace extra (torch CPU) is needed by nona_decima_train (REINFORCE gradients); inference
# everywhere else is NumPy
reproduce: $(VENV)/.installed-test,trace
	$(BIN)/schedlab fetch
	$(BIN)/dvc repro

# the trace extra (torch CPU, transformers) lets the GPT-2 tracer, Decima's torch cross-check
# and its training loop run as tests
test: $(VENV)/.installed-test,trace
	$(BIN)/python -m pytest

lab: $(VENV)/.installed-test,trace,lab
	$(BIN)/jupyter lab --notebook-dir=notebooks $(LAB_ARGS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: $(VENV)/.installed-test,trace
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-outputs:
	rm -rf results data/executed data/scratch figures/*/
