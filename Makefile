# Smriti developer commands. Everything runs from a project-local .venv that is
# installed from the hash-checked lock files; it is reinstalled only when a lock
# file (or pyproject.toml) changes.
#
#   make serve   run the server (HOST, PORT, ARGS are passed to `smriti serve`)
#   make test    run the test suite on SQLite and on PostgreSQL, both at once
#                (scripts/test-env starts a throw-away PostgreSQL and checks for
#                Chromium first)
#   make test-fast  the inner loop: domain, store and API tests on SQLite only
#   make lint    ruff check + mypy
#   make bench   run the benchmarks
#   make lock    regenerate requirements.lock and requirements-dev.lock

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
HOST ?= 127.0.0.1
PORT ?= 8000
ARGS ?=
PYTEST_ARGS ?=

# LiteLLM must never reach the network at import time (model cost map download).
export LITELLM_OFFLINE_MODE := true
export LITELLM_LOCAL_MODEL_COST_MAP := True

RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev
PYTEST_FAST := $(VENV)/bin/python -m pytest $(PYTEST_ARGS)
# The 25 slowest set-ups, tests and tear-downs close each pass's output (and CI's log).
PYTEST := $(PYTEST_FAST) --durations=25
# GraphiQL's assets for offline use (api/static/vendor); never fails the install:
# without them /graphql loads GraphiQL from its CDN.
FETCH_GRAPHIQL := $(VENV)/bin/python scripts/fetch-graphiql-assets || \
	echo "warning: GraphiQL assets not fetched; /graphql will load them from the CDN" >&2
ON_SQLITE := SMRITI_TEST_DB=sqlite
ON_POSTGRES := SMRITI_TEST_DB=postgres PGDATABASE=postgres
# Both passes at once: the database-neutral tests (marked so) run in the PostgreSQL
# pass, the shorter one (the browser tests are in the SQLite pass); see tests/conftest.py.
BOTH := SMRITI_TEST_PASSES=both
# Sets SMRITI_TEST_PG_URL (a throw-away cluster, unless it is already set) and makes
# sure Chromium is there; see the script.
TEST_ENV := scripts/test-env

.PHONY: serve test test-both test-fast test-sqlite test-postgres lint bench lock

serve: $(RUNTIME_STAMP)
	exec $(VENV)/bin/smriti serve --host $(HOST) --port $(PORT) $(ARGS)

# Both passes run to the end, at the same time (one core each: the suite's time is
# the longer pass, not the sum); the target fails if either does (including pytest's
# exit 5, "no tests ran").
test: $(DEV_STAMP)
	@$(TEST_ENV) $(MAKE) --no-print-directory test-both

# Inside scripts/test-env only (it sets SMRITI_TEST_PG_URL). The SQLite pass prints
# as it goes; the PostgreSQL pass's output is kept and printed after it, whole.
test-both: $(DEV_STAMP)
	@log=$$(mktemp); trap 'rm -f "$$log"' EXIT; sqlite=0; postgres=0; \
	echo "$(ON_POSTGRES) $(PYTEST)  (alongside; printed after the SQLite pass)"; \
	$(BOTH) $(ON_POSTGRES) $(PYTEST) >"$$log" 2>&1 & pid=$$!; \
	echo "$(ON_SQLITE) $(PYTEST)"; $(BOTH) $(ON_SQLITE) $(PYTEST) || sqlite=$$?; \
	wait $$pid || postgres=$$?; \
	echo "==> SQLite pass: exit $$sqlite; PostgreSQL pass: exit $$postgres; its output:"; \
	cat "$$log"; \
	[[ $$sqlite == 0 && $$postgres == 0 ]]

# Domain, store and API tests on SQLite: no PostgreSQL, no browser, no servers.
test-fast: $(DEV_STAMP)
	$(ON_SQLITE) $(PYTEST_FAST) tests/domain tests/store tests/api

test-sqlite: $(DEV_STAMP)
	$(TEST_ENV) env $(ON_SQLITE) $(PYTEST)

test-postgres: $(DEV_STAMP)
	$(TEST_ENV) env $(ON_POSTGRES) $(PYTEST)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy api

bench: $(DEV_STAMP)
	$(VENV)/bin/python -m bench $(ARGS)

lock:
	scripts/lock

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Smriti needs Python 3.11 or newer (PYTHON=$(PYTHON))" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): requirements.lock pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --require-hashes -r requirements.lock
	$(VENV)/bin/python -m pip install --no-deps --no-build-isolation -e .
	$(FETCH_GRAPHIQL)
	@touch $@

$(DEV_STAMP): requirements-dev.lock pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --require-hashes -r requirements-dev.lock
	$(VENV)/bin/python -m pip install --no-deps --no-build-isolation -e .
	$(FETCH_GRAPHIQL)
	@touch $@
