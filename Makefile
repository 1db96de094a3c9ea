# Two entry points, both doing all set-up on a fresh machine:
#   make demo   - virtual environment, install, solve a bundled example
#   make test   - the same set-up, then the test suite (what CI runs)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs bench bench-load bench-dense slow cluster chromium serve load fuzz lowest
demo: $(STAMP)
	$(BIN)/routecalc demo

# the default suite on both cores (pytest-xdist), then the cluster suite, which starts its own Ray nodes
test: $(STAMP) chromium lint docs
	$(BIN)/pytest -n 2
	$(BIN)/pytest -m cluster

# ruff (lint and format check) and mypy --strict on the public modules (pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# the documentation site (docs/, mkdocs.yml); --strict: a broken link or reference fails
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site

# Debian's Chromium for the browser test (Playwright drives it; it never downloads a browser)
chromium:
	command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

serve: $(STAMP)
	$(BIN)/routecalc serve

load: $(STAMP)
	$(BIN)/python benchmarks/load_test.py

# the stress set with a 10 s limit, idle and beside two busy processes per core
bench-load: $(STAMP)
	$(BIN)/python benchmarks/load_quality.py

# 200 dense boards of each set (long trains; three or four shorter ones) with a 10 s limit, one core
bench-dense: $(STAMP)
	$(BIN)/python benchmarks/dense_boards.py long
	$(BIN)/python benchmarks/dense_boards.py four

# The long fuzz run: 10,000 mutated positions and route sets through the API, the CLI and the service
fuzz: $(STAMP)
	$(BIN)/python tests/fuzz.py --cases $(or $(FUZZ_CASES),10000) --seed $(or $(FUZZ_SEED),1)

slow: $(STAMP)
	$(BIN)/pytest -n 2 -m slow

# batch --address on a real two-node Ray cluster on this machine (make test runs it too)
cluster: $(STAMP)
	$(BIN)/pytest -m cluster

# The default suite on the lowest versions pyproject.toml allows (uv's lowest-direct
# resolution), in a virtual environment of its own: the lower bounds are ones that work
LOWEST ?= .venv-lowest
lowest: $(STAMP) chromium
	$(BIN)/pip install -q uv
	$(BIN)/uv venv -q --seed --allow-existing $(LOWEST)
	$(BIN)/uv pip install -q --compile-bytecode -p $(LOWEST)/bin/python --resolution lowest-direct -e '.[test,cluster,bench]'
	$(LOWEST)/bin/pytest -n 2

bench: $(STAMP)
	$(BIN)/pytest benchmarks --benchmark-only -m "not slow or slow" -p no:cacheprovider

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,cluster,bench]'
	touch $(STAMP)
