# Smriti developer commands. Everything runs from a project-local .venv that is
# installed from the hash-checked lock files; it is reinstalled only when a lock
# file (or pyproject.toml) changes.
#
#   make serve   run the server (HOST, PORT, ARGS are passed to `smriti serve`)
#   make test    run the test suite on SQLite, then on PostgreSQL (scripts/test-env
#                starts a throw-away PostgreSQL and checks for Chromium first)
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
PYTEST := $(VENV)/bin/python -m pytest $(PYTEST_ARGS)
# GraphiQL's assets for offline use (api/static/vendor); never fails the install:
# without them /graphql loads GraphiQL from its CDN.
FETCH_GRAPHIQL := $(VENV)/bin/python scripts/fetch-graphiql-assets || \
	echo "warning: GraphiQL assets not fetched; /graphql will load them from the CDN" >&2
ON_SQLITE := SMRITI_TEST_DB=sqlite
ON_POSTGRES := SMRITI_TEST_DB=postgres PGDATABASE=postgres
# Sets SMRITI_TEST_PG_URL (a throw-away cluster, unless it is already set) and makes
# sure Chromium is there; see the script.
TEST_ENV := scripts/test-env

.PHONY: serve test test-both test-sqlite test-postgres lint bench lock

serve: $(RUNTIME_STAMP)
	exec $(VENV)/bin/smriti serve --host $(HOST) --port $(PORT) $(ARGS)

# Both runs happen even if the first fails; the target fails if either does
# (including pytest's exit 5, "no tests ran").
test: $(DEV_STAMP)
	@$(TEST_ENV) $(MAKE) --no-print-directory test-both

# Inside scripts/test-env only (it sets SMRITI_TEST_PG_URL).
test-both: $(DEV_STAMP)
	@status=0; \
	echo "$(ON_SQLITE) $(PYTEST)"; $(ON_SQLITE) $(PYTEST) || status=$$?; \
	echo "$(ON_POSTGRES) $(PYTEST)"; $(ON_POSTGRES) $(PYTEST) || status=$$?; \
	exit $$status

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
