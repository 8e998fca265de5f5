"""Fixtures for the API tests.

* ``app`` - the app on its own fakeredis (``memory://<unique>``), an admin token, short SSE bounds;
* ``api`` - a Flask test client that validates every request and response against openapi.yaml
  (openapi-core) and fails the test on any mismatch;
* ``real_app`` - the app on the real Redis at ``$REDIS_URL`` (default: database 15 of the local server, see tests/conftest.py)
  with a unique key prefix, cleaned up afterwards; skipped locally without a server, a failure
  under ``CI`` (the pattern of tests/events/conftest.py);
* helpers to create a game, claim seats and play it with bots through HTTP.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from openapi_core import Config, OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from werkzeug.test import EnvironBuilder, TestResponse
from werkzeug.wrappers import Request, Response

from bots import get_bot
from engine.rng import Rng
from rfgcli.wsgi import create_app
from tests.conftest import REDIS_URL, purge_prefix

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "openapi.yaml"
ADMIN = "admin-secret-for-tests"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8")


def stream_events(spec: dict[str, Any]) -> Callable[[bytes], dict[str, Any]]:
    """openapi-core's reader of ``text/event-stream`` bodies: the spec's schema there describes one
    event (OpenAPI 3.2's ``itemSchema``; schemathesis reads it so too), so this checks every event
    of the stream - and its JSON data - against it, then hands openapi-core the first one."""
    from openapi_schema_validator import OAS31Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    from rfg_client import parse_sse

    registry: Registry = Registry().with_resource(
        "urn:spec", Resource.from_contents(spec, default_specification=DRAFT202012)
    )

    def check(name: str, value: Any) -> None:
        v = OAS31Validator({"$ref": f"urn:spec#/components/schemas/{name}"}, registry=registry)
        errors = [e.message for e in v.iter_errors(value)]
        assert not errors, f"{name} {value!r} does not match openapi.yaml: {errors}"

    def read(raw: bytes) -> dict[str, Any]:
        events = []
        for kind, data, ident in parse_sse(raw.splitlines(keepends=True)):
            event: dict[str, Any] = {"event": kind, "data": data}
            if ident is not None:
                event["id"] = ident
            parsed = json.loads(data) if data[:1] == "{" else None
            if isinstance(parsed, dict) and parsed.get("type") == kind:  # an account's events
                check("AccountStreamEvent", event)
                check("AccountEvent", parsed)
            elif kind == "decision" and ident is not None:  # a bot account's decisions stream
                check("DecisionStreamEvent", event)
                check("PendingDecision", json.loads(data))
            elif kind == "challenge":  # a challenge on a bot account's decisions stream
                check("ChallengeStreamEvent", event)
                check("Challenge", json.loads(data))
            else:  # a game's stream: game events, a seat's turn signal, the end
                check("StreamEvent", event)
                check(
                    {"message": "FeedItem", "decision": "TurnSignal"}.get(kind, "StreamEnd"),
                    json.loads(data),
                )
                check("StreamFrame", {**event, "data": json.loads(data)})
            events.append(event)
        return events[0] if events else {"event": "message", "data": "{}"}

    return read


#: whether openapi-core is reading a response (``ValidatingClient`` sets it): a log upload's
#: lines are anything, a log export's are ``LogLine``s
READING_RESPONSE = False


def _log_line_branch(line: Any) -> str:
    """The branch of ``LogLine``'s ``oneOf`` that a line's shape says it is."""
    if not isinstance(line, dict):
        return "LogLine"  # no branch takes it: the whole schema says why
    if "hash" in line and "type" in line:
        return f"{line['type']}Envelope"
    if "signature" in line:
        return "LogSignatureLine"
    if "seed_withheld" in line:
        return "LogWithheldLine"
    return "FeedItem"


def log_lines(spec: dict[str, Any]) -> Callable[[bytes], Any]:
    """openapi-core's reader of ``application/x-ndjson`` log exports: the spec's schema there
    describes one line (``LogLine``), so this checks every line against it, then hands
    openapi-core the first line. Every line is checked against the branch of ``LogLine``'s
    ``oneOf`` its shape picks (an envelope against the schema of its own type, a feed item against
    ``FeedItem``...), and the first line of each shape in an answer (its kind and event type)
    against the whole ``LogLine`` too, which proves that exactly one branch takes it: the same
    result at a fraction of the cost (a feed item tried against every envelope's schema takes
    about 5 ms)."""
    from openapi_schema_validator import OAS31Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    registry: Registry = Registry().with_resource(
        "urn:spec", Resource.from_contents(spec, default_specification=DRAFT202012)
    )
    validators: dict[str, OAS31Validator] = {}

    def check(name: str, value: Any) -> None:
        if name not in validators:
            ref = f"urn:spec#/components/schemas/{name}"
            validators[name] = OAS31Validator({"$ref": ref}, registry=registry)
        errors = [e.message for e in validators[name].iter_errors(value)]
        where = name if name == "LogLine" else f"{name}, the branch of LogLine its shape picks"
        assert not errors, f"log line {value!r:.300} does not match {where}: {errors}"

    def read(raw: bytes) -> Any:
        if not READING_RESPONSE:  # an upload (POST /replays/verify): any text, as the spec says
            return _text(raw)
        lines = [json.loads(line) for line in raw.splitlines()]
        shapes: set[tuple[str, Any]] = set()
        for line in lines:
            branch = _log_line_branch(line)
            shape = (branch, line.get("type") if isinstance(line, dict) else None)
            check(branch, line)
            if shape not in shapes:
                shapes.add(shape)
                check("LogLine", line)
        return lines[0] if lines else {}

    return read


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return load_openapi()


def load_openapi() -> OpenAPI:
    """openapi.yaml as openapi-core reads it, with the readers of its bodies that are not plain
    JSON (the ``openapi`` fixture; bench scripts call it directly)."""
    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    # bodies that are not plain JSON: openapi-core hands them over as bytes unless told
    config = Config(
        extra_media_type_deserializers={
            "application/x-ndjson": log_lines(spec),
            "text/event-stream": stream_events(spec),
            "application/yaml": yaml.safe_load,
            "application/schema+json": json.loads,
            "image/svg+xml": _text,
            "text/plain": _text,
            "application/problem+json": json.loads,
        }
    )
    return OpenAPI.from_file_path(str(SPEC_PATH), config=config)


def exchange_errors(spec: OpenAPI, x: dict[str, Any]) -> list[str]:
    """What openapi.yaml finds wrong with one recorded exchange (request and response) of a
    client over HTTP: ``method``, ``url``, ``request_headers``, ``request_body``, ``status``,
    ``headers``, ``body`` (as the example bots' ``RFG_RECORD`` writes them)."""
    global READING_RESPONSE
    url = urlsplit(x["url"])
    builder = EnvironBuilder(
        method=x["method"],
        path=url.path,
        query_string=url.query,
        base_url=f"{url.scheme}://{url.netloc}",
        headers=x["request_headers"],
        data=x["request_body"].encode("utf-8"),
    )
    try:
        req = WerkzeugOpenAPIRequest(Request(builder.get_environ()))
    finally:
        builder.close()
    drop = ("content-length", "content-encoding", "transfer-encoding")
    headers = {k: v for k, v in x["headers"].items() if k.lower() not in drop}
    resp = Response(x["body"].encode("utf-8"), status=x["status"], headers=headers)
    errors = [repr(e) for e in spec.iter_request_errors(req)]
    READING_RESPONSE = True
    try:
        errors += [repr(e) for e in spec.iter_response_errors(req, WerkzeugOpenAPIResponse(resp))]
    finally:
        READING_RESPONSE = False
    return errors


class ValidatingClient(FlaskClient):
    """A test client that checks requests and responses against the OpenAPI document.

    By default every call is checked. With ``sample = k`` (long games), a call is checked when its
    shape is new - (method, route, status, the command or decision kind) - and otherwise every
    k-th call, so every kind of request and answer is still covered at a fraction of the cost
    (openapi-core takes about 15 ms per call on the view schemas). ``validate=False`` on a call
    skips the check (deliberately off-spec requests: unknown paths, undocumented media types).
    """

    spec: OpenAPI
    sample: int = 1
    calls = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: set[tuple[Any, ...]] = set()

    def open(self, *args: Any, validate: bool = True, **kwargs: Any) -> TestResponse:
        if not validate or (args and not isinstance(args[0], str)):
            return super().open(*args, **kwargs)
        kwargs.pop("buffered", None)
        follow = kwargs.pop("follow_redirects", False)
        builder = EnvironBuilder(*args, **kwargs)
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        body = environ["wsgi.input"].read()
        environ["wsgi.input"] = io.BytesIO(body)
        check_env = dict(environ, **{"wsgi.input": io.BytesIO(body)})
        resp = super().open(environ, follow_redirects=follow)
        self.calls += 1
        key = _shape(check_env, body, resp)
        if self.sample > 1 and key in self.seen and self.calls % self.sample:
            return resp
        self.seen.add(key)
        req = WerkzeugOpenAPIRequest(Request(check_env))
        errors = [
            repr(e) + _causes(e)
            for e in self.spec.iter_request_errors(req)
            # a request without valid credentials is off-spec on purpose when it gets its 401
            if not (resp.status_code == 401 and type(e).__name__ == "SecurityValidationError")
        ]
        global READING_RESPONSE
        READING_RESPONSE = True
        try:
            errors += [
                repr(e) + _causes(e)
                for e in self.spec.iter_response_errors(req, WerkzeugOpenAPIResponse(resp))
            ]
        finally:
            READING_RESPONSE = False
        assert not errors, (
            f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']} -> {resp.status_code} "
            f"does not match openapi.yaml: {errors}\nbody: {resp.get_data()[:800]!r}"
        )
        return resp


def _shape(environ: dict[str, Any], body: bytes, resp: TestResponse) -> tuple[Any, ...]:
    """(method, route, status, command kind, decision kind) of one call."""
    rule = re.sub(
        r"/seats/\d+", "/seats/{n}", re.sub(r"^/games/[^/]+", "/games/{id}", environ["PATH_INFO"])
    )
    kind = decision = None
    if body[:1] == b"{":
        try:
            kind = (json.loads(body).get("command") or {}).get("kind")
        except (ValueError, AttributeError):
            kind = None
    if resp.mimetype == "application/json" and b'"decision"' in resp.get_data():
        d = (resp.get_json().get("view") or {}).get("decision")
        decision = d.get("kind") if isinstance(d, dict) else None
    return environ["REQUEST_METHOD"], rule, resp.status_code, kind, decision


def _causes(e: BaseException) -> str:
    out = []
    c = e.__cause__
    while c is not None:
        errs = getattr(c, "schema_errors", None)
        out.append(repr(c)[:300] + (f" {[str(x)[:300] for x in errs]}" if errs else ""))
        c = c.__cause__
    return (" <- " + " <- ".join(out)) if out else ""


def make_app(url: str, **extra: Any) -> Flask:
    config = {
        "STORE_URL": url,
        "ADMIN_TOKEN": ADMIN,
        "SSE_MAX_SECONDS": 1.0,
        "SSE_KEEPALIVE_SECONDS": 0.2,
        "TESTING": True,
        # tests create games and make requests far faster than any client may: limits off here
        # (tests/service/test_limits.py turns them on)
        "RATE_LIMITS": False,
    }
    config.update(extra)
    return create_app(config)


@pytest.fixture
def app() -> Flask:
    return make_app(f"memory://{uuid.uuid4().hex}")


def _client(app: Flask, openapi: OpenAPI) -> ValidatingClient:
    app.test_client_class = ValidatingClient
    client = app.test_client()
    assert isinstance(client, ValidatingClient)
    client.spec = openapi
    return client


@pytest.fixture
def api(app: Flask, openapi: OpenAPI) -> ValidatingClient:
    return _client(app, openapi)


@pytest.fixture
def real_app(real_redis: Any) -> Iterator[Flask]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(REDIS_URL, STORE_PREFIX=prefix)
    yield app
    purge_prefix(real_redis, prefix)


@pytest.fixture
def real_api(real_app: Flask, openapi: OpenAPI) -> ValidatingClient:
    return _client(real_app, openapi)


# --- helpers ----------------------------------------------------------------------------------


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_game(
    api: FlaskClient,
    players: int = 2,
    seed: str | None = None,
    claim: bool = True,
    **body: Any,
) -> tuple[str, dict[int, str]]:
    """Create a game of human seats (seeded with the admin token when ``seed``), claim them all."""
    payload: dict[str, Any] = {"seats": [{"kind": "human"} for _ in range(players)], **body}
    headers = {}
    if seed is not None:
        payload["seed"] = seed
        headers = bearer(ADMIN)
    r = api.post("/games", json=payload, headers=headers)
    assert r.status_code == 201, r.get_json()
    gid: str = r.get_json()["game_id"]
    tokens: dict[int, str] = {}
    if claim:
        for seat in range(players):
            r = api.post(f"/games/{gid}/seats/{seat}/claim")
            assert r.status_code == 201, r.get_json()
            tokens[seat] = r.get_json()["token"]
    return gid, tokens


def play_http(
    api: FlaskClient,
    gid: str,
    tokens: dict[int, str],
    *,
    seed: int = 1,
    bot: str = "random",
    max_commands: int = 3000,
    on_step: Callable[[int, dict[str, Any]], None] | None = None,
) -> int:
    """Play the game to its end with a bot on every seat, through HTTP only: read the public view
    for who is pending, the seat's view for its decision, post the bot's command with the version
    it saw. ``on_step(n, public_view_response)`` runs before every command. Returns the number of
    commands."""
    b = get_bot(bot)
    rng = Rng(seed)
    n = 0
    while n < max_commands:
        pub = api.get(f"/games/{gid}/view").get_json()
        if pub["view"]["step"] == "over":
            return n
        if on_step is not None:
            on_step(n, pub)
        seat = min(int(s) for s in pub["view"]["pending"])
        sv = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat])).get_json()
        decision = sv["view"]["decision"]
        command = b.act(decision, sv["view"] if b.needs_view else None, rng)
        r = api.post(
            f"/games/{gid}/seats/{seat}/commands",
            json={"command_id": f"c{n}", "expected_version": sv["version"], "command": command},
            headers=bearer(tokens[seat]),
        )
        assert r.status_code == 201, (r.get_json(), command)
        assert r.get_json()["version"] > sv["version"]
        n += 1
    raise AssertionError(f"the game did not end within {max_commands} commands")
