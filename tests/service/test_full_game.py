"""Whole games through HTTP only: four random bots play to the end on fakeredis and on the real
Redis, the finished game's public view carries the final tableau and scores, and the exported log
passes replay verification through the API (a tampered copy does not). Every request and response
is checked against openapi.yaml by the ``api`` client."""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

import engine
from bots import get_bot
from engine.rng import Rng
from engine.scoring import score as engine_score
from events.games.served import served_side

from .conftest import ValidatingClient, bearer, new_game, play_http


@pytest.fixture(params=["fakeredis", "redis"])
def any_api(request: pytest.FixtureRequest) -> FlaskClient:
    name = "api" if request.param == "fakeredis" else "real_api"
    client: ValidatingClient = request.getfixturevalue(name)
    client.sample = 10
    return client


def test_four_random_bots_finish_a_game_and_its_log_verifies(any_api: FlaskClient) -> None:
    api = any_api
    gid, tokens = new_game(api, players=4)
    commands = play_http(api, gid, tokens, seed=4)
    assert commands > 50

    game = api.get(f"/games/{gid}").get_json()
    assert game["status"] == "finished" and game["winners"] and game["finished_at"]
    assert all(s["claimed"] for s in game["seats"])

    r = api.get(f"/games/{gid}/log")
    assert r.status_code == 200 and r.headers["Log-Kind"] == "full"
    log = r.get_data(as_text=True)
    *lines, signature = [json.loads(line) for line in log.splitlines()]
    assert lines[0]["type"] == "GameCreated" and "seed" in lines[0]["payload"]
    assert lines[-1]["type"] == "GameEnded" and lines[-1]["seq"] == game["version"]
    sig = signature["signature"]  # the server signs the chain head, the game and its result
    assert sig["chain_head"] == lines[-1]["hash"] and sig["game_id"] == gid and sig["over"]
    assert sig["result"]["winners"] == game["winners"] and sig["events"] == len(lines)

    verdict = api.post("/replays/verify", data=log, content_type="application/x-ndjson").get_json()
    assert verdict["ok"] and verdict["authentic"] is True, verdict
    assert verdict["commands"] == commands and verdict["events"] == len(lines)
    assert verdict["summary"]["winners"] == game["winners"]

    # one altered outcome anywhere in the log is caught, and the answer says where
    bad = lines[:] + [signature]
    victim = next(i for i, e in enumerate(bad) if e["type"] == "DiceRolled" and i > 10)
    bad[victim] = dict(bad[victim], payload=dict(bad[victim]["payload"], tampered=True))
    text = "\n".join(json.dumps(e) for e in bad) + "\n"
    verdict = api.post("/replays/verify", data=text, content_type="application/x-ndjson").get_json()
    assert not verdict["ok"] and verdict["first_bad_event"] == bad[victim]["seq"]

    # a seat's own log after the end is the full log too
    r = api.get(f"/games/{gid}/seats/2/log", headers=bearer(tokens[2]))
    assert r.headers["Log-Kind"] == "full" and r.get_data(as_text=True) == log


def test_the_finished_public_view_has_each_seats_tableau_and_score(api: ValidatingClient) -> None:
    api.sample = 10
    gid, tokens = new_game(api, players=3, seed="final-view")
    play_http(api, gid, tokens, seed=9)
    view = api.get(f"/games/{gid}/view").get_json()["view"]
    assert view["step"] == "over" and view["seed"] == "final-view"
    result = view["result"]
    assert sorted(result["winners"]) == sorted(api.get(f"/games/{gid}").get_json()["winners"])
    for p, score in zip(view["players"], result["scores"], strict=True):
        assert p["faction"]["name"] and p["home_world"]["name"]
        tableau = p["developments"] + p["worlds"]
        assert tableau and all(c["name"] and isinstance(c["cost"], int) for c in tableau)
        assert isinstance(p["vp_chips"], int) and isinstance(p["credits"], int)
        assert sum(p["dice_by_color"].values()) >= 5
        assert score["seat"] == p["seat"] and score["vp_chips"] == p["vp_chips"]
        assert score["tiles"] == sum(c["cost"] for c in tableau)
        assert score["total"] == score["vp_chips"] + score["tiles"] + sum(score["bonuses"].values())
        # the running score, told during play from the view alone, ends on the final score
        assert p["score"]["total"] == score["total"]
        assert p["score"]["tiles"] == score["tiles"]
        assert p["score"]["bonus_cards"] == score["bonus_cards"]


def test_the_running_score_matches_the_engine_at_every_step_of_a_game() -> None:
    """The score a view tells during play is what the engine would score if the game ended now."""
    bonuses_seen = 0
    for g in range(5):  # random bots: game 4 builds a 6-cost development
        state, _ = engine.new_game(f"running-{g}", 3, None)
        bots = [get_bot("random") for _ in range(3)]
        rng = Rng(g)
        while not state.over:
            seat = min(engine.pending(state))
            sides = [served_side(p, None) for p in engine.observe(state, "public")["players"]]
            for p, vp in zip(sides, state.players, strict=True):
                want = engine_score(vp)
                assert p["score"]["total"] == want["total"], (p["seat"], p["score"], want)
                assert {b["card"]: b["vp"] for b in p["score"]["bonus_cards"]} == want["bonuses"]
                bonuses_seen += len(want["bonuses"])
            legal = engine.legal(state, seat) or {}
            engine.play(state, seat, bots[seat].act(legal, engine.observe(state, seat), rng))
    assert bonuses_seen, "no seat built a 6-cost development: the bonuses went untested"
