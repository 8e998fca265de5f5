"""A command's rate limits ride in its append (``service.limits.GATED``): on one Redis the
counting script runs first inside the append's script, so a command costs one round trip for
both; the answers are those of counting before the view - a 429 (nothing appended) whatever else
the request would have met, a bad body or a stale version counted as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import ValidatingClient, bearer, new_game
from .test_limits import _too_many
from .test_limits import limited as _limited
from .test_limits_cost import Monitor

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


def test_a_command_is_one_round_trip_for_its_limits_and_its_append(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    api = limited()
    prefix = api.prefix  # type: ignore[attr-defined]
    gid, tokens = new_game(api, players=2)
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()["view"]
    assert _start_tiles(api, gid, 0, tokens[0], "warm").status_code == 201
    development = view["decision"]["options"][0]["development"]
    body = {"command_id": "c1", "command": {"kind": "start_tiles", "development": development}}
    with Monitor([real_redis], prefix) as monitor:
        r = api.post(f"/games/{gid}/seats/1/commands", headers=bearer(tokens[1]), json=body)
        sent = monitor.commands()
    assert r.status_code == 201, r.get_json()
    assert len(sent) == 1 and sent[0].startswith("EVALSHA "), sent
    assert f"{prefix}:limits:" in sent[0] and f"{{g:{gid}}}:s" in sent[0]
    assert r.headers["RateLimit"].startswith('"commands";r=')


def test_a_command_over_its_limit_is_refused_and_nothing_is_appended(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="2 per minute")
    gid, tokens = new_game(api, players=3)
    assert _start_tiles(api, gid, 0, tokens[0], "a").status_code == 201
    version = api.get(f"/games/{gid}").get_json()["version"]
    # a bad body is counted as before: the token's second command
    bad = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={"command_id": "b"},
        validate=False,
    )
    assert bad.status_code == 422 and bad.headers["RateLimit"].startswith('"commands";r=0')
    # the third, a legal command, is refused: 429, nothing stored
    view = api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).get_json()["view"]
    assert view["decision"] is None  # (seat 0 played its start tiles: a 422 without the limit)
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={"command_id": "c", "command": {"kind": "start_tiles", "development": 1}},
    )
    _too_many(r, "commands")
    assert api.get(f"/games/{gid}").get_json()["version"] == version
    # another token's commands are its own
    assert _start_tiles(api, gid, 1, tokens[1], "a").status_code == 201


def test_a_refusal_wins_over_a_stale_version_and_a_retry(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="1 per minute")
    gid, tokens = new_game(api, players=2)
    first = _start_tiles(api, gid, 0, tokens[0], "a")
    assert first.status_code == 201
    version = first.get_json()["version"]
    # a stale version (409 without the limit) and a retry of "a" (201 replayed without it)
    stale = _start_tiles(api, gid, 1, tokens[1], "x", expected_version=version - 1)
    assert stale.status_code == 409  # (seat 1's token has its own limit)
    _too_many(_start_tiles(api, gid, 1, tokens[1], "y", expected_version=version - 1), "commands")
    body = {"command_id": "a", "command": {"kind": "start_tiles"}}
    retry = api.post(
        f"/games/{gid}/seats/0/commands", headers=bearer(tokens[0]), json=body, validate=False
    )
    _too_many(retry, "commands")
