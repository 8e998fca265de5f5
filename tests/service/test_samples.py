"""GET /games/{id}/seats/{n}/samples: determinized states of the seat's view, for its token only.

(The refusal of every other credential is in test_auth.py's table of seat endpoints.)"""

from __future__ import annotations

from collections.abc import Callable

import engine
from tests.service.test_limits import _too_many, limited  # noqa: F401  (fixture)

from .conftest import ValidatingClient, bearer, new_game


def _to_assign(api: ValidatingClient, gid: str, tokens: dict[int, str]) -> None:
    for seat, token in tokens.items():
        view = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(token)).get_json()["view"]
        dev = view["decision"]["options"][0]["development"]
        r = api.post(
            f"/games/{gid}/seats/{seat}/commands",
            headers=bearer(token),
            json={"command_id": f"s{seat}", "command": {"kind": "start_tiles", "development": dev}},
        )
        assert r.status_code == 201, r.get_json()


def test_samples_fit_the_seat_view_and_hide_the_rest(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=3, seed="samples-secret-seed")
    _to_assign(api, gid, tokens)
    url = f"/games/{gid}/seats/1/samples"
    r = api.get(url, query_string={"count": 6, "seed": "k"}, headers=bearer(tokens[1]))
    assert r.status_code == 200, r.get_json()
    assert r.headers["Cache-Control"] == "private, no-store"
    body = r.get_json()
    assert body["seat"] == 1 and body["seed"] == "k" and body["unsampled"] is None
    assert len(body["samples"]) == 6
    assert "samples-secret-seed" not in r.get_data(as_text=True)
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()["view"]
    own = view["players"][1]
    hashes = set()
    for d in body["samples"]:
        state = engine.from_dict(d)
        hashes.add(engine.state_hash(state))
        seen = engine.observe(state, 1)
        assert seen["players"][1]["columns"] == own["columns"]  # its own roll, as it sees it
        assert [p["dice_by_color"] for p in seen["players"]] == [
            p["dice_by_color"] for p in view["players"]
        ]
        assert seen["version"] == view["version"] and seen["bag"] == view["bag"]
    assert len(hashes) > 1  # the other seats' rolls are dealt anew
    again = api.get(url, query_string={"count": 6, "seed": "k"}, headers=bearer(tokens[1]))
    assert again.get_json() == body  # reproducible for a seed
    fresh = api.get(url, headers=bearer(tokens[1])).get_json()
    assert len(fresh["samples"]) == 1 and fresh["seed"] != "k"


def test_count_is_bounded(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2)
    url = f"/games/{gid}/seats/0/samples"
    for bad in ("0", "21", "many"):
        r = api.get(url, query_string={"count": bad}, headers=bearer(tokens[0]), validate=False)
        assert r.status_code == 400 and r.get_json()["type"] == "/problems/invalid-parameters"
    r = api.get(url, query_string={"count": 20}, headers=bearer(tokens[0]))
    assert r.status_code == 200 and len(r.get_json()["samples"]) == 20


def test_samples_are_rate_limited_per_token(limited: Callable[..., ValidatingClient]) -> None:  # noqa: F811
    api = limited(LIMIT_SAMPLES="2 per minute")
    gid, tokens = new_game(api, players=2)
    url = f"/games/{gid}/seats/0/samples"
    assert [api.get(url, headers=bearer(tokens[0])).status_code for _ in range(2)] == [200, 200]
    _too_many(api.get(url, headers=bearer(tokens[0])), "samples")
    assert api.get(f"/games/{gid}/seats/1/samples", headers=bearer(tokens[1])).status_code == 200
