# schedlab: `make reproduce` (every table and figure), `make test` (the test suite, as CI runs it),
# `make lab` (JupyterLab on notebooks/). Each target first makes .venv and installs the project.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
EXTRAS ?= test
STAMP := $(VENV)/.installed-$(EXTRAS)
LAB_ARGS ?=
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: venv reproduce test lab bench clean-outputs

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

reproduce: venv
	$(BIN)/schedlab fetch
	$(BIN)/dvc repro

test: venv
	$(BIN)/python -m pytest

lab:
	$(MAKE) venv EXTRAS=test,lab
	$(BIN)/jupyter lab --notebook-dir=notebooks $(LAB_ARGS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: venv
	$(BIN)/python benchmarks/bench_contraction.py

clean-outputs:
	rm -rf results data/executed data/scratch figures/nona
