"""Verifying a game from its exported log (``rfg replay`` and the API's replay verification).

Two log forms are accepted, one JSON object per line:
- the service's export: envelopes with ``seq``, ``hash``/``prev_hash``, ``command_id`` and the
  payload; each command's batch starts with a ``CommandSubmitted`` record;
- a bare engine event log (``rfg simulate --export``): event dicts with ``type`` and ``v``.

Checks, in order, stopping at the first bad event: contiguous sequence numbers and the hash chain
(envelopes); the game's creation is exactly what its revealed seed produces; each recorded command,
re-run against the state before it, produces the recorded events byte for byte (which re-derives
every chance outcome from the seed); in a bare log every chance outcome is checked while folding;
the final scores and winners are the ones the final state gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import engine
from engine.state import GameState

from .envelope import GENESIS_HASH, Envelope, canonical_json
from .errors import ChainBroken


@dataclass
class Verdict:
    ok: bool
    events: int = 0
    commands: int = 0
    mode: str = ""
    bad_seq: int | None = None
    reason: str = ""
    summary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "events": self.events, "commands": self.commands, "mode": self.mode,
            "first_bad_event": self.bad_seq, "reason": self.reason, "summary": self.summary,
        }  # fmt: skip


def parse_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {n} is not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise ValueError(f"line {n} is not a JSON object")
        out.append(obj)
    if not out:
        raise ValueError("the log is empty")
    return out


def verify_text(text: str) -> Verdict:
    try:
        rows = parse_lines(text)
    except ValueError as exc:
        return Verdict(False, reason=str(exc))
    return verify(rows)


def verify(rows: list[dict[str, Any]]) -> Verdict:
    if "hash" in rows[0] and "payload" in rows[0]:
        return _verify_envelopes(rows)
    if "type" in rows[0] and "v" in rows[0]:
        return _verify_events(rows)
    if "event" in rows[0] and "seq" in rows[0]:
        return Verdict(False, mode="redacted",
                       reason="this is a redacted viewer log of a live game; only the full log of a finished game can be verified")  # fmt: skip
    return Verdict(False, reason="line 1 is neither an event envelope nor an engine event")


def _summary(state: GameState) -> dict[str, Any]:
    return {
        "players": len(state.players), "rounds": state.round, "over": state.over,
        "end_reason": state.end_reason, "winners": state.winners,
        "scores": [s["total"] for s in state.scores], "state_hash": engine.state_hash(state),
    }  # fmt: skip


def _check_end(state: GameState, last: dict[str, Any], seq: int, v: Verdict) -> Verdict:
    if state.over:
        scores, winners = engine.final_scores(state)
        if canonical_json(scores) != canonical_json(last["scores"]) or winners != last["winners"]:
            return _bad(
                v,
                seq,
                "the recorded final scores or winners differ from the scores of the final state",
            )
    v.summary = _summary(state)
    v.ok = True
    return v


def _bad(v: Verdict, seq: int | None, reason: str) -> Verdict:
    v.ok = False
    v.bad_seq = seq
    v.reason = reason
    return v


def _verify_events(rows: list[dict[str, Any]]) -> Verdict:
    v = Verdict(False, mode="events")
    state: GameState | None = None
    for i, e in enumerate(rows, start=1):
        try:
            state = engine.evolve(state, e)
        except engine.EngineError as exc:
            return _bad(v, i, f"{type(exc).__name__}: {exc}")
        except (KeyError, ValueError, TypeError, IndexError) as exc:
            return _bad(
                v,
                i,
                f"event {i} ({e.get('type')}) does not fit the game: {type(exc).__name__}: {exc}",
            )
        v.events = i
    assert state is not None
    return _check_end(state, rows[-1], len(rows), v)


def _verify_envelopes(rows: list[dict[str, Any]]) -> Verdict:
    v = Verdict(False, mode="envelopes")
    try:
        envs = [Envelope.from_dict(r) for r in rows]
    except (ValueError, TypeError) as exc:
        return _bad(v, None, f"not an envelope log: {exc}")
    link = GENESIS_HASH
    for expected, env in enumerate(envs, start=1):
        if env.seq != expected:
            return _bad(v, env.seq, f"sequence number {env.seq} where {expected} was expected")
        if env.prev_hash != link:
            return _bad(v, env.seq, "prev_hash does not link to the previous event's hash")
        if env.compute_hash() != env.hash:
            return _bad(v, env.seq, "the hash does not match the event's content (altered event)")
        link = env.hash
    first = envs[0].event()
    if first["type"] != "GameCreated" or not {"seed", "players", "options"} <= set(first):
        return _bad(v, 1, "the log does not start with GameCreated carrying the revealed seed")
    # group into batches by command id, in order
    batches: list[list[Envelope]] = []
    for env in envs:
        if batches and batches[-1][0].command_id == env.command_id:
            batches[-1].append(env)
        else:
            batches.append([env])
    try:
        created = engine.create(
            first["seed"], first["players"], first["options"], first.get("table"),
            first.get("rules", 1),
        )
    except engine.EngineError as exc:
        return _bad(v, 1, f"GameCreated cannot be reproduced: {exc}")
    if not _same(created, batches[0]):
        seq = _first_diff(created, batches[0])
        return _bad(v, seq, "the game's setup is not what the revealed seed produces")
    state = engine.replay(created)
    v.events = len(batches[0])
    for batch in batches[1:]:
        rec = batch[0].event()
        if rec["type"] != "CommandSubmitted":
            return _bad(
                v,
                batch[0].seq,
                f"batch {batch[0].command_id!r} does not start with its command record",
            )
        engine.evolve(state, rec)
        try:
            produced = engine.play(state, rec["seat"], rec["command"])
        except engine.EngineError as exc:
            return _bad(v, batch[0].seq, f"the recorded command is refused by the rules: {exc}")
        if not _same(produced, batch[1:]):
            return _bad(v, _first_diff(produced, batch[1:]),
                        "re-running the recorded command gives a different event (altered outcome)")  # fmt: skip
        v.events += len(batch)
        v.commands += 1
    return _check_end(state, envs[-1].event(), envs[-1].seq, v)


def _same(events: list[dict[str, Any]], envs: list[Envelope]) -> bool:
    return len(events) == len(envs) and all(
        canonical_json(e) == canonical_json(env.event())
        for e, env in zip(events, envs, strict=True)
    )


def _first_diff(events: list[dict[str, Any]], envs: list[Envelope]) -> int | None:
    for e, env in zip(events, envs, strict=False):
        if canonical_json(e) != canonical_json(env.event()):
            return env.seq
    if len(envs) > len(events):
        return envs[len(events)].seq
    return envs[-1].seq + 1 if envs else None


__all__ = ["ChainBroken", "Verdict", "parse_lines", "verify", "verify_text"]
