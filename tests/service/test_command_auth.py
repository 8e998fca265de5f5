"""A command's seat token is checked before the command is looked at
(``service.auth.require_seat_command``): a wrong credential gets the answer ``require_seat``
gives, 401/403/404, before a bad body, a conflict, an illegal command or a retry's first answer -
and nothing is stored. A rotated seat token or a revoked bot token stops working for commands at
once. On the real Redis."""

from __future__ import annotations

from typing import Any

import engine
from bots import get_bot
from engine.rng import Rng

from .conftest import ValidatingClient, bearer, new_game
from .test_bot_accounts import external_game, register


def _legal(api: ValidatingClient, gid: str, seat: int, token: str) -> tuple[dict[str, Any], int]:
    view = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(token)).get_json()
    decision = view["view"]["decision"]
    return get_bot("random").act(decision, None, Rng(7)), view["version"]


def _post(
    api: ValidatingClient, gid: str, seat: int, token: str | None, body: Any, **kw: Any
) -> Any:
    headers = bearer(token) if token is not None else {}
    # bodies and credentials are off the spec on purpose here: not validated against it
    return api.post(
        f"/games/{gid}/seats/{seat}/commands", json=body, headers=headers, validate=False, **kw
    )


def test_a_wrong_credential_is_answered_first_whatever_else_is_wrong(
    real_api: ValidatingClient,
) -> None:
    gid, tokens = new_game(real_api, players=2, seed="command-auth")
    other_gid, other_tokens = new_game(real_api, players=2)
    cmd, version = _legal(real_api, gid, 0, tokens[0])
    applied = _post(
        real_api,
        gid,
        0,
        tokens[0],
        {"command_id": "a1", "expected_version": version, "command": cmd},
    )
    assert applied.status_code == 201, applied.get_json()
    after = applied.get_json()["version"]

    bodies = {
        "a bad body": {"command_id": "a2", "command": {"kind": "no-such-kind"}},
        "a stale version": {"command_id": "a3", "expected_version": version, "command": cmd},
        "a retry of an applied command": {
            "command_id": "a1",
            "expected_version": version,
            "command": cmd,
        },
        "an illegal command": {"command_id": "a4", "command": {"kind": "start_tiles"}},
        "no version at all": {"command_id": "a5", "command": cmd},
    }
    for what, body in bodies.items():
        # another seat's token: 403; a token of another game, garbage: 401; none: 401
        for token, status in ((tokens[1], 403), (other_tokens[0], 401), ("garbage", 401)):
            r = _post(real_api, gid, 0, token, body)
            assert r.status_code == status, (what, r.get_json())
            assert "Idempotent-Replayed" not in r.headers, what
        r = _post(real_api, gid, 0, None, body)
        assert r.status_code == 401, (what, r.get_json())
        # the unknown game and seat: 404 with any token
        assert _post(real_api, "nope", 0, tokens[0], body).status_code == 404, what
        assert _post(real_api, gid, 5, tokens[0], body).status_code == 404, what
    assert real_api.get(f"/games/{gid}/view").get_json()["version"] == after, "nothing stored"

    # the seat's own token gets each answer that was behind the credential check
    expected = {
        "a bad body": 422,
        "a stale version": 409,
        "a retry of an applied command": 201,
        "an illegal command": 422,
    }
    for what, status in expected.items():
        r = _post(real_api, gid, 0, tokens[0], bodies[what])
        assert r.status_code == status, (what, r.get_json())
    replay = _post(real_api, gid, 0, tokens[0], bodies["a retry of an applied command"])
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert real_api.get(f"/games/{gid}/view").get_json()["version"] == after


def test_a_rotated_token_stops_working_for_commands_at_once(real_api: ValidatingClient) -> None:
    gid, tokens = new_game(real_api, players=2, seed="command-rotate")
    cmd, version = _legal(real_api, gid, 0, tokens[0])
    r = real_api.post(f"/games/{gid}/seats/0/token", headers=bearer(tokens[0]))
    assert r.status_code in (200, 201), r.get_json()
    new = r.get_json()["token"]
    body = {"command_id": "r1", "expected_version": version, "command": cmd}
    old = _post(real_api, gid, 0, tokens[0], body)
    assert old.status_code == 401, old.get_json()
    assert real_api.get(f"/games/{gid}/view").get_json()["version"] == version
    assert _post(real_api, gid, 0, new, body).status_code == 201


def test_a_revoked_bot_token_stops_working_for_commands_at_once(
    real_api: ValidatingClient,
) -> None:
    a, b = register(real_api, "a"), register(real_api, "b")
    gid = external_game(real_api.application, a["account_id"], b["account_id"])
    view = real_api.get(f"/games/{gid}/seats/0/view", headers=bearer(a["token"])).get_json()
    options = view["view"]["decision"]["options"]
    cmd = {"kind": "start_tiles", "development": options[0]["development"]}
    body = {"command_id": "r1", "expected_version": view["version"], "command": cmd}
    # another account's token on this seat: 403; the account's own, revoked: 401
    assert _post(real_api, gid, 0, b["token"], body).status_code == 403
    real_api.delete(f"/bots/accounts/{a['account_id']}/token", headers=bearer(a["token"]))
    r = _post(real_api, gid, 0, a["token"], body)
    assert r.status_code == 401, r.get_json()
    assert real_api.get(f"/games/{gid}").get_json()["version"] == view["version"]


def test_a_whole_game_is_played_through_the_token_check(real_api: ValidatingClient) -> None:
    """Every command of a game with its seat's token: the log is the engine's game."""
    gid, tokens = new_game(real_api, players=2, seed="command-token")
    bot, rng = get_bot("random"), Rng(3)
    state = engine.replay(engine.create("command-token", 2, {}, None))
    n = 0
    while not state.over:
        seat = min(engine.pending(state))
        decision = engine.legal(state, seat)
        assert decision is not None
        cmd = bot.act(decision, None, rng)
        engine.evolve(state, engine.command_submitted(seat, cmd))
        engine.play(state, seat, cmd)
        r = _post(real_api, gid, seat, tokens[seat], {"command_id": f"g{n}", "command": cmd})
        assert r.status_code == 201, r.get_json()
        n += 1
    summary = real_api.get(f"/games/{gid}").get_json()
    assert summary["status"] == "finished" and summary["version"] == state.seq
