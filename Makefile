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
.PHONY: help reproduce test lab lab-trace lab-open lock bench notebooks-sync clean-outputs docs

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
	.venv-lock/bin/python -m pip install --quiet -e '.[test,trace,lab,docs]'
	{ sed -n '1,/^# ---/p' $(LOCK); .venv-lock/bin/python -m pip freeze --exclude-editable | sort -f; } > $(LOCK).new
	mv $(LOCK).new $(LOCK) && rm -rf .venv-lock

# the trace extra (torch CPU) is needed by nona_decima_train (REINFORCE gradients); inference
# everywhere else is NumPy. PROFILE=teaching|paper runs in runs/PROFILE/, a copy of the working
# tree: params.yaml, dvc.lock and git here stay as they were (schedlab reproduce --profile).
# How long each profile took, and at which load: README's profile table. Every run records its start,
# end and load in results/timings/reproduce_PROFILE.json (not a pipeline output); a failed run leaves
# it unfinished; `python tools/profile_table.py readme` puts complete runs into README's table.
REPRODUCE_CLOCK = $(BIN)/python tools/profile_table.py --profile $(or $(PROFILE),default)
reproduce: $(VENV)/.installed-test,trace  ## every table and figure (PROFILE=default|teaching|paper)
	$(REPRODUCE_CLOCK) start
ifeq ($(filter-out default,$(PROFILE)),)
	$(BIN)/schedlab fetch
	$(BIN)/dvc repro
	$(BIN)/schedlab timings
else
	$(BIN)/schedlab reproduce --profile $(PROFILE)
	SCHEDLAB_ROOT=$(abspath runs/$(PROFILE)) $(BIN)/schedlab timings
endif
	$(REPRODUCE_CLOCK) end

# the trace extra (torch CPU, transformers) lets the GPT-2 tracer, Decima's torch cross-check
# and its training loop run as tests. TEST_WORKERS: pytest-xdist workers (auto = one per core);
# --durations lists the slowest tests; pyproject.toml sets the per-test timeout.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25
test: $(VENV)/.installed-test,trace  ## the test suite, as CI runs it (lint, then all but the long tier)
	$(MAKE) --no-print-directory lint
	$(PYTEST_PARALLEL) -m "not long"

.PHONY: lint
lint: $(VENV)/.installed-test,trace  ## ruff: lint and format check (pyproject.toml [tool.ruff]); zero findings
	$(BIN)/ruff check
	$(BIN)/ruff format --check

.PHONY: test-all
test-all: $(VENV)/.installed-test,trace  ## make test plus the long reference equivalences
	$(PYTEST_PARALLEL)

# on a server: make lab LAB_ARGS="--no-browser --ip=0.0.0.0 --port=8888", then open the printed URL.
# No torch: only nona/decima_train (and the frozen GPT-2 tracer) need it; `make lab-trace` adds it.
lab: $(VENV)/.installed-lab  ## JupyterLab on the repository, open at notebooks/start_here.ipynb
	$(MAKE) --no-print-directory lab-open

lab-trace: $(VENV)/.installed-test,trace,lab  ## JupyterLab with torch (to run nona/decima_train)
	$(MAKE) --no-print-directory lab-open

# through `schedlab pinned`: the kernels compute under the CPU pins the pipeline runs with (same bits)
lab-open:
	JUPYTER_CONFIG_PATH="$(CURDIR)/.jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
		$(BIN)/schedlab pinned -- $(BIN)/jupyter lab --notebook-dir=. --LabApp.default_url=/lab/tree/notebooks/start_here.ipynb \
		$(LAB_ARGS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

bench: $(VENV)/.installed-test,trace  ## speed figures (benchmarks/bench_*.py)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

notebooks-sync: $(VENV)/.installed-test,trace  ## re-pair notebooks/*.ipynb with their .py scripts after an edit
	$(BIN)/schedlab notebook sync

clean-outputs:  ## remove pipeline outputs (results/, figures/, executed notebooks)
	rm -rf results data/executed data/scratch figures/*/

# the API reference from the numpydoc docstrings (pdoc), into docs/_build/api/ (git-ignored)
# every public module by name: pdoc lists only __all__'s entries under a package that defines
# __all__ (schedlab.nona, .pcs, .polaris do), which would leave their modules out
export PUBLIC_MODULES := import pkgutil, sys, schedlab; names = [m.name for m in pkgutil.walk_packages(schedlab.__path__, "schedlab.") if "._" not in m.name]; print("schedlab", *sorted(n for n in names if n.rpartition(".")[2] not in getattr(sys.modules[n.rpartition(".")[0]], "__all__", [n.rpartition(".")[2]])))
docs: $(VENV)/.installed-docs  ## API reference as HTML in docs/_build/api/ (pdoc)
	rm -rf docs/_build/api
	$(BIN)/pdoc --docformat numpy -o docs/_build/api $$($(BIN)/python -c "$$PUBLIC_MODULES")
	@echo "open docs/_build/api/index.html"
