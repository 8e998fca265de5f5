"""The signed result is the log's result, and a key given twice is a malformed log: the export's
signature states ``GameEnded``'s scores and winners (a resignation's winners are not the scores'),
and the verifier (``verify_stream``, what ``rfg replay`` and ``POST /replays/verify`` run) refuses
a log whose signed result differs from ``GameEnded`` and any line with a key twice in one object,
whether or not it is given the key."""

from __future__ import annotations

import json

import pytest

from events.verify.replay import parse_lines, verify_text
from tests.events.verify.forgeries import (
    DUPLICATE,
    KINDS,
    SIGNER,
    forgeries,
    new_app_client,
    resigned_log,
)


@pytest.fixture(scope="module")
def log() -> str:
    return resigned_log(new_app_client())


def test_the_signature_states_game_ended_s_scores_and_winners(log: str) -> None:
    *_, ended, signature = (json.loads(line) for line in log.splitlines())
    payload = ended["payload"]
    assert signature["signature"]["result"] == {
        "scores": payload["scores"],
        "winners": payload["winners"],
    }
    verdict = verify_text(log, SIGNER.public, require_signature=True)
    assert verdict.ok and verdict.authentic, verdict.to_dict()


@pytest.mark.parametrize("label", sorted(KINDS))
@pytest.mark.parametrize("keyed", [True, False], ids=["key", "no-key"])
def test_each_forgery_is_refused(log: str, label: str, keyed: bool) -> None:
    text, kind = forgeries(log)[label]
    verdict = verify_text(text, SIGNER.public if keyed else None)
    assert not verdict.ok, verdict.to_dict()
    if kind == DUPLICATE:
        assert verdict.verdict == "malformed" and "twice" in verdict.reason, verdict.to_dict()
    else:
        assert verdict.verdict == "not-authentic" and "GameEnded" in verdict.reason, (
            verdict.to_dict()
        )


@pytest.mark.parametrize(
    "line",
    [
        '{"a":1,"a":1}',
        '{"a":{"b":[{"c":1,"c":2}]}}',
        '{"k":1,"\\u006b":2}',  # the same key, one of them escaped
    ],
)
def test_a_key_twice_anywhere_in_a_line_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="twice"):
        parse_lines(line)


def test_the_same_key_in_different_objects_is_fine() -> None:
    assert parse_lines('{"a":{"a":1},"b":[{"a":2},{"a":3}]}') == [
        {"a": {"a": 1}, "b": [{"a": 2}, {"a": 3}]}
    ]
