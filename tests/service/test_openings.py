"""Event streams open a few at a time (``service.openings``): a stream waits for its turn (503
``server-busy`` after ``OPENING_WAIT_SECONDS``), other requests never wait for one, and every
opening gives its turn back, whatever its answer."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from service import openings

from .conftest import bearer, make_app, new_game


def _turns(app: Any) -> threading.BoundedSemaphore:
    turns: threading.BoundedSemaphore = app.extensions["rfg-openings"]
    return turns


def _all_free(app: Any, n: int) -> bool:
    """Whether all ``n`` turns can be taken now (then given back)."""
    turns = _turns(app)
    taken = 0
    while taken < n and turns.acquire(blocking=False):
        taken += 1
    for _ in range(taken):
        turns.release()
    return taken == n


def test_a_stream_waits_for_a_turn_and_other_requests_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app("memory://openings-1", STREAM_OPENINGS=2, SSE_MAX_SECONDS=1)
    api = app.test_client()
    gid, tokens = new_game(api, players=2)
    monkeypatch.setattr(openings, "OPENING_WAIT_SECONDS", 0.05)
    turns = _turns(app)
    assert turns.acquire(blocking=False) and turns.acquire(blocking=False)  # both taken
    try:
        r = api.get(f"/games/{gid}/events/stream")
        assert r.status_code == 503 and r.headers["Retry-After"] == "5"
        assert r.get_json()["type"] == "/problems/server-busy"
        # a view, a command's seat view, a feed page: no turn needed
        assert api.get(f"/games/{gid}/view").status_code == 200
        assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).status_code == 200
        assert api.get(f"/games/{gid}/events").status_code == 200
    finally:
        turns.release()
        turns.release()
    r = api.get(f"/games/{gid}/events/stream")
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    r.close()


def test_every_opening_gives_its_turn_back() -> None:
    app = make_app("memory://openings-2", STREAM_OPENINGS=3, SSE_MAX_SECONDS=1)
    api = app.test_client()
    gid, tokens = new_game(api, players=2)
    answers = []
    for _ in range(3):
        for path, headers in (
            (f"/games/{gid}/events/stream", {}),  # opened
            (f"/games/{gid}/seats/0/events/stream", bearer(tokens[0])),  # opened
            (f"/games/{gid}/seats/1/events/stream", bearer("wrong")),  # 401
            ("/games/000000000000/events/stream", {}),  # 404
            ("/bots/me/decisions/stream", {}),  # 401
        ):
            r = api.get(path, headers=headers)
            answers.append(r.status_code)
            r.close()
    assert sorted(set(answers)) == [200, 401, 404]
    assert _all_free(app, 3)
