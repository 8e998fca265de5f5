# The README's commands are these targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install test lint simulate bench clean

install: $(BIN)/rfg

$(BIN)/rfg: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(BIN)/rfg

test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check engine bots events rfgcli ladder tests bench
	$(BIN)/mypy engine bots

simulate: install
	$(BIN)/rfg simulate --players 4 --games 200 --seed 7 --json

bench: install
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
