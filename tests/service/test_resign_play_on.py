"""Resigning through the API with three seats (``POST /games/{id}/seats/{n}/resign``,
``engine.leaving``): the seat leaves and the others play on to the end through HTTP; the
resigned seat shows as resigned in every view, owes nothing (no clock runs for it), its commands
are refused with a problem saying why, it is scored but never wins, and the log verifies. With two
seats resigning still ends the game. Real Redis."""

from __future__ import annotations

from typing import Any

from events.verify.replay import verify_text

from .conftest import ValidatingClient, bearer, new_game, play_http


def _view(api: ValidatingClient, gid: str, seat: int | None = None, token: str = "") -> Any:
    path = f"/games/{gid}/view" if seat is None else f"/games/{gid}/seats/{seat}/view"
    r = api.get(path, headers=bearer(token) if token else {})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["view"]


def _resign(api: ValidatingClient, gid: str, seat: int, token: str) -> dict[str, Any]:
    r = api.post(f"/games/{gid}/seats/{seat}/resign", headers=bearer(token))
    assert r.status_code == 201, r.get_json()
    game: dict[str, Any] = r.get_json()
    return game


def test_with_three_seats_the_others_play_on_to_the_end(real_api: ValidatingClient) -> None:
    api = real_api
    gid, tokens = new_game(api, 3, seed="resign-play-on", time_control={"per_decision": 600})
    pub = _view(api, gid)
    assert pub["pending"], "the setup decisions are owed"
    game = _resign(api, gid, 1, tokens[1])
    assert game["status"] == "active" and game["end_reason"] is None and game["resigned"] == [1]

    pub = _view(api, gid)
    assert pub["players"][1]["resigned"] == {"round": 0, "step": "start_tiles"}
    assert pub["players"][0]["resigned"] is None
    assert "1" not in pub["pending"] and pub["pending"]
    clock = {s["seat"]: s for s in pub["clock"]["seats"]}
    assert clock[1]["pending"] is None and clock[1]["deadline"] is None
    assert clock[0]["deadline"] is not None  # the others' clocks run
    own = _view(api, gid, 1, tokens[1])
    assert own["decision"] is None and own["players"][1]["resigned"]["round"] == 0

    # its commands are refused, saying why
    tile = own["players"][1]["start_tiles"][0]["tile"]
    r = api.post(
        f"/games/{gid}/seats/1/commands",
        json={"command_id": "late", "command": {"kind": "start_tiles", "development": tile}},
        headers=bearer(tokens[1]),
    )
    assert r.status_code == 422, r.get_json()
    problem = r.get_json()
    assert problem["code"] == "resigned" and "takes no further part" in problem["detail"]
    r = api.post(f"/games/{gid}/seats/1/resign", headers=bearer(tokens[1]))
    assert r.status_code == 422 and r.get_json()["code"] == "resigned"

    # the other two play to the end; seat 1 is never pending
    def never_one(_n: int, response: dict[str, Any]) -> None:
        assert "1" not in response["view"]["pending"]

    play_http(api, gid, {0: tokens[0], 2: tokens[2]}, on_step=never_one)
    done = api.get(f"/games/{gid}").get_json()
    assert done["status"] == "finished"
    assert done["end_reason"] in ("vp_pool_exhausted", "twelve_tile_squares")
    assert done["winners"] and 1 not in done["winners"] and done["resigned"] == [1]
    final = _view(api, gid)
    assert [s["seat"] for s in final["result"]["scores"]] == [0, 1, 2]
    assert final["players"][1]["resigned"] == {"round": 0, "step": "start_tiles"}
    assert final["round"] > 1

    text = api.get(f"/games/{gid}/log").get_data(as_text=True)
    verdict = verify_text(text)
    assert verdict.ok and verdict.complete, verdict.to_dict()
    r = api.post("/replays/verify", data=text, content_type="application/x-ndjson")
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()


def test_two_of_four_resign_mid_game_and_the_last_but_one_ends_it(
    real_api: ValidatingClient,
) -> None:
    """Four seats: two resign in round 2 and the game goes on; when a third resigns only one
    seat is left, and it wins."""
    api = real_api
    gid, tokens = new_game(api, 4, seed="resign-four")

    def stop_in_round_2(_n: int, response: dict[str, Any]) -> None:
        if response["view"]["round"] >= 2:
            raise _Reached

    try:
        play_http(api, gid, tokens, on_step=stop_in_round_2)
    except _Reached:
        pass
    for seat in (3, 0):
        assert _resign(api, gid, seat, tokens[seat])["status"] == "active"
    pub = _view(api, gid)
    assert [p["resigned"] is not None for p in pub["players"]] == [True, False, False, True]
    assert pub["players"][3]["resigned"]["round"] == 2
    assert not set(pub["pending"]) & {"0", "3"}
    game = _resign(api, gid, 1, tokens[1])
    assert (game["status"], game["end_reason"], game["winners"]) == ("finished", "resigned", [2])
    verdict = verify_text(api.get(f"/games/{gid}/log").get_data(as_text=True))
    assert verdict.ok and verdict.complete, verdict.to_dict()


def test_with_two_seats_resigning_ends_the_game(real_api: ValidatingClient) -> None:
    gid, tokens = new_game(real_api, 2, seed="resign-two")
    game = _resign(real_api, gid, 0, tokens[0])
    assert (game["status"], game["end_reason"], game["winners"]) == ("finished", "resigned", [1])


class _Reached(Exception):
    """The game reached the round a test plays to."""
