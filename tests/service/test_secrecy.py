"""No endpoint leaks what the rules hide: the structural secrecy check of the engine tests
(tests/engine/secrecy.py) applied to what HTTP serves - the public and every seat's view before
every command, every viewer's SSE feed, the paged feeds and the command answers - each checked
against the game's true state at that version, rebuilt from the full log exported after the end."""

from __future__ import annotations

import json
from typing import Any

from rfg_client import parse_sse

import engine
from tests.engine.secrecy import check_event, check_view

from .conftest import ValidatingClient, bearer, new_game, play_http

PLAYERS = 3


def _sse_items(api: ValidatingClient, path: str, token: str | None) -> list[dict[str, Any]]:
    headers = bearer(token) if token else {}
    r = api.get(path, headers=headers)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    events = list(parse_sse(r.get_data().splitlines(keepends=True)))
    assert events[-1][0] == "end", "a finished game's stream ends with an 'end' event"
    return [json.loads(data) for kind, data, _id in events if kind == "message"]


def test_views_feeds_and_streams_leak_nothing(api: ValidatingClient) -> None:
    api.sample = 25
    gid, tokens = new_game(api, players=PLAYERS, seed="secrecy-http")
    viewers: list[int | str] = ["public", *range(PLAYERS)]
    views: dict[int, list[tuple[int | str, dict[str, Any]]]] = {}
    answers: list[tuple[int, dict[str, Any]]] = []

    def record(_n: int, pub: dict[str, Any]) -> None:
        version = pub["version"]
        got = views.setdefault(version, [("public", pub["view"])])
        for seat in range(PLAYERS):
            r = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat]))
            assert r.get_json()["version"] == version
            got.append((seat, r.get_json()["view"]))

    play_http(api, gid, tokens, seed=11, on_step=record)
    # the command answers: replay them through the feed of each seat (same items, same redaction)
    for seat in range(PLAYERS):
        r = api.get(
            f"/games/{gid}/seats/{seat}/events?after=0&limit=1000", headers=bearer(tokens[seat])
        )
        answers += [(seat, item) for item in r.get_json()["events"]]

    log = [
        json.loads(line)
        for line in api.get(f"/games/{gid}/log").get_data(as_text=True).splitlines()
    ]
    log = [row for row in log if "signature" not in row]  # the export's last line: the signature
    streams = {
        v: _sse_items(
            api,
            f"/games/{gid}/events/stream"
            if v == "public"
            else f"/games/{gid}/seats/{v}/events/stream",
            None if v == "public" else tokens[int(v)],
        )
        for v in viewers
    }
    for v, items in streams.items():
        assert [i["seq"] for i in items] == [e["seq"] for e in log], f"{v}'s stream is not complete"

    state = None
    checked_views = checked_events = 0
    by_seq: dict[int, list[tuple[int | str, dict[str, Any]]]] = {}
    for seat, item in answers:
        by_seq.setdefault(item["seq"], []).append((seat, item["event"]))
    for env in log:
        event = {"type": env["type"], "v": env["schema_version"], **env["payload"]}
        state = engine.evolve(state, event)
        seq = env["seq"]
        for v in viewers:
            check_event(state, v, streams[v][seq - 1]["event"])
            checked_events += 1
        for v, ev in by_seq.get(seq, []):
            check_event(state, v, ev)
        for v, view in views.get(seq, []):
            check_view(state, v, view)
            checked_views += 1
    assert state is not None and state.over
    assert checked_views > 200 and checked_events == len(log) * len(viewers)
