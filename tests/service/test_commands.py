"""Commands over HTTP: the answer (new version, the seat's redacted events), read-your-writes,
idempotent retries, optimistic versions (If-Match or expected_version), illegal commands with the
engine's code/field/value, and strict command shapes."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ValidatingClient, bearer, new_game


def _decision(api: ValidatingClient, gid: str, seat: int, token: str) -> tuple[int, dict[str, Any]]:
    r = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(token))
    assert r.status_code == 200 and r.headers["ETag"] == f'"{r.get_json()["version"]}"'
    return r.get_json()["version"], r.get_json()["view"]["decision"]


def _post(
    api: ValidatingClient, gid: str, seat: int, token: str, body: dict[str, Any], **headers: str
) -> Any:
    return api.post(
        f"/games/{gid}/seats/{seat}/commands", json=body, headers={**bearer(token), **headers}
    )


def _start(decision: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "start_tiles", "development": decision["options"][0]["development"]}


def test_a_command_answers_with_the_new_version_and_views_show_it(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2, seed="cmd-1")
    version, decision = _decision(api, gid, 0, tokens[0])
    assert decision["kind"] == "start_tiles" and decision["seat"] == 0
    r = _post(
        api,
        gid,
        0,
        tokens[0],
        {"command_id": "a-1", "command": _start(decision)},
        **{"If-Match": f'"{version}"'},
    )
    assert r.status_code == 201, r.get_json()
    out = r.get_json()
    assert out["version"] == out["last_seq"] > version and out["first_seq"] == version + 1
    assert r.headers["ETag"] == f'"{out["version"]}"' and "Idempotent-Replayed" not in r.headers
    assert [e["seq"] for e in out["events"]] == list(range(out["first_seq"], out["last_seq"] + 1))
    assert out["events"][0]["type"] == "CommandSubmitted"
    assert out["events"][0]["event"]["command"] == _start(decision)  # the seat sees its own
    assert out["command_id"] == "a-1" and out["events"][0]["command_id"] == "seat:0:a-1"
    # read-your-writes: the views are at the new version right away
    new_version, new_decision = _decision(api, gid, 0, tokens[0])
    assert new_version == out["version"] and new_decision is None
    assert api.get(f"/games/{gid}/view").get_json()["version"] == out["version"]
    # others see the command's kind only
    feed = api.get(f"/games/{gid}/seats/1/events?after={version}", headers=bearer(tokens[1]))
    record = feed.get_json()["events"][0]["event"]
    assert record["type"] == "CommandSubmitted" and "command" not in record
    assert record["kind"] == "start_tiles"


def test_a_retry_gets_the_same_answer_and_no_second_effect(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2, seed="cmd-2")
    version, decision = _decision(api, gid, 1, tokens[1])
    body = {"command_id": "retry-me", "expected_version": version, "command": _start(decision)}
    first = _post(api, gid, 1, tokens[1], body)
    # seat 0 moves the game on; the retry still gets the original answer
    v0, d0 = _decision(api, gid, 0, tokens[0])
    assert (
        _post(api, gid, 0, tokens[0], {"command_id": "x", "command": _start(d0)}).status_code == 201
    )
    head = api.get(f"/games/{gid}/view").get_json()["version"]
    again = _post(api, gid, 1, tokens[1], body)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert api.get(f"/games/{gid}/view").get_json()["version"] == head
    # the same id is another seat's own id space
    assert _post(api, gid, 0, tokens[0], body).status_code in (201, 409, 422)
    # the same id with a different command is refused
    other = dict(
        body, command={"kind": "start_tiles", "development": decision["options"][1]["development"]}
    )
    r = _post(api, gid, 1, tokens[1], other)
    assert r.status_code == 422 and r.get_json()["type"] == "/problems/idempotency-key-reused"


def test_a_stale_version_is_a_conflict_and_nothing_is_stored(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2, seed="cmd-3")
    version, d1 = _decision(api, gid, 1, tokens[1])
    _v, d0 = _decision(api, gid, 0, tokens[0])
    assert (
        _post(api, gid, 0, tokens[0], {"command_id": "s0", "command": _start(d0)}).status_code
        == 201
    )
    head = api.get(f"/games/{gid}/view").get_json()["version"]
    for body, headers in (
        ({"command_id": "s1", "expected_version": version, "command": _start(d1)}, {}),
        ({"command_id": "s1", "command": _start(d1)}, {"If-Match": f'"{version}"'}),
        ({"command_id": "s1", "command": _start(d1)}, {"If-Match": f'W/"{version}"'}),
    ):
        r = _post(api, gid, 1, tokens[1], body, **headers)
        assert r.status_code == 409, r.get_json()
        p = r.get_json()
        assert p["current_version"] == head and p["expected_version"] == version
        assert r.headers["ETag"] == f'"{head}"' and f'"{head}"' in p["detail"]
    assert api.get(f"/games/{gid}/view").get_json()["version"] == head
    r = _post(
        api,
        gid,
        1,
        tokens[1],
        {"command_id": "s1", "expected_version": head, "command": _start(d1)},
    )
    assert r.status_code == 201
    # If-Match and expected_version must agree
    r = _post(
        api,
        gid,
        1,
        tokens[1],
        {"command_id": "s2", "expected_version": 1, "command": _start(d1)},
        **{"If-Match": '"2"'},
    )
    assert r.status_code == 422
    r = _post(
        api,
        gid,
        1,
        tokens[1],
        {"command_id": "s3", "command": _start(d1)},
        **{"If-Match": "yesterday"},
    )
    assert r.status_code == 400 and r.get_json()["type"] == "/problems/malformed-request"


def test_an_illegal_command_is_a_422_with_the_engines_reason(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2, seed="cmd-4")
    version, _d = _decision(api, gid, 0, tokens[0])
    r = _post(
        api,
        gid,
        0,
        tokens[0],
        {"command_id": "bad", "command": {"kind": "start_tiles", "development": 55}},
    )
    assert r.status_code == 422
    p = r.get_json()
    assert p["type"] == "/problems/illegal-command" and p["code"] and p["field"] == "development"
    assert p["value"] == 55 and "start tile" in p["detail"]
    r = _post(
        api, gid, 0, tokens[0], {"command_id": "bad2", "command": {"kind": "manage", "recruit": []}}
    )
    assert r.status_code == 422 and r.get_json()["code"] == "wrong_kind"
    assert api.get(f"/games/{gid}/view").get_json()["version"] == version


@pytest.mark.parametrize(
    ("command", "field"),
    [
        ({"kind": "start_tiles", "development": "12"}, "command.development"),
        ({"kind": "start_tiles", "development": True}, "command.development"),
        ({"kind": "start_tiles", "development": 12, "extra": 1}, "command.extra"),
        ({"kind": "teleport"}, "command.kind"),
        ({"kind": "assign", "select": {"die": 1, "phase": "party"}}, "command.select.phase"),
        (  # Ambition's two_phase is a known field, checked like wild
            {"kind": "assign", "select": {"die": 1, "phase": "ship"}, "two_phase": [{"die": 1}]},
            "command.two_phase[0].to",
        ),
        (
            {"kind": "ship", "tasks": [{"shipper": 1, "good": 2, "action": "sell"}]},
            "command.tasks[0].action",
        ),
        (
            {"kind": "place_tiles", "placements": [{"tile": 3, "as": "world", "on_top": "yes"}]},
            "command.placements[0].on_top",
        ),
        ({"kind": "develop", "order": [1, -2]}, "command.order[1]"),
        ("start_tiles", "command"),
    ],
)
def test_command_shapes_are_checked_strictly(
    api: ValidatingClient, command: Any, field: str
) -> None:
    gid, tokens = new_game(api, players=2)
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        json={"command_id": "c", "command": command},
        headers=bearer(tokens[0]),
        validate=False,
    )
    assert r.status_code == 422, r.get_json()
    p = r.get_json()
    assert p["type"] == "/problems/invalid-request" and field in p["errors"], p


def test_every_decision_kind_has_a_command_schema() -> None:
    import engine.flow
    from service.schemas.commands import COMMAND_SCHEMAS

    assert set(COMMAND_SCHEMAS) == set(engine.flow.DECISIONS)
