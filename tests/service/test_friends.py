"""Playing with friends: display names, invite links, resigning and abandoning.

What a host and their friends see through the API: the name each person gave shows on the game
and in the lobby; an invited seat is claimed only with its invite code, once, and the public
lobby cannot take it; a resignation or an abandonment ends the game with its reason, and the
game's log still verifies (``events.verify.replay`` re-runs the resign/abandon commands)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from typing import Any

import pytest

from events.verify.replay import verify_text
from tests.service.conftest import ADMIN, bearer


def _game(api: Any, seats: list[dict[str, Any]] | None = None) -> str:
    seats = seats or [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "bot": "random"}]
    r = api.post("/games", json={"seats": seats})
    assert r.status_code == 201, r.get_json()
    gid: str = r.get_json()["game_id"]
    return gid


def _host(
    api: Any, name: str = "Ada", seats: list[dict[str, Any]] | None = None
) -> tuple[str, str]:
    gid = _game(api, seats)
    r = api.post(f"/games/{gid}/seats/0/claim", json={"name": name})
    assert r.status_code == 201, r.get_json()
    return gid, r.get_json()["token"]


def _seats(api: Any, gid: str) -> list[dict[str, Any]]:
    r = api.get(f"/games/{gid}")
    assert r.status_code == 200
    seats: list[dict[str, Any]] = r.get_json()["seats"]
    return seats


# --- names ---------------------------------------------------------------------------------


def test_the_name_given_when_claiming_shows_on_the_game_and_in_the_lobby(api: Any) -> None:
    gid, _ = _host(api, "  Ada Lovelace ")
    seats = _seats(api, gid)
    assert seats[0]["name"] == "Ada Lovelace"  # trimmed
    assert seats[0]["host"] is True
    assert "name" not in seats[1] and seats[1]["claimed"] is False
    listed = {g["game_id"]: g for g in api.get("/games").get_json()["items"]}
    assert listed[gid]["seats"][0]["name"] == "Ada Lovelace"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("x" * 25, "at most 24"),
        ("Ada\u202eevil", "U+202E"),  # a bidi override makes a name read as another
        ("Ada\nBob", "U+000A"),
        ("Ada\u200bBob", "U+200B"),  # zero-width space
        ("Ada  Bob", "two spaces"),
    ],
)
def test_a_bad_name_is_refused_in_words_and_nothing_is_claimed(
    api: Any, name: str, words: str
) -> None:
    gid = _game(api)
    r = api.post(f"/games/{gid}/seats/0/claim", json={"name": name})
    assert r.status_code == 422
    assert words in str(r.get_json()["errors"]["name"])
    assert _seats(api, gid)[0]["claimed"] is False


def test_a_name_that_is_not_a_string_is_refused(api: Any) -> None:
    gid = _game(api)
    r = api.post(f"/games/{gid}/seats/0/claim", json={"name": 7}, validate=False)
    assert r.status_code == 422
    assert "string" in str(r.get_json()["errors"]["name"])


def test_names_may_be_any_language(api: Any) -> None:
    gid = _game(api)
    r = api.post(f"/games/{gid}/seats/0/claim", json={"name": "Zoë 李 😀"})
    assert r.status_code == 201
    assert _seats(api, gid)[0]["name"] == "Zoë 李 😀"


# --- invites -------------------------------------------------------------------------------


def test_an_invite_link_claims_its_seat_once_and_the_lobby_cannot_take_it(api: Any) -> None:
    gid, host = _host(api)
    r = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host))
    assert r.status_code == 201, r.get_json()
    invite = r.get_json()
    code = invite["invite"]
    assert invite["link"] == f"/play/#/join/{gid}/1/{code}"  # the code only in the fragment
    assert r.headers["Cache-Control"] == "no-store"
    assert _seats(api, gid)[1]["invited"] is True
    assert code not in api.get("/games").get_data(as_text=True)  # no code in the lobby

    lobby = api.post(f"/games/{gid}/seats/1/claim", json={})
    assert lobby.status_code == 409
    assert "invite" in lobby.get_json()["detail"]
    wrong = api.post(f"/games/{gid}/seats/1/claim", json={"invite": "x" * 43, "name": "Eve"})
    assert wrong.status_code == 403
    assert "ask the host" in wrong.get_json()["detail"]

    friend = api.post(f"/games/{gid}/seats/1/claim", json={"invite": code, "name": "Grace"})
    assert friend.status_code == 201, friend.get_json()
    seats = _seats(api, gid)
    assert seats[1] == {"seat": 1, "kind": "human", "claimed": True, "name": "Grace"}
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(friend.get_json()["token"]))
    assert view.status_code == 200

    again = api.post(f"/games/{gid}/seats/1/claim", json={"invite": code, "name": "Mallory"})
    assert again.status_code == 409
    assert "used already" in again.get_json()["detail"]
    assert _seats(api, gid)[1]["name"] == "Grace"


def test_only_the_host_or_the_admin_invites(api: Any) -> None:
    gid, _host_token = _host(api)
    r = api.post(f"/games/{gid}/seats/1/invite")
    assert r.status_code == 401
    assert "host" in r.get_json()["detail"]
    other = _game(api)
    stranger = api.post(f"/games/{other}/seats/0/claim").get_json()["token"]
    r = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(stranger))
    assert r.status_code == 401
    r = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(ADMIN))
    assert r.status_code == 201


def test_a_guest_who_sat_down_is_not_the_host(api: Any) -> None:
    gid, _ = _host(api)
    guest = api.post(f"/games/{gid}/seats/1/claim", json={"name": "Bob"}).get_json()["token"]
    r = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(guest))
    assert r.status_code == 403
    assert "seat 0" in r.get_json()["detail"]


def test_inviting_again_replaces_the_link(api: Any) -> None:
    gid, host = _host(api)
    first = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host)).get_json()["invite"]
    second = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host)).get_json()["invite"]
    assert first != second
    r = api.post(f"/games/{gid}/seats/1/claim", json={"invite": first})
    assert r.status_code == 403
    assert api.post(f"/games/{gid}/seats/1/claim", json={"invite": second}).status_code == 201


def test_taken_and_bot_seats_cannot_be_invited_to(api: Any) -> None:
    gid, host = _host(api)
    r = api.post(f"/games/{gid}/seats/0/invite", headers=bearer(host))
    assert r.status_code == 409
    r = api.post(f"/games/{gid}/seats/2/invite", headers=bearer(host))
    assert r.status_code == 409
    assert "bot" in r.get_json()["detail"]


def test_invite_codes_and_tokens_are_stored_only_hashed(real_api: Any, real_redis: Any) -> None:
    gid, host = _host(real_api)
    code = real_api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host)).get_json()["invite"]
    token = real_api.post(f"/games/{gid}/seats/1/claim", json={"invite": code}).get_json()["token"]
    stored = b"".join(
        k + v
        for key in real_redis.scan_iter(match=f"*{gid}*tokens")
        for k, v in real_redis.hgetall(key).items()
    )
    assert stored and code.encode() not in stored and token.encode() not in stored


def test_what_a_join_page_reads_tells_an_attacker_nothing_about_codes_or_tokens(
    api: Any,
) -> None:
    """The page an invite link opens reads GET /games/{id} to say whether the seat is still
    open: that read says only open/invited/taken, never a code, a token or their digests."""
    gid, host = _host(api)
    code = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host)).get_json()["invite"]
    before = _seats(api, gid)
    assert before[1] == {"seat": 1, "kind": "human", "claimed": False, "invited": True}
    token = api.post(f"/games/{gid}/seats/1/claim", json={"invite": code}).get_json()["token"]
    after = _seats(api, gid)
    assert after[1] == {"seat": 1, "kind": "human", "claimed": True}
    secrets = [
        code,
        token,
        host,
        *(hashlib.sha256(x.encode()).hexdigest() for x in (code, token, host)),
    ]
    for path in (f"/games/{gid}", "/games", f"/games/{gid}/view"):
        text = api.get(path).get_data(as_text=True)
        assert not [s for s in secrets if s in text], path


def test_a_finished_game_refuses_its_seats_in_a_players_words(api: Any) -> None:
    gid, host = _host(api)
    assert api.post(f"/games/{gid}/abandon", headers=bearer(host)).status_code < 300
    r = api.post(f"/games/{gid}/seats/1/claim", json={"name": "Late"})
    assert r.status_code == 409
    detail = r.get_json()["detail"]
    assert "game is over" in detail and "GET " not in detail and "/games" not in detail


# --- resign and abandon ----------------------------------------------------------------------


def _log(api: Any, gid: str) -> str:
    r = api.get(f"/games/{gid}/log", validate=False)
    assert r.status_code == 200
    text: str = r.get_data(as_text=True)
    return text


#: two people: a resignation ends the game (with three or more seats the others play on:
#: tests/service/test_resign_play_on.py)
TWO = [{"kind": "human"}, {"kind": "human"}]


def test_resigning_ends_the_game_the_others_win_and_the_log_verifies(api: Any) -> None:
    gid, host = _host(api, seats=TWO)
    guest = api.post(f"/games/{gid}/seats/1/claim", json={"name": "Bob"}).get_json()["token"]
    r = api.post(f"/games/{gid}/seats/1/resign", headers=bearer(guest))
    assert r.status_code == 201, r.get_json()
    game = r.get_json()
    assert game["status"] == "finished" and game["end_reason"] == "resigned"
    assert 1 not in game["winners"] and game["winners"]
    types = [line for line in _log(api, gid).splitlines() if "SeatResigned" in line]
    assert types
    verdict = verify_text(_log(api, gid))
    assert verdict.ok and verdict.complete, verdict.to_dict()
    again = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(host))
    assert again.status_code == 422
    assert "over" in again.get_json()["detail"]


def test_only_the_seat_holder_resigns(api: Any) -> None:
    gid, host = _host(api)
    r = api.post(f"/games/{gid}/seats/1/resign", headers=bearer(host))
    assert r.status_code in (401, 403)
    assert _seats(api, gid) and api.get(f"/games/{gid}").get_json()["status"] == "active"


def test_the_host_abandons_a_game_nobody_wins_and_the_log_verifies(api: Any) -> None:
    gid, host = _host(api)
    guest = api.post(f"/games/{gid}/seats/1/claim").get_json()["token"]
    r = api.post(f"/games/{gid}/abandon", headers=bearer(guest))
    assert r.status_code == 403
    r = api.post(f"/games/{gid}/abandon", headers=bearer(host))
    assert r.status_code == 201, r.get_json()
    game = r.get_json()
    assert (game["status"], game["end_reason"], game["winners"]) == ("finished", "abandoned", [])
    verdict = verify_text(_log(api, gid))
    assert verdict.ok and verdict.complete, verdict.to_dict()


def test_the_admin_abandons_a_game_nobody_sat_down_at(api: Any) -> None:
    gid = _game(api)
    assert api.post(f"/games/{gid}/abandon").status_code == 401
    r = api.post(f"/games/{gid}/abandon", headers=bearer(ADMIN))
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["end_reason"] == "abandoned"
    verdict = verify_text(_log(api, gid))
    assert verdict.ok and verdict.complete, verdict.to_dict()
    r = api.post(f"/games/{gid}/abandon", headers=bearer(ADMIN))
    assert r.status_code == 422


@pytest.mark.parametrize("how", ["resign", "abandon"])
def test_rfg_replay_verifies_a_signed_log_that_ends_by_resign_or_abandon(
    api: Any, tmp_path: Any, how: str
) -> None:
    """``rfg replay --key`` re-runs the resign/abandon command and checks the server's signature."""
    gid, host = _host(api, seats=TWO)
    api.post(f"/games/{gid}/seats/1/claim")
    if how == "resign":
        r = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(host))
    else:
        r = api.post(f"/games/{gid}/abandon", headers=bearer(host))
    assert r.status_code == 201, r.get_json()
    path = tmp_path / "game.jsonl"
    path.write_text(_log(api, gid))
    key = api.get("/signing-key").get_json()["public_key"]
    rfg = os.path.join(os.path.dirname(sys.executable), "rfg")
    out = subprocess.run(
        [rfg, "replay", "--key", key, str(path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "consistent and complete" in out.stdout and "authentic: yes" in out.stdout
    # one altered byte in the ending is caught: the recorded command no longer gives its events
    forged = path.read_text().replace('"reason":"' + how, '"reason":"x' + how, 1)
    path.write_text(forged)
    bad = subprocess.run([rfg, "replay", str(path)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1, bad.stdout


def test_unknown_games_and_seats_are_404_in_words(api: Any) -> None:
    for who in ({}, bearer(ADMIN)):
        for url in ("/games/nope00000000/abandon", "/games/nope00000000/seats/1/invite"):
            r = api.post(url, headers=who, validate=bool(who))  # (no token: off-spec on purpose)
            assert r.status_code == 404, (url, r.get_json())
            assert "GET /games" in r.get_json()["detail"]
    gid, host = _host(api)
    r = api.post(f"/games/{gid}/seats/9/invite", headers=bearer(host))
    assert r.status_code == 404
    r = api.post(f"/games/{gid}/seats/9/claim", json={"invite": "a" * 43})
    assert r.status_code == 404


def test_names_show_in_the_public_and_the_seat_views(api: Any) -> None:
    gid, token = _host(api, "Ada")
    public = api.get(f"/games/{gid}/view").get_json()["view"]
    assert public["players"][0]["name"] == "Ada"
    assert "name" not in public["players"][1]  # not claimed yet
    friend = api.post(f"/games/{gid}/seats/1/claim", json={"name": "Grace"})
    assert friend.status_code == 201
    mine = api.get(f"/games/{gid}/seats/0/view", headers=bearer(token)).get_json()["view"]
    assert [p.get("name") for p in mine["players"]] == ["Ada", "Grace", None]
