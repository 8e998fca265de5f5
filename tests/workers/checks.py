"""Checks on a finished game's log, shared by the worker tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine import evolve
from events.games.service import GameService
from events.games.time_control import Clocks, batch_seat, batches
from events.verify.replay import verify_text


@dataclass
class Command:
    seat: int
    actor: str
    command_id: str
    decision_id: int  # the version at which the seat's decision became pending


def check_finished_game(games: GameService, game_id: str) -> tuple[dict[str, Any], list[Command]]:
    """Assert the game is over, its log verifies (hash chain, every command re-run gives the
    recorded events, seed), every automated command played the decision that was pending for
    its seat under that decision's id, no decision was played twice, and the stored views
    equal views rebuilt from the stream. Returns the summary view and the commands."""
    verdict = verify_text("\n".join(games.export(game_id, "server")))
    assert verdict.ok, verdict.reason
    envs = games.store.read(game_id)
    assert [e.seq for e in envs] == list(range(1, len(envs) + 1))
    commands: list[Command] = []
    played: set[tuple[int, int]] = set()
    state = None
    clocks: Clocks | None = None
    for batch in batches(envs):
        seat = batch_seat(batch)
        if seat is not None:
            assert clocks is not None
            decision = clocks.seats[seat].decision_id
            assert decision is not None, f"seat {seat} acted at {batch[0].seq} without a decision"
            assert (seat, decision) not in played, f"decision {seat}@{decision} played twice"
            played.add((seat, decision))
            actor, cid = batch[0].actor, batch[0].command_id
            if actor.startswith("bot:"):
                assert cid == f"bot:{seat}:{decision}", (cid, seat, decision)
            elif actor == "timeout":
                assert cid == f"timeout:{seat}:{decision}", (cid, seat, decision)
            commands.append(Command(seat, actor, cid, decision))
        for env in batch:
            state = evolve(state, env.event())
        assert state is not None
        if clocks is None:
            clocks = Clocks.for_table(state.table, len(state.players))
        clocks.apply(
            state, version=batch[-1].seq, ts=batch[-1].ts, actor=batch[-1].actor, seat=seat
        )
    assert state is not None and state.over, "the game did not finish"
    rebuilt = games.rebuild_views(game_id)
    for name, text in rebuilt.items():
        assert games.store.get_view(game_id, name) == (len(envs), text), (
            f"stored view {name} differs from its rebuild"
        )
    summary: dict[str, Any] = json.loads(rebuilt["summary"])
    assert summary["status"] == "finished"
    return summary, commands
