# remelink developer tasks. Everything runs from a project-local virtual environment that
# `make install` creates, so a clean checkout needs nothing but Python 3.11.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
LLM_STAMP := $(VENV)/.installed-llm
MCP_STAMP := $(VENV)/.installed-mcp
BENCH_STAMP := $(VENV)/.installed-bench
# Tests and the demo never touch the network or a real key.
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true

.PHONY: install install-llm install-mcp install-bench test test-fast test-shipped lint bench bench-quality demo clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $@

$(LLM_STAMP): requirements/llm.lock | $(STAMP)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements/llm.lock
	@touch $@

$(MCP_STAMP): requirements/mcp.lock | $(STAMP)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements/mcp.lock
	@touch $@

$(BENCH_STAMP): requirements/bench.txt | $(STAMP)
	$(PY) -m pip install --quiet -r requirements/bench.txt
	@touch $@

install: $(STAMP)            ## the package, its runtime dependencies and the dev tools
install-llm: $(LLM_STAMP)    ## plus litellm (hash-locked) for the LLM engine
install-mcp: $(MCP_STAMP)    ## plus the MCP SDK (hash-locked) for `remelink mcp`
install-bench: $(BENCH_STAMP) ## plus the reference engines and peers the benchmarks compare with

# Tests run in parallel worker processes (pytest-xdist; `JOBS=1` for one process), each test
# taken by whichever worker is free, so the long ones do not queue behind each other.
JOBS ?= auto
BENCH_JOBS ?= 2               # `make bench-quality`: benches side by side (2 cores)
PYTEST := $(PY) -m pytest -q -n $(JOBS) --dist worksteal

test: $(LLM_STAMP) $(MCP_STAMP) ## every test, the slow tier included: what CI runs
	$(PYTEST)

test-fast: $(MCP_STAMP)      ## the edit loop: everything but the slow tier (tests/conftest.py)
	$(PYTEST) -m "not slow"

test-shipped: $(STAMP)       ## the default configuration as installed: the embedder loaded (also in `test`)
	$(PY) -m pytest -q -m shipped

lint: $(LLM_STAMP) $(MCP_STAMP) ## ruff, then mypy over the code as installed with its extras (the MCP server types against the SDK)
	$(BIN)/ruff check remelink tests bench
	$(BIN)/mypy

bench: $(BENCH_STAMP) $(LLM_STAMP)
	$(PY) bench/run_all.py

bench-quality: $(STAMP)      ## every quality table of docs/benchmarks.md at this commit, then the README's figures
	$(PY) bench/run_all.py --quality --jobs $(BENCH_JOBS)

DEMO_DIR ?= /tmp/remelink-demo
demo: $(STAMP)               ## the README's first command: dream run on a scratch copy of the demo vault
	rm -rf $(DEMO_DIR) && cp -r fixtures/demo-vault $(DEMO_DIR)
	$(BIN)/remelink dream run --vault $(DEMO_DIR)
	$(BIN)/remelink lint-links --vault $(DEMO_DIR)
	@echo "the distilled nodes are in $(DEMO_DIR)/digest/; rerun: nothing changes"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
