"""A genuine signed log of a game ended by resignation, and forged copies of it that every verifier
must refuse (the Python verifier, ``POST /replays/verify``, ``rfg replay`` and the TypeScript
verifier all test against these).

The game: seed ``r1``, seat 0 resigns at once while its tiles score more than seat 1's, so
``GameEnded`` names seat 1 the winner while the scores alone would name seat 0. The forgeries:

* a key given twice - in an envelope, in an event's payload, deep in the payload, in the
  signature record, in its ``result`` - the first value a lie, the last the genuine one (what a
  parser keeping the last value, such as ``JSON.parse`` or orjson, reads);
* a signature, validly made with the server's key, whose ``result`` names the winners the scores
  alone give instead of ``GameEnded``'s.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask.testing import FlaskClient

from engine.canonical import canonical_json
from events.verify.signing import Signer

_PRIVATE = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"rfg test forgeries").digest())
#: the server's key in these tests: give ``SIGNING_KEY`` to the app
SIGNING_KEY = base64.b64encode(
    _PRIVATE.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
).decode("ascii")
SIGNER = Signer(_PRIVATE, "tests")
#: the public key as ``GET /signing-key`` serves it (base64 of its 32 raw bytes)
PUBLIC_KEY: str = SIGNER.public_info()["public_key"]

#: the kinds of forgery (what each verifier's reason must name)
DUPLICATE, RESULT = "duplicate", "result"
#: every forgery ``forgeries`` makes, and its kind
KINDS = {
    "a key twice in an envelope": DUPLICATE,
    "a key twice in a payload": DUPLICATE,
    "a key twice deep in a payload": DUPLICATE,
    "a key twice in the signature": DUPLICATE,
    "a key twice in the signed result": DUPLICATE,
    "the scores' winners signed": RESULT,
}


def app_config() -> dict[str, Any]:
    """The config of an app that signs with ``SIGNER`` (for ``tests.service.conftest.make_app``)."""
    return {"SIGNING_KEY": SIGNING_KEY}


def new_app_client() -> FlaskClient:
    """A plain test client of an app of its own (fakeredis) that signs with ``SIGNER``."""
    from tests.service.conftest import make_app

    return make_app(f"memory://{uuid.uuid4().hex}", **app_config()).test_client()


def resigned_log(api: FlaskClient) -> str:
    """The full signed log of a 2-seat game that seat 0 resigns while its score is the higher,
    made through ``api`` (an app signing with ``SIGNER``)."""
    from tests.service.conftest import bearer, new_game

    gid, tokens = new_game(api, 2, seed="r1")
    r = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(tokens[0]))
    assert r.status_code == 201, r.get_json()
    text: str = api.get(f"/games/{gid}/log").get_data(as_text=True)
    ended = json.loads(text.splitlines()[-2])
    assert ended["type"] == "GameEnded" and ended["payload"]["winners"] == [1]
    totals = [s["total"] for s in ended["payload"]["scores"]]
    assert totals[0] >= totals[1], "the premise: the resigning seat scores at least as much"
    return text


def aborted_log(api: FlaskClient) -> str:
    """The full signed log of a challenge game (a bot account against the random bot) that the
    account aborts with its bot token before the first round ends, made through ``api`` (an app
    signing with ``SIGNER``): it ends ``GameAborted``, ``GameEnded`` (reason aborted, no winner)."""
    from tests.service.conftest import bearer

    r = api.post("/bots/accounts", json={"name": "quitter", "description": "t", "contact": "q@t"})
    assert r.status_code == 201, r.get_json()
    me = r.get_json()
    seats = [{"kind": "external", "account": me["account_id"]}, {"kind": "bot", "bot": "random"}]
    r = api.post("/challenges", json={"seats": seats}, headers=bearer(me["token"]))
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["game_id"]
    r = api.post(f"/games/{gid}/seats/0/abort", headers=bearer(me["token"]))
    assert r.status_code == 201, r.get_json()
    text: str = api.get(f"/games/{gid}/log").get_data(as_text=True)
    *_, aborted, ended, _signature = (json.loads(line) for line in text.splitlines())
    assert (aborted["type"], ended["type"]) == ("GameAborted", "GameEnded")
    assert ended["payload"]["reason"] == "aborted" and ended["payload"]["winners"] == []
    return text


def by_score(ended: dict[str, Any]) -> list[int]:
    """The winners the scores alone give (what a signature must not state for a resignation)."""
    scores = ended["scores"]
    best = max((s["total"], s["tiebreak"]) for s in scores)
    return [s["seat"] for s in scores if (s["total"], s["tiebreak"]) == best]


def forgeries(text: str) -> dict[str, tuple[str, str]]:
    """label -> (the forged log, ``DUPLICATE`` or ``RESULT``) for a genuine log ``text`` of a
    game that ended (its last lines ``GameEnded`` and the signature), signed by ``SIGNER``."""
    lines = text.splitlines()
    ended, signature = lines[-2], lines[-1]
    assert '"type":"GameEnded"' in ended and signature.startswith('{"signature":{')

    def plant(i: int, at: str, member: str) -> str:
        assert at in lines[i], at
        out = list(lines)
        out[i] = lines[i].replace(at, at + member, 1)
        return "\n".join(out) + "\n"

    payload = json.loads(ended)["payload"]
    record = json.loads(signature)["signature"]
    lie = by_score(payload)
    assert lie != payload["winners"], "the premise: the scores alone name other winners"
    resigned = SIGNER.sign(
        record["game_id"],
        record["events"],
        record["chain_head"],
        record["over"],
        {"scores": payload["scores"], "winners": lie},
    )
    forged = {
        "a key twice in an envelope": plant(-2, "{", '"actor":"seat:1",'),
        "a key twice in a payload": plant(-2, '"payload":{', '"winners":[9],'),
        "a key twice deep in a payload": plant(-2, '"scores":[{', '"total":99,'),
        "a key twice in the signature": plant(-1, '{"signature":{', '"game_id":"another",'),
        "a key twice in the signed result": plant(-1, '"result":{', '"winners":[9],'),
        "the scores' winners signed": "\n".join(
            [*lines[:-1], canonical_json({"signature": resigned})]
        )
        + "\n",
    }
    assert forged.keys() == KINDS.keys()
    return {label: (text, KINDS[label]) for label, text in forged.items()}
