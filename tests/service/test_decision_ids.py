"""Answering a decision by its ``decision_id`` over real HTTP (werkzeug's threaded server, the
``rfg_client`` distribution): other seats' moves do not make it stale, a changed decision is a
409 that names the current one, a retry of an applied command is replayed, and concurrent
answers to one decision apply exactly once."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from rfg_client import ApiError, Client

from bots import get_bot
from engine.rng import Rng
from tests.conftest import serving

from .conftest import ADMIN, make_app


@pytest.fixture
def server() -> Iterator[str]:
    app = make_app(f"memory://{uuid.uuid4().hex}")
    with serving(app) as url:
        yield url


def two_humans(api: Client, seed: str) -> str:
    gid: str = api.create_game([{"kind": "human"}, {"kind": "human"}], seed=seed)["game_id"]
    api.claim(gid, 0)
    api.claim(gid, 1)
    return gid


def answer(api: Client, gid: str, seat: int, rng: Rng) -> dict[str, Any]:
    """A legal command for the seat's decision (the random bot's)."""
    view = api.view(gid, seat=seat)["view"]
    return get_bot("random").act(view["decision"], None, rng)


def test_other_seats_moves_do_not_make_a_decision_id_stale(server: str) -> None:
    api = Client(server, admin_token=ADMIN, timeout=10)
    gid = two_humans(api, "did-1")
    rng = Rng(1)
    mine = api.view(gid, seat=0)
    decision = mine["view"]["decision"]
    assert decision["decision_id"] == mine["view"]["clock"]["seats"][0]["decision_version"]
    assert decision["help"].startswith("Choose your two starting tiles")
    command = answer(api, gid, 0, rng)
    # seat 1 moves first: the game's version moves on, seat 0's decision does not
    api.submit(
        gid,
        1,
        answer(api, gid, 1, rng),
        decision_id=api.view(gid, seat=1)["view"]["decision"]["decision_id"],
    )
    with pytest.raises(ApiError) as strict:
        api.submit(gid, 0, command, expected_version=mine["version"])
    assert strict.value.status == 409 and strict.value.type == "/problems/version-conflict"
    out = api.submit(gid, 0, command, decision_id=decision["decision_id"])
    assert out["version"] > mine["version"] + 1  # applied after seat 1's move


def test_a_stale_decision_id_gets_409_naming_the_current_decision(server: str) -> None:
    api = Client(server, admin_token=ADMIN, timeout=10)
    gid = two_humans(api, "did-2")
    rng = Rng(2)
    first = api.view(gid, seat=0)["view"]["decision"]
    command = answer(api, gid, 0, rng)
    api.submit(gid, 0, command, command_id="a-1", decision_id=first["decision_id"])
    # a retry of the applied command (same id) is replayed, not refused
    assert (
        api.submit(gid, 0, command, command_id="a-1", decision_id=first["decision_id"])[
            "command_id"
        ]
        == "a-1"
    )
    # seat 0 answered; it waits for seat 1, so it owes nothing: the 409 says so
    with pytest.raises(ApiError) as waiting:
        api.submit(gid, 0, command, command_id="a-2", decision_id=first["decision_id"])
    p = waiting.value.problem
    assert waiting.value.status == 409 and p["type"] == "/problems/decision-changed"
    assert p["decision_id"] == first["decision_id"] and p["current_decision_id"] is None
    assert "owes no decision now" in p["detail"] and "answered already" in p["detail"]
    # once seat 1 answered, seat 0 owes a new decision: the 409 names it
    api.submit(
        gid,
        1,
        answer(api, gid, 1, rng),
        decision_id=api.view(gid, seat=1)["view"]["decision"]["decision_id"],
    )
    current = api.view(gid, seat=0)["view"]["decision"]
    assert current["decision_id"] != first["decision_id"]
    with pytest.raises(ApiError) as changed:
        api.submit(gid, 0, command, command_id="a-3", decision_id=first["decision_id"])
    p = changed.value.problem
    assert (p["current_decision_id"], p["current_decision_kind"]) == (
        current["decision_id"],
        current["kind"],
    )
    assert f"decision_id {current['decision_id']}" in p["detail"]
    assert api.view(gid)["version"] == p["current_version"], "nothing was stored"


def test_decision_id_and_a_version_together_are_refused(server: str) -> None:
    api = Client(server, admin_token=ADMIN, timeout=10)
    gid = two_humans(api, "did-3")
    mine = api.view(gid, seat=0)
    command = answer(api, gid, 0, Rng(3))
    with pytest.raises(ApiError) as both:
        api.submit(
            gid,
            0,
            command,
            decision_id=mine["view"]["decision"]["decision_id"],
            expected_version=mine["version"],
        )
    assert both.value.status == 422 and "not both" in both.value.problem["detail"]


def test_concurrent_answers_to_one_decision_apply_once(server: str) -> None:
    """Eight clients answer seat 0's decision at once with different command ids while seat 1
    moves too: exactly one answer is stored, the others get decision-changed."""
    api = Client(server, admin_token=ADMIN, timeout=10)
    gid = two_humans(api, "did-4")
    rng = Rng(4)
    decision = api.view(gid, seat=0)["view"]["decision"]
    command = answer(api, gid, 0, rng)
    other = answer(api, gid, 1, rng)
    other_id = api.view(gid, seat=1)["view"]["decision"]["decision_id"]
    results: list[int] = []
    barrier = threading.Barrier(9)

    def mine(i: int) -> None:
        client = Client(server, timeout=10)
        client.tokens = dict(api.tokens)
        barrier.wait()
        try:
            client.submit(
                gid, 0, command, command_id=f"race-{i}", decision_id=decision["decision_id"]
            )
            results.append(201)
        except ApiError as exc:
            assert exc.type == "/problems/decision-changed", exc.problem
            results.append(exc.status)

    def theirs() -> None:
        client = Client(server, timeout=10)
        client.tokens = dict(api.tokens)
        barrier.wait()
        client.submit(gid, 1, other, decision_id=other_id)

    threads = [threading.Thread(target=mine, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=theirs))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == [201] + [409] * 7
    log = api.feed(gid, limit=500)["events"]
    stored = [
        e
        for e in log
        if e["type"] == "CommandSubmitted" and e["command_id"].startswith("seat:0:race-")
    ]
    assert len(stored) == 1


#: a seed whose game, played as ``_next_seat`` and ``Rng(1)`` play it, has a Scout find the bag
#: empty while seat 0 still owes its Explore decision (found by playing seeds that way)
SHORTFALL_SEED = "shortfall-362"


def _owing(api: Client, gid: str) -> list[int]:
    """The seats that owe a decision now (the public view's clock)."""
    seats = api.view(gid)["view"]["clock"]["seats"]
    return [i for i, s in enumerate(seats) if s["decision_version"] is not None]


def test_a_scout_that_empties_the_bag_withdraws_the_other_seats_decisions(server: str) -> None:
    """The rulebook's shortfall, as openapi.yaml tells clients: when another seat's Scout finds
    the bag empty, every other decision is withdrawn until the scout has drawn. A command for
    the withdrawn decision is a 409 naming none (nothing stored); the seat then owes it again
    under a new id, and that one is applied."""
    api = Client(server, admin_token=ADMIN, timeout=10)
    players = 4
    gid = api.create_game([{"kind": "human"}] * players, seed=SHORTFALL_SEED)["game_id"]
    for seat in range(players):
        api.claim(gid, seat)
    rng, bot = Rng(1), get_bot("random")
    mine: dict[str, Any] | None = None
    for _ in range(400):
        seat = max(_owing(api, gid))  # seat 0 answers last: the others scout before it
        mine = api.view(gid, seat=0)["view"]["decision"]
        decision = api.view(gid, seat=seat)["view"]["decision"]
        api.submit(gid, seat, bot.act(decision, None, rng), decision_id=decision["decision_id"])
        if seat != 0 and mine is not None and 0 not in _owing(api, gid):
            break  # another seat's move took seat 0's decision away
    else:
        raise AssertionError(f"no Scout emptied the bag in game {SHORTFALL_SEED!r}")
    assert mine is not None and mine["kind"] == "explore"
    withdrawn = mine["decision_id"]
    since = api.feed(gid, after=withdrawn, limit=1000)["events"]
    short = [e for e in since if e["type"] == "TilesScouted" and e["event"]["short"]]
    assert [e["event"]["seat"] for e in short] == [seat]  # the bag ran out under that Scout
    with pytest.raises(ApiError) as refused:
        api.submit(gid, 0, bot.act(mine, None, rng), decision_id=withdrawn)
    p = refused.value.problem
    assert refused.value.status == 409 and p["type"] == "/problems/decision-changed"
    assert p["decision_id"] == withdrawn and p["current_decision_id"] is None
    assert api.view(gid)["version"] == p["current_version"], "nothing was stored"
    # the scout places what it drew (first, whoever holds 3+ construction tiles abandons one)
    while 0 not in _owing(api, gid):
        seat = max(_owing(api, gid))
        decision = api.view(gid, seat=seat)["view"]["decision"]
        assert decision["kind"] in ("place_tiles", "abandon_one"), decision
        api.submit(gid, seat, bot.act(decision, None, rng), decision_id=decision["decision_id"])
    again = api.view(gid, seat=0)["view"]["decision"]
    assert again["kind"] in ("explore", "abandon_one") and again["decision_id"] > withdrawn
    api.submit(gid, 0, bot.act(again, None, rng), decision_id=again["decision_id"])
