"""Getting a seat back: the host re-invites a friend who lost their device, and a seat holder
moves their seat to another device. Nobody else can do either (attack tests), an old token is
refused (401) the moment a new one is issued, and a used or expired code says what to do."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.service.conftest import ADMIN, bearer


def _table(api: Any) -> tuple[str, str, str]:
    """A game with the host in seat 0 (Ada) and a friend in seat 1 (Grace): (id, tokens)."""
    seats = [{"kind": "human"}, {"kind": "human"}, {"kind": "human"}]
    gid = api.post("/games", json={"seats": seats}).get_json()["game_id"]
    host = api.post(f"/games/{gid}/seats/0/claim", json={"name": "Ada"}).get_json()["token"]
    friend = api.post(f"/games/{gid}/seats/1/claim", json={"name": "Grace"}).get_json()["token"]
    return gid, host, friend


def _view(api: Any, gid: str, seat: int, token: str) -> int:
    status: int = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(token)).status_code
    return status


def _reinvite(api: Any, gid: str, seat: int, token: str | None) -> Any:
    headers = bearer(token) if token else {}
    return api.post(f"/games/{gid}/seats/{seat}/invite", json={"replace": True}, headers=headers)


# --- the host re-invites -----------------------------------------------------------------------


def test_the_host_reinvites_a_claimed_seat_the_old_token_dies_the_name_stays(api: Any) -> None:
    gid, host, friend = _table(api)
    plain = api.post(f"/games/{gid}/seats/1/invite", headers=bearer(host))
    assert plain.status_code == 409
    assert '"replace": true' in plain.get_json()["detail"]
    assert _view(api, gid, 1, friend) == 200

    r = _reinvite(api, gid, 1, host)
    assert r.status_code == 201, r.get_json()
    assert r.headers["Cache-Control"] == "no-store"
    code = r.get_json()["invite"]
    assert r.get_json()["link"] == f"/play/#/join/{gid}/1/{code}"
    assert _view(api, gid, 1, friend) == 401  # revoked at once
    seat = api.get(f"/games/{gid}").get_json()["seats"][1]
    assert seat["name"] == "Grace" and seat["invited"] is True
    assert api.post(f"/games/{gid}/seats/1/claim", json={}).status_code == 409  # not the lobby

    back = api.post(f"/games/{gid}/seats/1/claim", json={"invite": code})
    assert back.status_code == 201, back.get_json()
    new = back.get_json()["token"]
    assert new != friend
    assert _view(api, gid, 1, new) == 200
    assert _view(api, gid, 1, friend) == 401
    assert api.get(f"/games/{gid}").get_json()["seats"][1]["name"] == "Grace"
    again = api.post(f"/games/{gid}/seats/1/claim", json={"invite": code})
    assert again.status_code == 409 and "used already" in again.get_json()["detail"]
    # the host is still the host
    assert _reinvite(api, gid, 1, host).status_code == 201


def test_the_admin_reinvites_any_human_seat_the_host_not_its_own(api: Any) -> None:
    gid, host, _friend = _table(api)
    own = _reinvite(api, gid, 0, host)
    assert own.status_code == 403
    assert "/move" in own.get_json()["detail"]
    assert _view(api, gid, 0, host) == 200
    r = _reinvite(api, gid, 0, ADMIN)
    assert r.status_code == 201
    assert _view(api, gid, 0, host) == 401


def test_nobody_but_the_host_or_the_admin_reinvites(api: Any) -> None:
    gid, host, friend = _table(api)
    other, other_host, _ = _table(api)
    guest = api.post(f"/games/{gid}/seats/2/claim").get_json()["token"]
    assert _reinvite(api, gid, 1, None).status_code == 401  # no token
    assert _reinvite(api, gid, 1, other_host).status_code == 401  # another game's host
    assert _reinvite(api, gid, 1, "rfgb_" + "x" * 43).status_code == 401  # a made-up bot token
    assert _reinvite(api, gid, 2, friend).status_code == 403  # another seat
    assert _reinvite(api, gid, 1, guest).status_code == 403
    assert _reinvite(api, gid, 1, friend).status_code == 403  # itself, not the host
    assert _view(api, gid, 1, friend) == 200 and _view(api, gid, 2, guest) == 200
    assert _view(api, gid, 0, host) == 200


def test_a_bot_token_neither_reinvites_nor_moves(api: Any) -> None:
    gid, _host, friend = _table(api)
    r = api.post("/bots/accounts", json={"name": "robo", "description": "t", "contact": "a@b.c"})
    assert r.status_code == 201, r.get_json()
    bot = r.get_json()["token"]
    assert _reinvite(api, gid, 1, bot).status_code == 401
    assert api.post(f"/games/{gid}/seats/1/move", headers=bearer(bot)).status_code == 403
    assert _view(api, gid, 1, friend) == 200


# --- the seat holder moves -----------------------------------------------------------------------


def _move(api: Any, gid: str, seat: int, token: str | None) -> Any:
    return api.post(f"/games/{gid}/seats/{seat}/move", headers=bearer(token) if token else {})


def test_a_seat_moves_to_another_device_the_old_one_is_signed_out_then(api: Any) -> None:
    gid, host, friend = _table(api)
    r = _move(api, gid, 1, friend)
    assert r.status_code == 201, r.get_json()
    assert r.headers["Cache-Control"] == "no-store"
    body = r.get_json()
    code = body["move"]
    assert body["link"] == f"/play/#/move/{gid}/1/{code}"
    assert body["expires_at"].endswith("Z")
    assert len(code) >= 43  # 256 bits
    assert _view(api, gid, 1, friend) == 200  # still playing until the other device signs in

    moved = api.post(f"/games/{gid}/seats/1/claim", json={"move": code})
    assert moved.status_code == 201, moved.get_json()
    new = moved.get_json()["token"]
    assert _view(api, gid, 1, new) == 200
    assert _view(api, gid, 1, friend) == 401
    assert _move(api, gid, 1, friend).status_code == 401
    assert api.get(f"/games/{gid}").get_json()["seats"][1]["name"] == "Grace"

    used = api.post(f"/games/{gid}/seats/1/claim", json={"move": code})
    assert used.status_code == 409
    assert "used already" in used.get_json()["detail"] and "/move" in used.get_json()["detail"]
    assert _view(api, gid, 1, new) == 200
    assert _view(api, gid, 0, host) == 200


def test_only_the_seat_holder_makes_a_move_code(api: Any) -> None:
    gid, host, friend = _table(api)
    _other, other_host, _ = _table(api)
    assert _move(api, gid, 1, None).status_code == 401
    assert _move(api, gid, 1, other_host).status_code == 401
    assert _move(api, gid, 1, host).status_code == 403  # the host moves only its own seat
    assert _move(api, gid, 1, ADMIN).status_code == 401
    assert _view(api, gid, 1, friend) == 200


def test_a_wrong_replaced_or_expired_move_code_is_refused_saying_what_to_do(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gid, _host, friend = _table(api)
    first = _move(api, gid, 1, friend).get_json()["move"]
    second = _move(api, gid, 1, friend).get_json()["move"]
    r = api.post(f"/games/{gid}/seats/1/claim", json={"move": first})
    assert r.status_code == 403 and "new one" in r.get_json()["detail"]
    r = api.post(f"/games/{gid}/seats/1/claim", json={"move": "x" * 43})
    assert r.status_code == 403
    r = api.post(f"/games/{gid}/seats/2/claim", json={"move": second})  # another seat's code
    assert r.status_code == 403
    both = api.post(f"/games/{gid}/seats/1/claim", json={"move": second, "invite": second})
    assert both.status_code == 422

    later = time.time() + 601
    monkeypatch.setattr("service.tokens.time.time", lambda: later)
    r = api.post(f"/games/{gid}/seats/1/claim", json={"move": second})
    assert r.status_code == 409
    assert "expired" in r.get_json()["detail"] and "/move" in r.get_json()["detail"]
    assert _view(api, gid, 1, friend) == 200  # nothing moved


def test_a_reinvite_cancels_an_outstanding_move_code(api: Any) -> None:
    gid, host, friend = _table(api)
    code = _move(api, gid, 1, friend).get_json()["move"]
    invite = _reinvite(api, gid, 1, host).get_json()["invite"]
    assert api.post(f"/games/{gid}/seats/1/claim", json={"move": code}).status_code == 403
    assert api.post(f"/games/{gid}/seats/1/claim", json={"invite": invite}).status_code == 201


def test_move_codes_are_stored_only_hashed(real_api: Any, real_redis: Any) -> None:
    gid, _host, friend = _table(real_api)
    code = _move(real_api, gid, 1, friend).get_json()["move"]
    token = real_api.post(f"/games/{gid}/seats/1/claim", json={"move": code}).get_json()["token"]
    assert _view(real_api, gid, 1, friend) == 401
    assert _view(real_api, gid, 1, token) == 200
    stored = b"".join(
        k + v
        for key in real_redis.scan_iter(match=f"*{gid}*tokens")
        for k, v in real_redis.hgetall(key).items()
    )
    assert stored and code.encode() not in stored and token.encode() not in stored
