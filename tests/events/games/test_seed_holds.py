"""Seeds held back (``events.games.seeds``): a finished game of a duplicate set whose other games still
run shows no seed in its views, feed or export until the whole set has ended; then everything is
revealed and verifies. And the verifier checks what rules version 4 publishes: the game its
GameCreated names is the log's, and the revealed seed opens the commitment bound to it."""

from __future__ import annotations

import json
from typing import Any

import fakeredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import engine
from engine.phases.setup import RULES_VERSION
from events.envelope import Envelope, seal_batch
from events.games.seeds import WITHHELD
from events.games.service import GameService
from events.store import RedisStore
from events.verify.replay import verify_text
from events.verify.signing import Signer
from tests.events.games.test_games import play_out


def _set(games: GameService, ids: list[str], seed: str = "one-deal") -> None:
    games.holds.hold(ids)
    for gid in ids:
        games.create(2, seed=seed, game_id=gid)


def _lines(games: GameService, gid: str, viewer: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in games.export(gid, viewer)]


def test_a_finished_game_of_a_running_set_holds_its_seed_back(store: RedisStore) -> None:
    games = GameService(store)
    a, b = "set-a", "set-b"
    _set(games, [a, b])
    play_out(games, a)
    assert games.holds.running(a) == [b]
    for viewer in ("public", 0, 1):
        view = json.loads(games.view(a, viewer)[1])
        assert view["step"] == "over" and "seed" not in view and view[WITHHELD] == "duplicate-set"
        ended = games.feed(a, viewer)[-1]
        assert ended["type"] == "GameEnded" and "seed" not in ended["event"]
        lines = _lines(games, a, viewer)
        assert lines[0][WITHHELD]["game_id"] == a
        assert "one-deal" not in json.dumps(lines) and not any("hash" in x for x in lines)
        assert lines[-1]["event"][WITHHELD] == "duplicate-set"
    # the admin's full log is not held back
    assert games.feed(a, "server")[-1]["event"]["seed"] == "one-deal"
    assert json.loads(games.export(a, "server")[0])["payload"]["seed"] == "one-deal"
    assert not verify_text("\n".join(games.export(a, "public"))).ok

    play_out(games, b)
    assert games.holds.running(a) == []
    for gid in (a, b):
        view = json.loads(games.view(gid, "public")[1])
        assert view["seed"] == "one-deal" and WITHHELD not in view
        assert games.feed(gid, "public")[-1]["event"]["seed"] == "one-deal"
        verdict = verify_text("\n".join(games.export(gid, "public")))
        assert verdict.ok, verdict.reason
    assert games.holds.held.members(a) is None  # released
    assert games.holds.held.members(b) is None


def _games() -> GameService:
    return GameService(RedisStore(fakeredis.FakeRedis(server=fakeredis.FakeServer())))


def test_a_game_of_the_set_that_is_gone_runs_no_more() -> None:
    """Never created (a set cut short), deleted or expired: it cannot be harmed."""
    games = _games()
    games.holds.hold(["here", "never-created"])
    games.create(2, seed="s", game_id="here")
    play_out(games, "here")
    assert json.loads(games.view("here", "public")[1])["seed"] == "s"


def test_a_running_game_never_shows_its_seed_and_ordinary_games_reveal_at_their_end() -> None:
    games = _games()
    _set(games, ["x", "y"])
    assert "seed" not in json.loads(games.view("x", "public")[1])
    gid, _ = games.create(2, seed="plain")
    play_out(games, gid)
    assert json.loads(games.view(gid, "public")[1])["seed"] == "plain"
    assert json.loads(games.export(gid, "public")[0])["payload"]["seed"] == "plain"


def test_a_withheld_export_is_unverifiable_and_says_why() -> None:
    games = _games()
    _set(games, ["p", "q"])
    play_out(games, "p")
    verdict = verify_text("\n".join(games.export("p", "public"))).to_dict()
    assert verdict["verdict"] == "unverifiable" and "duplicate set" in verdict["reason"]


# --- the verifier and rules version 4 --------------------------------------------------------


def _finished_export(gid: str = "bound") -> list[Envelope]:
    games = _games()
    games.create(2, seed="verify-me", game_id=gid)
    play_out(games, gid)
    return [Envelope.from_dict(json.loads(x)) for x in games.export(gid, "server")]


def _reseal(envs: list[Envelope], game_id: str, created: dict[str, Any] | None = None) -> str:
    """The log sealed again (a consistent chain) under ``game_id``, its GameCreated replaced."""
    out: list[Envelope] = []
    batch: list[Envelope] = []
    for env in [*envs, None]:
        if batch and (env is None or env.command_id != batch[0].command_id):
            events = [e.event() for e in batch]
            if batch[0].seq == 1 and created is not None:
                events[0] = created
            out += seal_batch(
                events,
                game_id=game_id,
                expected_version=batch[0].seq - 1,
                prev_hash=out[-1].hash if out else batch[0].prev_hash,
                command_id=batch[0].command_id,
                actor=batch[0].actor,
                ts=batch[0].ts,
                visibility=engine.visibility,
            )
            batch = []
        if env is not None:
            batch.append(env)
    return "\n".join(e.to_json() for e in out)


def test_the_verifier_checks_the_game_the_commitment_binds() -> None:
    envs = _finished_export("bound")
    assert envs[0].payload["game"] == "bound"
    assert verify_text(_reseal(envs, "bound")).ok  # the resealing itself changes nothing
    verdict = verify_text(_reseal(envs, "elsewhere"))
    assert verdict.verdict == "inconsistent" and verdict.bad_seq == 1
    assert "names game 'bound'" in verdict.reason
    # a commitment the revealed seed does not give (a seed swapped after the start)
    created = envs[0].event()
    other = engine.create("other", 2, game="bound")[0]["seed_commitment"]
    forged = {**created, "seed_commitment": other}
    verdict = verify_text(_reseal(envs, "bound", forged))
    assert verdict.verdict == "inconsistent" and "seed_commitment" in verdict.reason
    assert "|| game)" in verdict.reason
    unnamed = {k: v for k, v in created.items() if k != "game"}
    verdict = verify_text(_reseal(envs, "bound", unnamed))
    assert verdict.verdict == "inconsistent" and "field game" in verdict.reason


def test_a_signed_export_of_the_current_rules_verifies_with_its_key() -> None:
    signer = Signer(Ed25519PrivateKey.generate(), "test")
    games = _games()
    gid, _ = games.create(2, seed="signed")
    play_out(games, gid)
    text = "\n".join(games.export(gid, "public", signer))
    verdict = verify_text(text, signer.public, require_signature=True)
    assert verdict.ok and verdict.authentic, verdict.reason
    assert verdict.summary["rules"] == RULES_VERSION
