# kvcli: `make demo` runs the main job on the built-in samples, `make test` runs the tests.
# Both work on a fresh machine: they make .venv, install kvcli with its extras, and (as root,
# when one is missing) apt-get install graphviz, chromium, chromium-driver, tmux, zsh and fish.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kvcli-installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: test-dist demo test test-all test-stress check bench install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@if ! command -v dot >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing graphviz (for the dot program)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "warning: graphviz's 'dot' is missing: install it (e.g. sudo apt-get install graphviz) to render images"; \
	  fi; \
	fi
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium + chromium-driver (for the HTML viewer's browser tests)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else \
	    echo "warning: chromium/chromedriver missing: the HTML viewer's browser tests will be skipped"; \
	  fi; \
	fi
	@if ! command -v tmux >/dev/null 2>&1 || ! command -v zsh >/dev/null 2>&1 || ! command -v fish >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing tmux, zsh and fish (for the terminal and completion tests)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux zsh fish >/dev/null; \
	  else \
	    echo "warning: tmux, zsh or fish missing: the terminal and completion tests that need them will be skipped"; \
	  fi; \
	fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,dist,check]'
	@touch $@

demo: $(STAMP)
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash examples/demo.sh

# pytest exits 5 when it collects no test: say so plainly instead of failing obscurely.
test: $(STAMP)
	@$(BIN)/python -m pytest -q --ignore=tests/dist; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5)"; exit 0; fi; exit $$rc

# The Ray suite in tests/dist (multi-process, two- and three-node clusters, network namespaces as root; about 6 minutes).
test-dist: $(STAMP)
	@$(BIN)/python -m pytest -q tests/dist; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5)"; exit 0; fi; exit $$rc

test-all: $(STAMP)
	@$(BIN)/python -m pytest -q -m "slow or not slow"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5)"; exit 0; fi; exit $$rc

# Only the stress tests (tests/stress: crash-safety, concurrency, fuzzing, resource limits).
test-stress: $(STAMP)
	@$(BIN)/python -m pytest -q -m slow tests/stress; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5)"; exit 0; fi; exit $$rc

# Lint (ruff) and types (mypy, strict on kvcli.store, kvcli.session, kvcli.symbol); settings in pyproject.toml.
check: $(STAMP)
	$(BIN)/ruff check kvcli tests bench examples tools
	$(BIN)/mypy

# MXNET_PYTHON=/path/to/python-with-mxnet-1.9.1 adds MXNet's KVStore side by side.
bench: $(STAMP)
	$(BIN)/python bench/report.py $(if $(MXNET_PYTHON),--mxnet-python $(MXNET_PYTHON))

clean:
	rm -rf $(VENV) out build *.egg-info
