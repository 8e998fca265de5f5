# The README's commands are these targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install test test-all lint lint-web simulate bench clean run upgrade fast ts-client screenshots golden-ambition

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

# The quick tier: engine, events, the in-process service, bots, workers, ladders (real Redis where
# a test needs it), without the real servers, cluster, browser, chaos and idle waits. Its tests
# are independent (each its own fakeredis, key prefix and temp dirs), so pytest-xdist runs them
# on every CPU (-n auto; worksteal: an idle worker takes tests queued for a busy one).
test: install
	$(BIN)/pytest -m "not whole" -n auto --dist worksteal

# The whole suite, what CI runs (.ci/run): the quick tier as make test runs it, then the tests
# marked whole (real servers, clusters, network namespaces, browsers). Most of their time is
# waiting (timeouts, partitions, network delay, games paced by rate limits), so they run in
# WHOLE_JOBS pytest-xdist workers whatever the CPUs; --dist loadgroup keeps each xdist_group on
# one worker (the browser tests: one site, one Chromium; each half of the partition schedules:
# one deployment), and the tests that keep fixed port ranges take a slice of them each
# (tests/processes.py worker_ports).
WHOLE_JOBS ?= 4
test-all: install
	$(BIN)/pytest -m "not whole" -n auto --dist worksteal
	$(BIN)/pytest -m whole -n $(WHOLE_JOBS) --dist loadgroup

# The README's screenshots (docs/screenshots/), taken by the browser tests (tests/web: Chromium,
# the real API and Redis); the suite alone writes them to a temp folder.
screenshots: install
	RFG_SCREENSHOTS=docs/screenshots $(BIN)/pytest -m whole tests/web

lint: install lint-web
	$(BIN)/ruff check engine bots events rfgcli ladder service workers tests bench
	$(BIN)/ruff format --check engine bots events rfgcli ladder service workers tests bench clients
	$(BIN)/mypy engine bots events service workers ladder rfgcli
	$(BIN)/lint-imports  # the layers import one way (contracts in pyproject.toml)
	$(BIN)/vulture  # no dead code (settings in pyproject.toml, false positives in vulture_whitelist.py)

# The TypeScript client (clients/typescript): its npm packages exactly as package-lock.json pins
# them (npm ci, once), then the types openapi-typescript generates from openapi.yaml and the
# verifier and example bot compiled with tsc --strict against them. tests/clients runs them.
TS := clients/typescript
ts-client: $(TS)/node_modules/.package-lock.json
	cd $(TS) && npm run --silent build

$(TS)/node_modules/.package-lock.json: $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund

# The browser client (service/web/static: plain ES modules, no build step): ESLint, Prettier and
# tsc --checkJs against the types generated from openapi.yaml (the JSDoc types of its API calls
# and state; tsconfig.web.json), with the npm packages and configs of clients/typescript.
lint-web: $(TS)/node_modules/.package-lock.json $(TS)/src/generated/api.ts
	$(TS)/node_modules/.bin/eslint -c $(TS)/eslint.config.js service/web/static
	$(TS)/node_modules/.bin/prettier --config $(TS)/.prettierrc.json --check "service/web/static/*.{js,css,html}"
	$(TS)/node_modules/.bin/tsc -p $(TS)/tsconfig.web.json

# The types generated from openapi.yaml (npm run generate; not committed): made again when the
# spec changes, so that lint-web works on a fresh clone before make ts-client.
$(TS)/src/generated/api.ts: openapi.yaml $(TS)/node_modules/.package-lock.json
	cd $(TS) && npm run --silent generate

simulate: install
	$(BIN)/rfg simulate --players 4 --games 200 --seed 7 --json

# The Ambition golden logs (tests/golden/ambition, tests/events/verify/test_ambition_golden_logs.py),
# played by random bots with the synthetic components (made up). Made again only on purpose, when
# the Ambition rules or the synthetic file change, with the reason in the commit message.
AMBITION_SYNTHETIC := tests/data/ambition-synthetic.yaml
AMBITION_GOLDEN := tests/golden/ambition
golden-ambition: install
	@set -e; rules=$$($(BIN)/python -c 'from engine.phases.setup import RULES_VERSION; print(RULES_VERSION)'); \
	tmp=$$(mktemp -d); rm -f $(AMBITION_GOLDEN)/*.jsonl; mkdir -p $(AMBITION_GOLDEN); \
	for game in 2p 2p-objectives 3p-objectives; do \
	  n=$${game%%p*}; obj=$$(case $$game in *objectives) echo --objectives;; esac); \
	  $(BIN)/rfg simulate --ambition $$obj --components $(AMBITION_SYNTHETIC) --players $$n --games 1 \
	    --seed golden-ambition-v$$rules-$$game --rules $$rules --export $$tmp/$$game --no-progress >/dev/null; \
	  mv $$tmp/$$game/game-00000.jsonl $(AMBITION_GOLDEN)/ambition-rules$$rules-$$game.jsonl; \
	done; rm -rf $$tmp; cd $(AMBITION_GOLDEN) && sha256sum *.jsonl > SHA256SUMS && cat SHA256SUMS

bench: install
	$(BIN)/python bench/engine.py

# Optional compiled engine (docs/engine-speed.md): mypyc compiles the rules modules and the random
# bot into C extension modules next to their sources (*.so, git-ignored; the list is in
# engine/compiled.py), which Python then imports instead of the .py files; same results, fewer
# instructions per game (figures, with their machine and date: docs/engine-speed.md). The .py
# files stay the reference: edit them, then run `make fast` again (a stale module is refused at
# import). Back to pure Python: find engine bots -name '*.so' -delete
fast: install
	find engine bots -name '*.so' -delete
	$(BIN)/python -m engine.compiled

# The whole server in the foreground: the store, the API (gunicorn) and BOT_WORKERS supervised
# `rfg worker` processes (one that dies is restarted). Ctrl-C stops all of it, the embedded server
# too if this started it (else `rfg store stop` does). Store: the embedded server in ./run/redis,
# or REDIS_URL (redis://host:port/db, unix:///path.sock). HOST, PORT, WORKERS override.
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 2

BOT_WORKERS ?= 1
run: install
	$(BIN)/rfg run --host $(HOST) --port $(PORT) --workers $(WORKERS) --bot-workers $(BOT_WORKERS)

# Stops the embedded server (whatever is connected to it) and removes its data (./run) with the
# virtualenv and the caches. An external Redis (REDIS_URL) is left alone.
clean:
	@if [ -x $(BIN)/rfg ]; then $(BIN)/rfg store stop --force --url embedded://run/redis; \
	elif [ -S run/redis/server.sock ]; then echo "no $(BIN)/rfg to stop the embedded server in run/redis: stop it (kill \$$(cat run/redis/server.pid)) before removing run/"; exit 1; fi
	rm -rf run $(VENV) .pytest_cache .mypy_cache .ruff_cache
