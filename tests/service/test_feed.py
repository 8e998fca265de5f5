"""The event feed: paging after a cursor, and the Server-Sent Events stream (resume from
Last-Event-ID or ``after``, keep-alive comments, the closing ``end`` event, bounded duration)."""

from __future__ import annotations

import json
from typing import Any

from rfg_client import parse_sse

from .conftest import ValidatingClient, bearer, new_game, play_http


def _events(api: ValidatingClient, gid: str, **query: Any) -> dict[str, Any]:
    r = api.get(f"/games/{gid}/events", query_string=query)
    assert r.status_code == 200
    out: dict[str, Any] = r.get_json()
    return out


def test_the_feed_pages_after_a_cursor(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2, seed="feed-1", options={"first_game": True})
    version = api.get(f"/games/{gid}/view").get_json()["version"]
    assert version > 3
    everything = _events(api, gid, after=0, limit=1000)
    assert [e["seq"] for e in everything["events"]] == list(range(1, version + 1))
    assert everything["viewer"] == "public" and everything["more"] is False
    assert "seed" not in everything["events"][0]["event"]
    first = _events(api, gid, after=0, limit=2)
    assert first["more"] is True and first["next_after"] == 2
    rest = _events(api, gid, after=first["next_after"], limit=1000)
    assert first["events"] + rest["events"] == everything["events"]
    past = _events(api, gid, after=version + 5)
    assert past["events"] == [] and past["next_after"] == version + 5
    own = api.get(f"/games/{gid}/seats/0/events", headers=bearer(tokens[0])).get_json()
    assert own["viewer"] == "seat:0" and len(own["events"]) == len(everything["events"])


def _read_stream(
    api: ValidatingClient, url: str, **headers: str
) -> tuple[list[tuple[str, str, Any]], str]:
    r = api.get(url, headers=headers)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    assert r.headers["Cache-Control"] == "no-cache"
    text = r.get_data(as_text=True)
    return list(parse_sse(text.encode().splitlines(keepends=True))), text


def test_a_live_stream_sends_keepalives_and_closes_after_its_bound(api: ValidatingClient) -> None:
    gid, _tokens = new_game(api, players=2, seed="sse-1")
    # the read returns only once the server closes the stream: of a live game, only its bound
    # (SSE_MAX_SECONDS, 1 s in tests) closes it
    events, text = _read_stream(api, f"/games/{gid}/events/stream")
    assert text.startswith("retry: ")
    assert ": keep-alive" in text
    seqs = [int(i) for kind, _data, i in events if kind == "message"]
    assert seqs == list(range(1, len(seqs) + 1)) and seqs
    assert all(kind != "end" for kind, _d, _i in events), "a live game's stream does not end"


def test_a_stream_resumes_after_last_event_id_and_ends_with_the_game(api: ValidatingClient) -> None:
    api.sample = 20
    gid, tokens = new_game(api, players=2, seed="sse-2")
    play_http(api, gid, tokens, seed=5)
    version = api.get(f"/games/{gid}/view").get_json()["version"]
    events, _ = _read_stream(
        api,
        f"/games/{gid}/seats/1/events/stream",
        **bearer(tokens[1]),
        **{"Last-Event-ID": str(version - 3)},
    )
    kinds = [k for k, _d, _i in events]
    assert kinds == ["message"] * 3 + ["end"]
    assert [int(i) for _k, _d, i in events[:3]] == [version - 2, version - 1, version]
    assert json.loads(events[-1][1]) == {"game_id": gid, "version": version}
    # Last-Event-ID wins over ?after=
    events, _ = _read_stream(
        api, f"/games/{gid}/events/stream?after=0", **{"Last-Event-ID": str(version)}
    )
    assert [k for k, _d, _i in events] == ["end"]
    events, _ = _read_stream(api, f"/games/{gid}/events/stream?after={version - 1}")
    assert [k for k, _d, _i in events] == ["message", "end"]
    assert json.loads(events[0][1])["type"] == "GameEnded"
    r = api.get(f"/games/{gid}/events/stream", headers={"Last-Event-ID": "soon"}, validate=False)
    assert r.status_code == 400
