"""Bots played by the workers keep their secret choices: an attacker who knows how the bots draw
their randomness, reads everything public before the game ends (the game id, each command's id in
the feed, the public view) and is even handed each bot's own decision with its dice, predicts the
bots' secret phase selections no better than a guess.

The control: the derivation the workers used before (``Rng.from_seed(game_id/command_id)``, all
public) would let the same attacker reproduce every choice."""

from __future__ import annotations

import math
from typing import Any

import engine
from engine.rng import Rng
from tests.security.attacker import strings
from tests.workers.conftest import burst
from workers import Runtime
from workers.policy import bot_command

RANDOM4 = {"seats": [{"kind": "bot", "bot": "random"}] * 4}


def _selection(command: dict[str, Any]) -> Any:
    return command.get("select", {}).get("phase")


def test_bots_secret_selections_are_not_predictable_from_public_data(fake_rt: Runtime) -> None:
    trials = 0
    hits: dict[str, int] = {"old": 0, "guess": 0}
    for g in range(3):
        gid, _ = fake_rt.games.create(4, table=RANDOM4)
        view = engine.observe(fake_rt.games.load(gid)[0], "public")
        # the secrets an attacker would try: the game id and the published commitment
        candidates = {"game id": gid, "commitment": view["seed_commitment"]}
        assert set(candidates.values()) <= set(strings([view, gid]))
        burst(fake_rt)
        envs = fake_rt.store.read(gid)
        assert envs[-1].type == "GameEnded"
        state = None
        for env in envs:
            event = env.event()
            if env.type == "CommandSubmitted" and event["command"]["kind"] == "assign":
                seat, cid = event["seat"], env.command_id  # the command id is in the public feed
                assert state is not None

                def predict(rng: Rng, seat: int = seat, state: Any = state) -> Any:
                    # the attacker is handed the bot's own decision (its dice): only randomness is tested
                    return _selection(bot_command(state, seat, "random", rng))

                actual = _selection(event["command"])
                trials += 1
                hits["old"] += predict(Rng.from_seed(f"{gid}/{cid}")) == actual
                for name, secret in candidates.items():  # today's derivation, keyed by a guess
                    hits[name] = hits.get(name, 0) + (predict(Rng.for_bot(secret, cid)) == actual)
                hits["guess"] += predict(Rng.for_bot(f"attacker-{g}", cid)) == actual
            state = engine.evolve(state, event)
    assert trials >= 200
    p = hits["guess"] / trials  # the bot's baseline: what a guess with the same policy achieves
    bound = 4 * math.sqrt(2 * trials * max(p, 0.05) * (1 - p))
    for strategy in ("old", "game id", "commitment"):
        assert hits[strategy] <= hits["guess"] + bound, (strategy, hits, trials)
