"""A ladder's games through the API (``GET /ladders/<name>/games``): the games under way first,
then the finished ones newest first, a page at a time, each with its entrants and the links to
watch or replay it."""

from __future__ import annotations

from typing import Any

from flask import Flask

from service.api.ladders import ladders as ladders_of
from tests.ladder.test_ladder_service import drive
from tests.service.conftest import ADMIN, ValidatingClient, bearer


def _ladder(api: ValidatingClient) -> None:
    h = bearer(ADMIN)
    r = api.post("/ladders", json={"name": "main", "players": [2], "concurrency": 1}, headers=h)
    assert r.status_code == 201
    for entrant, bot in (("heur", "heuristic"), ("rand", "random")):
        body = {"entrant": entrant, "bot": bot}
        assert api.post("/ladders/main/entrants", json=body, headers=h).status_code == 201


def _finish_games(app: Flask, n: int) -> list[str]:
    """Play ``n`` ladder games to their end and record them; returns their ids in order."""
    done = []
    with app.app_context():
        lad = ladders_of()
        for i in range(n):
            for gid in lad.schedule("main", rng_seed=f"s{i}"):
                drive(lad.games, gid)
                done.append(gid)
            lad.record_finished("main")
    return done


def test_the_ladder_lists_its_games_to_watch_and_replay(api: ValidatingClient, app: Flask) -> None:
    _ladder(api)
    assert api.get("/ladders/main/games").get_json() == {
        "ladder": "main",
        "games": [],
        "next_cursor": None,
    }
    finished = _finish_games(app, 3)
    with app.app_context():
        (running,) = ladders_of().schedule("main", rng_seed="live")  # one game under way
    r = api.get("/ladders/main/games?limit=2")
    assert r.status_code == 200
    page = r.get_json()
    listed = [g["game_id"] for g in page["games"]]
    assert listed == [running, finished[2], finished[1]]  # under way, then newest result first
    live, last = page["games"][0], page["games"][1]
    assert live["status"] == "active" and live["totals"] is None and live["winners"] is None
    assert live["links"]["watch"] == f"/play/#/watch/{running}"
    assert last["status"] == "finished" and last["finished_at"]
    assert sorted(last["entrants"]) == ["heur", "rand"] and len(last["totals"]) == 2
    assert last["links"]["replay"] == f"/play/#/replay/{finished[2]}"
    assert last["winners"] and all(0 <= w < 2 for w in last["winners"])
    # the next page continues with older finished games only, then ends
    more = api.get(f"/ladders/main/games?limit=2&cursor={page['next_cursor']}").get_json()
    assert [g["game_id"] for g in more["games"]] == [finished[0]]
    assert more["next_cursor"] is None
    only: dict[str, Any] = api.get("/ladders/main/games?status=active").get_json()
    assert [g["game_id"] for g in only["games"]] == [running]
    done = api.get("/ladders/main/games?status=finished&limit=100").get_json()
    assert [g["game_id"] for g in done["games"]] == finished[::-1]
    # the ladder resource links to its games
    assert api.get("/ladders/main").get_json()["links"]["games"] == "/ladders/main/games"


def test_bad_ladder_game_queries_are_refused_in_words(api: ValidatingClient) -> None:
    _ladder(api)
    assert api.get("/ladders/nope/games").status_code == 404
    for query, field in (
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("status=over", "status"),
        ("cursor=x1", "cursor"),
        ("page=2", "page"),
    ):
        r = api.get(f"/ladders/main/games?{query}", validate=False)
        assert r.status_code == 400, query
        assert field in r.get_json()["errors"], r.get_json()
