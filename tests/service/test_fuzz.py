"""Property-based fuzzing of the whole API with schemathesis: requests generated from
openapi.yaml (valid and invalid, for every operation) never get a 5xx, and every answer passes
schemathesis' checks (status codes, content types, headers and bodies as documented; invalid
requests refused). Authenticated too: every other request aims at real resources with a real
credential - a claimed seat's token, a bot account's token in its own ladder seat, the admin
token - so generated commands reach the engine and generated ladder changes reach the store.

At least ``MIN_REQUESTS`` requests in all (about a minute on two cores); SSE streams are bounded
to a fraction of a second here. Rate limits are off: they are tested in test_limits.py."""

from __future__ import annotations

import itertools
import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from .conftest import ADMIN, make_app
from .test_bot_accounts import external_game

#: one pytest-xdist worker runs the whole module (``make test-all``: ``--dist loadgroup``), so
#: ``test_the_fuzzing_made_enough_requests`` counts every operation's requests, in its process
pytestmark = pytest.mark.xdist_group("fuzz")
MIN_REQUESTS = 5000
EXAMPLES = 150  # per operation and test
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
]

app = make_app(f"memory://{uuid.uuid4().hex}", SSE_MAX_SECONDS=0.2, SSE_KEEPALIVE_SECONDS=0.1)
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", app)

# real resources for the authenticated half
_client = app.test_client()
_game = _client.post("/games", json={"seats": [{"kind": "human"}] * 3}).get_json()["game_id"]
_seat_token = _client.post(f"/games/{_game}/seats/1/claim").get_json()["token"]
_bot = _client.post(
    "/bots/accounts", json={"name": "fuzz", "description": "d", "contact": "c"}
).get_json()
_other = _client.post(
    "/bots/accounts", json={"name": "other", "description": "d", "contact": "c"}
).get_json()
_bot_game = external_game(app, _bot["account_id"], _other["account_id"])
_client.post(
    "/ladders", json={"name": "fuzz", "players": [2]}, headers={"Authorization": f"Bearer {ADMIN}"}
)
_turn = itertools.count()
sent: list[tuple[str, int, bool]] = []  # (operation, status, generated as a negative case)


def _aim(case: schemathesis.Case) -> None:
    """Every other case: real path parameters and the credential that fits the operation."""
    if next(_turn) % 2:
        return
    path = case.path
    params = dict(case.path_parameters or {})
    token: str | None = None
    if "{seat}" in path:
        if next(_turn) % 2:
            params.update(game_id=_game, seat=1)
            token = _seat_token
        else:
            params.update(game_id=_bot_game, seat=0)
            token = _bot["token"]
    elif "{game_id}" in path:
        params["game_id"] = _game
    if "{account_id}" in path:
        params["account_id"] = _bot["account_id"]
    if path.startswith("/bots/") and token is None:
        token = _bot["token"]
    if "{ladder}" in path:
        params["ladder"] = "fuzz"
    if (
        path.startswith("/ladders")
        or (path == "/games" and case.method == "POST")
        or path.endswith("/log")
    ):
        token = token or ADMIN
    case.path_parameters = params
    headers = dict(case.headers or {})
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    headers.pop("If-Match", None)  # a stale version only ever gets its 409
    case.headers = headers
    # a revoked bot token would end the authenticated half for the bot endpoints
    if case.method == "DELETE" and path == "/bots/accounts/{account_id}/token":
        case.headers.pop("Authorization", None)


# POST /replays/verify is fuzzed through its text/plain form; schemathesis has no JSON Lines
# generator (an alias to text/plain makes it count a non-string as schema-violating although any
# text is a log to verify)
@pytest.mark.filterwarnings("ignore:Skipped test cases with unsupported payload media types")
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=True,
)
def test_no_request_gets_a_server_error_or_breaks_the_contract(case: schemathesis.Case) -> None:
    _aim(case)
    response = case.call()
    negative = (
        "NEGATIVE" in str(getattr(case.meta, "generation", "")).upper() if case.meta else False
    )
    sent.append((case.operation.label, response.status_code, negative))
    case.validate_response(response, checks=CHECKS)


def test_the_fuzzing_made_enough_requests() -> None:
    if not sent:
        pytest.skip("the fuzz test did not run (deselected)")
    statuses = sorted({status for _, status, _ in sent})
    print(
        f"\nschemathesis: {len(sent)} requests over {len({op for op, _, _ in sent})} operations, "
        f"{sum(neg for _, _, neg in sent)} of them schema-violating; statuses {statuses}"
    )
    assert len(sent) >= MIN_REQUESTS, f"only {len(sent)} generated requests"
    assert not [s for s in statuses if s >= 500]
    assert {200, 201, 400, 401, 403, 404, 422} <= set(statuses), (
        "valid, invalid and authenticated requests"
    )
