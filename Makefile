# The README's commands are these targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install test lint simulate bench clean run upgrade

install: $(BIN)/rfg

# Every machine installs exactly what CI tested: the versions pinned in requirements.lock (made
# by uv from pyproject.toml's ranges), then the project itself without resolving anything again.
$(BIN)/rfg: pyproject.toml requirements.lock
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(BIN)/rfg

# Refresh the lock to the newest releases pyproject.toml allows (then run make test and commit it).
upgrade: install
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --upgrade --no-header -o requirements.lock
	$(BIN)/pip install -q -r requirements.lock

test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check engine bots events rfgcli ladder service workers tests bench
	$(BIN)/mypy engine bots events service workers ladder rfgcli

simulate: install
	$(BIN)/rfg simulate --players 4 --games 200 --seed 7 --json

bench: install
	$(BIN)/python bench/engine.py

# The REST API in the foreground (Ctrl-C stops it). Store: the embedded server in ./run/redis, or
# REDIS_URL (redis://host:port/db, unix:///path.sock). HOST, PORT, WORKERS, THREADS override.
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 2
THREADS ?= 8
run: install
	@echo "Roll for the Galaxy API: http://$(HOST):$(PORT)/  (contract: http://$(HOST):$(PORT)/openapi.yaml; store: $${REDIS_URL:-embedded server in ./run/redis})"
	$(BIN)/rfg worker & WORKER=$$!; trap 'kill $$WORKER 2>/dev/null' EXIT INT TERM; \
	RFG_DISPATCH=1 $(BIN)/gunicorn --bind $(HOST):$(PORT) --workers $(WORKERS) --worker-class gthread --threads $(THREADS) \
		--access-logfile - 'service:create_app()'

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
