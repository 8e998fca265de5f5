"""A command's rate limits and its seat token are checked before the command is decided, in one
pipelined round trip (``service.auth.require_seat_command``), and its append is the next: two
round trips for a command whose game the process has cached. A 429 is the answer whatever else
the request would have met - a wrong token, a bad body, a stale version, a retry - and stores
nothing; a bad body is counted as any command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis

from .conftest import ValidatingClient, bearer, new_game
from .test_limits import _too_many
from .test_limits import limited as _limited

pytestmark = pytest.mark.redis
limited = _limited  # the fixture: API clients on the real Redis, limits on


def _start_tiles(api: Any, gid: str, seat: int, token: str, cid: str, **extra: Any) -> Any:
    view = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(token)).get_json()["view"]
    development = view["decision"]["options"][0]["development"]
    body = {
        "command_id": cid,
        "command": {"kind": "start_tiles", "development": development},
        **extra,
    }
    return api.post(f"/games/{gid}/seats/{seat}/commands", headers=bearer(token), json=body)


class _CountingConnection(redis.Connection):
    """A connection that counts its round trips: each write of commands (a pipeline's too)."""

    trips = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).trips += 1
        super().send_packed_command(command, check_health)


def test_a_command_is_one_round_trip_for_its_checks_and_one_for_its_append(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited()
    pool = api.application.extensions["rfg"].client.connection_pool
    pool.connection_class = _CountingConnection  # the app's client: limits, tokens, the store
    pool.disconnect()
    gid, tokens = new_game(api, players=2)
    assert _start_tiles(api, gid, 0, tokens[0], "warm").status_code == 201
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()["view"]
    development = view["decision"]["options"][0]["development"]
    body = {"command_id": "c1", "command": {"kind": "start_tiles", "development": development}}
    before = _CountingConnection.trips
    r = api.post(f"/games/{gid}/seats/1/commands", headers=bearer(tokens[1]), json=body)
    assert r.status_code == 201, r.get_json()
    assert _CountingConnection.trips - before == 2
    assert r.headers["RateLimit"].startswith('"commands";r=')


def test_a_command_over_its_limit_is_refused_and_nothing_is_appended(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="2 per minute")
    gid, tokens = new_game(api, players=3)
    assert _start_tiles(api, gid, 0, tokens[0], "a").status_code == 201
    version = api.get(f"/games/{gid}").get_json()["version"]
    # a bad body is counted as any command: the token's second
    bad = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={"command_id": "b"},
        validate=False,
    )
    assert bad.status_code == 422 and bad.headers["RateLimit"].startswith('"commands";r=0')
    # the third, a legal command, is refused: 429, nothing stored
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()["view"]
    assert view["decision"] is not None
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={"command_id": "c", "command": {"kind": "start_tiles", "development": 1}},
    )
    _too_many(r, "commands")
    assert api.get(f"/games/{gid}").get_json()["version"] == version
    # another token's commands are its own
    assert _start_tiles(api, gid, 1, tokens[1], "a").status_code == 201


def test_a_refusal_wins_over_a_wrong_token_a_stale_version_and_a_retry(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="1 per minute")
    gid, tokens = new_game(api, players=2)
    first = _start_tiles(api, gid, 0, tokens[0], "a")
    assert first.status_code == 201
    version = first.get_json()["version"]
    # a stale version (409 without the limit), then past the limit: 429
    stale = _start_tiles(api, gid, 1, tokens[1], "x", expected_version=version - 1)
    assert stale.status_code == 409  # (seat 1's token has its own limit)
    _too_many(_start_tiles(api, gid, 1, tokens[1], "y", expected_version=version - 1), "commands")
    # a retry of "a" (201 replayed without the limit)
    body = {"command_id": "a", "command": {"kind": "start_tiles"}}
    retry = api.post(
        f"/games/{gid}/seats/0/commands", headers=bearer(tokens[0]), json=body, validate=False
    )
    _too_many(retry, "commands")
    # seat 1's token on seat 0 (403 without the limit): counted as seat 1's, refused 429
    wrong = api.post(
        f"/games/{gid}/seats/0/commands", headers=bearer(tokens[1]), json=body, validate=False
    )
    _too_many(wrong, "commands")
    assert api.get(f"/games/{gid}").get_json()["version"] == version
