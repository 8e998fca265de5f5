"""Every ``timeout_policy`` the contract offers (openapi.yaml, docs/bots.md, docs/workers.md) is
one a game can be created with: ``ismcts`` used to pass the request schema and then be refused
with 422 by the clock rules (``events.games.time_control`` allowed only heuristic and minimal)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from events.games.time_control import TIMEOUT_POLICIES

from .conftest import ValidatingClient

ROOT = Path(__file__).resolve().parents[2]


def _offered() -> list[str]:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    schemas = spec["components"]["schemas"]
    table = next(s for s in schemas.values() if "timeout_policy" in s.get("properties", {}))
    return list(table["properties"]["timeout_policy"]["enum"])


def test_the_spec_and_the_clock_rules_offer_the_same_policies() -> None:
    assert sorted(_offered()) == sorted(TIMEOUT_POLICIES)


@pytest.mark.parametrize("policy", _offered())
def test_a_game_is_created_with_each_offered_timeout_policy(
    api: ValidatingClient, policy: str
) -> None:
    body = {
        "seats": [{"kind": "human"}, {"kind": "human"}],
        "time_control": {"per_decision": 30},
        "timeout_policy": policy,
    }
    r = api.post("/games", json=body)
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["game_id"]
    clock = api.get(f"/games/{gid}/view").get_json()["view"]["clock"]
    assert clock["timeout_policy"] == policy


def test_an_unknown_timeout_policy_is_still_refused(api: ValidatingClient) -> None:
    body = {"seats": [{"kind": "human"}, {"kind": "human"}], "timeout_policy": "coinflip"}
    r = api.post("/games", json=body, validate=False)
    assert r.status_code == 422 and "timeout_policy" in str(r.get_json())
