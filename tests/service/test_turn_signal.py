"""The turn signal of a seat's stream (``event: decision``): the decision the seat owes, sent
after the events that made it pending, once per decision; on every (re)connect, resuming with
``Last-Event-ID`` or not, the decision pending then is sent once after the missed events, and
nothing while the seat owes nothing. Every frame is checked against openapi.yaml (``TurnSignal``)
by the validating client."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from flask import Flask
from rfg_client import parse_sse

import engine.fold
from events.games.projections import view_name

from .conftest import SPEC_PATH, ValidatingClient, bearer, make_app, new_game

Frame = tuple[str, str, Any]


@pytest.fixture
def app() -> Flask:
    """The app of the ``api`` client, its streams closing after 0.4 s: nothing else acts on the
    game while a test reads one, and a stream sends what it owes at once, so a longer stream
    would add only keep-alives - as many as before (one each 0.1 s), each a chance to repeat
    a signal."""
    return make_app(f"memory://{uuid.uuid4().hex}", SSE_MAX_SECONDS=0.4, SSE_KEEPALIVE_SECONDS=0.1)


def _stream(
    api: ValidatingClient, gid: str, seat: int, token: str, last: int | None
) -> list[Frame]:
    headers = bearer(token)
    if last is not None:
        headers["Last-Event-ID"] = str(last)
    r = api.get(f"/games/{gid}/seats/{seat}/events/stream", headers=headers)
    assert r.status_code == 200
    return list(parse_sse(r.get_data().splitlines(keepends=True)))


def _signals(frames: list[Frame]) -> list[dict[str, Any]]:
    return [json.loads(data) for kind, data, _id in frames if kind == "decision"]


def _seqs(frames: list[Frame]) -> list[int]:
    return [int(i) for kind, _d, i in frames if kind == "message"]


def _seat_view(api: ValidatingClient, gid: str, seat: int, token: str) -> dict[str, Any]:
    out: dict[str, Any] = api.get(
        f"/games/{gid}/seats/{seat}/view", headers=bearer(token)
    ).get_json()
    return out


def _answer(api: ValidatingClient, gid: str, seat: int, token: str, signal: dict[str, Any]) -> None:
    decision = signal["decision"]
    command = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
    r = api.post(
        f"/games/{gid}/seats/{seat}/commands",
        json={"command_id": f"s{seat}", "decision_id": signal["decision_id"], "command": command},
        headers=bearer(token),
    )
    assert r.status_code == 201, r.get_json()


def test_the_seat_stream_signals_each_decision_once_and_again_on_every_reconnect(
    api: ValidatingClient,
) -> None:
    gid, tokens = new_game(api, players=2, seed="turn-signal-1")

    # a first connection: the backlog, then the decision owed now, after the events
    frames = _stream(api, gid, 0, tokens[0], None)
    (signal,) = _signals(frames)
    kinds = [k for k, _d, _i in frames]
    assert kinds[-1] == "decision" and set(kinds[:-1]) == {"message"}
    assert all(i is None for k, _d, i in frames if k == "decision"), "no id: Last-Event-ID stays"
    seen = _seqs(frames)[-1]
    view = _seat_view(api, gid, 0, tokens[0])
    assert signal["decision"] == view["view"]["decision"]
    assert (
        signal["kind"] == "start_tiles"
        and signal["decision_id"] == view["view"]["decision"]["decision_id"]
    )
    assert signal["view"] == view["view"] and signal["game_version"] == view["version"]
    assert signal["links"]["commands"] == f"/games/{gid}/seats/0/commands"

    # resuming with nothing missed: the decision still owed comes once more, alone
    frames = _stream(api, gid, 0, tokens[0], seen)
    assert _seqs(frames) == [] and [s["decision_id"] for s in _signals(frames)] == [
        signal["decision_id"]
    ]

    # answered: the seat owes nothing until seat 1 answers; no signal, the new events only
    _answer(api, gid, 0, tokens[0], signal)
    frames = _stream(api, gid, 0, tokens[0], seen)
    assert _seqs(frames) and _signals(frames) == []
    seen = _seqs(frames)[-1]

    # seat 1 answers from its own signal; the round starts and seat 0 owes its assignment: the
    # reconnect carries the events it missed, then that decision once
    (other,) = _signals(_stream(api, gid, 1, tokens[1], None))
    _answer(api, gid, 1, tokens[1], other)
    frames = _stream(api, gid, 0, tokens[0], seen)
    (assign,) = _signals(frames)
    assert _seqs(frames)[0] == seen + 1 and [k for k, _d, _i in frames][-1] == "decision"
    assert assign["kind"] == "assign" and assign["decision_id"] > signal["decision_id"]
    assert assign["decision"] == _seat_view(api, gid, 0, tokens[0])["view"]["decision"]

    # the public stream carries no turn signal
    r = api.get(f"/games/{gid}/events/stream")
    assert all(k != "decision" for k, _d, _i in parse_sse(r.get_data().splitlines(keepends=True)))


def test_the_spec_lists_every_event_type_the_feed_can_carry() -> None:
    import yaml

    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    listed = spec["components"]["schemas"]["FeedItem"]["properties"]["type"]["enum"]
    engine_types = set(engine.fold._FOLDS) | set(engine.fold._CREATORS)
    assert set(listed) == engine_types, (
        "FeedItem.type in openapi.yaml lists the engine's event types (engine/fold.py): add "
        f"{sorted(engine_types - set(listed))}, drop {sorted(set(listed) - engine_types)}"
    )


def test_the_view_route_and_the_turn_signal_serve_the_stored_view_as_it_is(
    api: ValidatingClient, app: Flask
) -> None:
    """The projection renders a seat's view once; ``GET .../view`` and the turn signal splice
    those bytes into their answers without decoding and encoding them again."""
    gid, tokens = new_game(api, players=2, seed="turn-signal-bytes")
    (data,) = [d for k, d, _i in _stream(api, gid, 0, tokens[0], None) if k == "decision"]
    r = api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0]))
    stored = app.extensions["rfg"].store.get_view(gid, view_name(0))
    assert stored is not None and stored[0] == r.get_json()["version"]
    assert f'"view":{stored[1]}' in r.get_data(as_text=True)
    assert f'"view":{stored[1]}' in data
    public = app.extensions["rfg"].store.get_view(gid, view_name("public"))
    assert f'"view":{public[1]}' in api.get(f"/games/{gid}/view").get_data(as_text=True)
