"""Verifying a game from its exported log (``rfg replay`` and ``POST /replays/verify``).

Two log forms are accepted, one JSON object per line:

- the service's export: envelopes with ``seq``, ``hash``/``prev_hash``, ``command_id`` and the
  payload, each command's batch starting with its ``CommandSubmitted`` record, and a last line
  ``{"signature": {...}}`` (``events.verify.signing``);
- a bare engine log (``rfg simulate --export``): event dicts with ``type`` and ``v``, each
  command's events preceded by its ``CommandSubmitted`` record.

The log is read as a stream, one command's batch at a time, so memory stays within a small
multiple of one batch whatever the upload's size. The verdict answers three questions apart:

* **consistent**: every field has its type; sequence numbers are contiguous, the hash chain
  links, one game id, timestamps never go back (envelopes); the game's creation is exactly what
  its revealed seed produces; each recorded command, re-run against the state before it, is
  legal and produces the recorded events byte for byte (which re-derives every die roll and tile
  draw from the seed); the final scores and winners are the final state's;
* **complete**: nothing is missing: no gap in the sequence, no batch cut short, and the log runs
  to the end of the game (a log cut at a command boundary is still *incomplete*);
* **authentic**: the signature line names this log's game, length, chain head and result (the
  scores and winners of its ``GameEnded``), checked with or without a key, and was made by the
  key given (``rfg replay --key``; the API checks against its own key).

``verdict`` is ``ok``, or the first failure in the order ``malformed`` (not a log: not JSON
Lines, or a line with a key twice in one object),
``inconsistent``, ``incomplete``, ``not-authentic``, ``unverifiable`` (a bare log written before
logs recorded commands). ``first_bad_event`` is the 1-based number of the event that failed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import engine
from engine.canonical import canonical_json
from engine.rng import BOUND_SINCE_RULES
from engine.state import GameState
from events.envelope import GENESIS_HASH, Envelope, check_timestamp
from events.errors import ChainBroken
from events.verify.signing import check_signature, record_problem

CREATE_COMMAND_ID = "create"
#: the first line of a log whose seed is still held back (``events.games.seeds``): it cannot be
#: verified until every game of its duplicate set has ended
WITHHELD = "seed_withheld"
"""The command id of the batch that creates a game."""
MAX_LINE_BYTES = 1 << 20
"""The longest line a log may have (the longest event of a real game is a few KB)."""
MAX_BATCH_EVENTS = 2000
"""The most events one command may cause (a real command causes at most a few dozen)."""

_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
#: the commitment each rules version publishes (0: the form after the last listed version)
_COMMITMENT_FORMS = {
    1: "sha256(seed)",
    2: "sha256(seed)",
    3: 'sha256("rfg/commit" || 0x00 || seed)',
    0: 'sha256("rfg/commit" || 0x00 || seed || 0x00 || game)',
}
_SEAT_ACTOR_RE = re.compile(r"^seat:(\d+)$")
_ENVELOPE_TYPES: dict[str, type | tuple[type, ...]] = {
    "type": str,
    "schema_version": int,
    "game_id": str,
    "seq": int,
    "visibility": str,
    "command_id": str,
    "actor": str,
    "ts": str,
    "payload": dict,
    "prev_hash": str,
    "hash": str,
}
_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    str: "a string",
    dict: "an object",
    list: "a list",
    float: "a number",
    type(None): "null",
}


@dataclass
class Verdict:
    ok: bool
    events: int = 0
    commands: int = 0
    mode: str = ""
    bad_seq: int | None = None
    reason: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    verdict: str = ""
    consistent: bool = False
    complete: bool = False
    authentic: bool | None = None
    authenticity: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "verdict": self.verdict or ("ok" if self.ok else "malformed"),
            "consistent": self.consistent,
            "complete": self.complete,
            "authentic": self.authentic,
            "authenticity": self.authenticity,
            "events": self.events,
            "commands": self.commands,
            "mode": self.mode,
            "first_bad_event": self.bad_seq,
            "reason": self.reason,
            "summary": self.summary,
        }


class _Stop(Exception):
    """Ends verification with a verdict (``kind`` is the verdict's name)."""

    def __init__(self, kind: str, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.seq, self.reason = kind, seq, reason


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _want(value: Any, kind: type | tuple[type, ...], what: str, seq: int | None) -> None:
    """A strict type check: ``true`` is not an integer, ``"1"`` is not a number."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        ok = False
    else:
        ok = isinstance(value, kinds)
    if not ok:
        want = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise _Stop("inconsistent", seq, f"{what} must be {want}, not {_type_name(value)}")


# --- reading ------------------------------------------------------------------------------------


def _lines(source: str | bytes | Iterable[str | bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, line) for each non-blank line; a text is split, an iterable is streamed."""
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    if isinstance(source, bytes):
        source = [source]
    pending = b""
    n = 0
    for chunk in source:
        data = chunk.encode("utf-8", "surrogatepass") if isinstance(chunk, str) else chunk
        # an iterable may give whole lines (a file) or arbitrary pieces (a request stream)
        parts = (pending + data).split(b"\n")
        pending = parts.pop()
        if len(pending) > MAX_LINE_BYTES:
            raise _Stop(
                "malformed",
                None,
                f"line {n + len(parts) + 1} is longer than "
                f"{MAX_LINE_BYTES} bytes; a log has one event per line",
            )
        for line in parts:
            n += 1
            if len(line) > MAX_LINE_BYTES:
                raise _Stop(
                    "malformed",
                    None,
                    f"line {n} is longer than {MAX_LINE_BYTES} bytes; a log has one event per line",
                )
            if line.strip():
                yield n, line
    if pending.strip():
        yield n + 1, pending


class _KeyTwice(Exception):
    """An object of a line gives one key twice."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: the object, unless it gives a key twice."""
    obj = dict(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return obj


def _objects(source: str | bytes | Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in _lines(source):
        try:
            obj = orjson.loads(line)  # refuses nesting past 1024 levels, NaN and lone surrogates
        except orjson.JSONDecodeError as exc:
            raise _Stop(
                "malformed", None, f"line {n} is not JSON (UTF-8, one object per line): {exc}"
            ) from None
        if not isinstance(obj, dict):
            raise _Stop("malformed", None, f"line {n} is {_type_name(obj)}, not a JSON object")
        _check_keys_once(line, n)
        yield n, obj


def _check_keys_once(line: bytes, n: int) -> None:
    """A key given twice in one object is malformed (docs/log-format.md, section 2): parsers
    differ on which value they keep (orjson and ``JSON.parse`` the last, others the first), so such
    a line says one thing to one reader and another to the next. orjson keeps no trace of it; the
    standard library's parser hands every object's members to ``_once``."""
    try:
        json.loads(line, object_pairs_hook=_once)
    except _KeyTwice as exc:
        raise _Stop(
            "malformed",
            None,
            f"line {n} gives the key {exc.args[0]!r} twice in one object: readers of JSON differ "
            "on which value counts, so a log's lines never repeat a key",
        ) from None
    except RecursionError:  # nested deeper than the standard library follows (orjson: 1024)
        raise _Stop("malformed", None, f"line {n} is nested too deep") from None
    except ValueError as exc:  # what orjson took and the standard library does not
        raise _Stop("malformed", None, f"line {n} is not JSON: {exc}") from None


def parse_lines(text: str) -> list[dict[str, Any]]:
    """Every object of a JSON Lines text (for tests and tools; ``verify`` streams instead)."""
    try:
        out = [obj for _, obj in _objects(text)]
    except _Stop as stop:
        raise ValueError(stop.reason) from None
    if not out:
        raise ValueError("the log is empty")
    return out


# --- verifying ----------------------------------------------------------------------------------


def verify_text(
    text: str | bytes, key: Ed25519PublicKey | None = None, require_signature: bool = False
) -> Verdict:
    return verify_stream(text, key, require_signature)


def verify(rows: list[dict[str, Any]], key: Ed25519PublicKey | None = None) -> Verdict:
    """Verify a log given as parsed rows."""
    return verify_stream((orjson.dumps(r) + b"\n" for r in rows), key)


def verify_stream(
    source: str | bytes | Iterable[str | bytes],
    key: Ed25519PublicKey | None = None,
    require_signature: bool = False,
) -> Verdict:
    """Verify a log read line by line. ``key``: check the signature against it;
    ``require_signature``: an envelope log without a signature is not authentic (the API's
    verifier, whose exports are always signed)."""
    check = _Check(key, require_signature)
    try:
        check.run(_objects(source))
    except _Stop as stop:
        return check.verdict(stop)
    return check.verdict(None)


class _Check:
    """The verification of one log, fed one object at a time."""

    def __init__(self, key: Ed25519PublicKey | None, require_signature: bool) -> None:
        self.key = key
        self.require_signature = require_signature
        self.v = Verdict(False)
        self.state: GameState | None = None
        self.signature: Any = None
        self.last_seq = 0
        self.link = GENESIS_HASH
        self.game_id: str | None = None
        self.ts = ""
        self.seen_commands: set[str] = set()
        self.batch_actor = ""
        self.read_all = False
        self.final: dict[str, Any] | None = None

    # the stream -------------------------------------------------------------------------------
    def run(self, objects: Iterator[tuple[int, dict[str, Any]]]) -> None:
        batch: list[dict[str, Any]] = []
        batch_id: str | None = None
        first_seq = 1
        for line_no, obj in objects:
            if self.signature is not None:
                raise _Stop(
                    "inconsistent",
                    None,
                    f"line {line_no} follows the signature line, which must be the last",
                )
            if set(obj) == {"signature"}:
                self.signature = obj["signature"]
                continue
            if not self.v.mode:
                self.v.mode = self._mode(obj)
            event, cid, actor = self._read(obj)
            seq = self.last_seq
            starts = (
                (cid != batch_id)
                if self.v.mode == "envelopes"
                else (event["type"] == "CommandSubmitted" or not batch)
            )
            if starts and batch:
                self._batch(batch, first_seq, batch_id, last=False)
                batch = []
            if starts:
                batch_id, first_seq, self.batch_actor = cid, seq, actor
                if cid in self.seen_commands and self.v.mode == "envelopes":
                    raise _Stop(
                        "inconsistent",
                        seq,
                        f"command id {cid!r} has a second batch (batches swapped or repeated)",
                    )
                self.seen_commands.add(cid or "")
            elif actor != self.batch_actor:
                raise _Stop(
                    "inconsistent",
                    seq,
                    f"actor {actor!r} inside a batch of actor {self.batch_actor!r}",
                )
            batch.append(event)
            if len(batch) > MAX_BATCH_EVENTS:
                raise _Stop(
                    "inconsistent", seq, f"a command batch longer than {MAX_BATCH_EVENTS} events"
                )
        if not batch:
            raise _Stop(
                "malformed",
                None,
                "the log is empty"
                if self.signature is None
                else "the log has a signature but no events",
            )
        self.read_all = True
        self._batch(batch, first_seq, batch_id, last=True)
        self._end(batch[-1])

    def _mode(self, obj: dict[str, Any]) -> str:
        if "hash" in obj and "payload" in obj:
            return "envelopes"
        if "type" in obj and "v" in obj:
            return "events"
        if "event" in obj and "seq" in obj:
            raise _Stop(
                "malformed",
                None,
                "this is a redacted viewer log of a live game; only the "
                "full log of a finished game can be verified",
            )
        if WITHHELD in obj:
            raise _Stop(
                "unverifiable",
                None,
                "this export was made while the game's duplicate set was still running, so its "
                "seed and full log were withheld; export it again once every game of the set "
                "has ended",
            )
        raise _Stop("malformed", None, "line 1 is neither an event envelope nor an engine event")

    def _read(self, obj: dict[str, Any]) -> tuple[dict[str, Any], str | None, str]:
        """Check one line's form (and, for envelopes, the chain); return its engine event."""
        expected = self.last_seq + 1
        if self.v.mode == "events":
            if "hash" in obj:
                raise _Stop("inconsistent", expected, "an envelope inside a bare event log")
            _want(obj.get("type"), str, "field type", expected)
            _want(obj.get("v"), int, "field v", expected)
            self.last_seq = expected
            return obj, None, ""
        env = _envelope(obj, expected)
        self._check_chain(env)
        self._check_game_and_time(env)
        try:
            engine_event = env.event()
        except TypeError as exc:
            raise _Stop("inconsistent", env.seq, f"the payload cannot be an event: {exc}") from None
        self.ts = env.ts
        self.link = env.hash
        self.last_seq = env.seq
        return engine_event, env.command_id, env.actor

    def _check_chain(self, env: Envelope) -> None:
        """Each envelope links to the previous one's hash, and its own hash covers its content."""
        if not _HASH_RE.match(env.hash) or not _HASH_RE.match(env.prev_hash):
            raise _Stop(
                "inconsistent", env.seq, "hash and prev_hash must be 64 lowercase hex digits"
            )
        if env.prev_hash != self.link:
            raise _Stop(
                "inconsistent", env.seq, "prev_hash does not link to the previous event's hash"
            )
        if env.compute_hash() != env.hash:
            raise _Stop(
                "inconsistent",
                env.seq,
                "the hash does not match the event's content (altered event)",
            )

    def _check_game_and_time(self, env: Envelope) -> None:
        """One game id throughout; valid timestamps that never go back."""
        if self.game_id is None:
            self.game_id = env.game_id
        elif env.game_id != self.game_id:
            raise _Stop(
                "inconsistent",
                env.seq,
                f"game id {env.game_id!r} in a log of game {self.game_id!r}",
            )
        try:
            check_timestamp(env.ts)
        except ValueError as exc:
            raise _Stop("inconsistent", env.seq, str(exc)) from None
        if self.ts and datetime.fromisoformat(env.ts) < datetime.fromisoformat(self.ts):
            raise _Stop(
                "inconsistent",
                env.seq,
                f"timestamp {env.ts} is earlier than the previous "
                f"event's {self.ts} (events reordered or retimed)",
            )

    # batches ----------------------------------------------------------------------------------
    def _batch(self, batch: list[dict[str, Any]], first: int, cid: str | None, last: bool) -> None:
        if self.state is None:
            self._creation(batch, first, cid, last)
        else:
            self._command(batch, first, cid, last)
        self.v.events = first + len(batch) - 1

    def _creation(
        self, batch: list[dict[str, Any]], first: int, cid: str | None, last: bool
    ) -> None:
        head = batch[0]
        if head["type"] != "GameCreated" or not {"seed", "players", "options"} <= set(head):
            raise _Stop(
                "inconsistent",
                1,
                "the log does not start with GameCreated carrying the revealed seed",
            )
        if self.v.mode == "envelopes" and (
            cid != CREATE_COMMAND_ID or self.batch_actor != "system"
        ):
            raise _Stop(
                "inconsistent",
                1,
                f"the creation batch has command id {cid!r}, not "
                f"{CREATE_COMMAND_ID!r}, or actor {self.batch_actor!r}, not 'system'",
            )
        _want(head["seed"], str, "GameCreated: field seed", 1)
        _want(head["players"], int, "GameCreated: field players", 1)
        _want(head["options"], dict, "GameCreated: field options", 1)
        _want(head.get("table") or {}, dict, "GameCreated: field table", 1)
        _want(head.get("rules", 1), int, "GameCreated: field rules", 1)
        game = self._game_named(head)
        if head["options"].get("ambition"):
            # an Ambition game replays only with the component file it was played with: say so
            # (naming the file and its digest) rather than that the setup differs
            try:
                engine.evolve(None, head)
            except engine.EngineError as exc:
                raise _Stop("inconsistent", 1, str(exc)) from None
        try:
            created = engine.create(
                head["seed"],
                head["players"],
                head["options"],
                head.get("table"),
                head.get("rules", 1),
                game,
            )
        except engine.EngineError as exc:
            raise _Stop("inconsistent", 1, f"GameCreated cannot be reproduced: {exc}") from None
        if self.v.mode == "events" and len(batch) > len(created) and last:
            raise _Stop(
                "unverifiable",
                None,
                "this bare log records no commands (it was written "
                "before logs recorded them), so its moves cannot be re-run; export it "
                "again with `rfg simulate --export`",
            )
        commit = "seed_commitment" if "seed_commitment" in created[0] else "seed_sha256"
        if head.get(commit) != created[0][commit]:
            raise _Stop(
                "inconsistent",
                1,
                f"GameCreated: the revealed seed does not give the published {commit} "
                f"({_COMMITMENT_FORMS.get(head.get('rules', 1), _COMMITMENT_FORMS[0])})",
            )
        self._compare(
            created, batch, first, last, "the game's setup is not what the revealed seed produces"
        )
        self.state = engine.replay(created)

    def _game_named(self, head: dict[str, Any]) -> str | None:
        """The game a GameCreated of rules version 4 or later names: a string, and in a service
        export the envelopes' game id (the commitment binds it). None before version 4."""
        if head.get("rules", 1) < BOUND_SINCE_RULES:
            return None
        _want(head.get("game"), str, "GameCreated: field game", 1)
        game: str = head["game"]
        if self.v.mode == "envelopes" and game != self.game_id:
            raise _Stop(
                "inconsistent",
                1,
                f"GameCreated names game {game!r} but the log is of game {self.game_id!r} "
                "(the seed's commitment binds the game id)",
            )
        return game

    def _command(
        self, batch: list[dict[str, Any]], first: int, cid: str | None, last: bool
    ) -> None:
        state = self.state
        assert state is not None
        rec = batch[0]
        if rec["type"] != "CommandSubmitted":
            raise _Stop(
                "inconsistent",
                first,
                f"the batch at event {first} does not start with "
                "its command record (CommandSubmitted)",
            )
        if state.over:
            raise _Stop("inconsistent", first, "a command after the end of the game")
        _want(rec.get("seat"), int, "CommandSubmitted field seat", first)
        _want(rec.get("command"), dict, "CommandSubmitted field command", first)
        seat = rec["seat"]
        if not 0 <= seat < len(state.players):
            raise _Stop("inconsistent", first, f"seat {seat} in a {len(state.players)}-player game")
        if self.v.mode == "envelopes":
            self._check_actor(first, seat, rec["command"].get("kind"))
        try:
            engine.evolve(state, rec)
            produced = [rec, *engine.play(state, seat, rec["command"])]
        except engine.EngineError as exc:
            raise _Stop(
                "inconsistent",
                first,
                f"the recorded command of seat {seat} is refused by the rules: {exc}",
            ) from None
        except (KeyError, ValueError, TypeError, IndexError, AttributeError) as exc:
            raise _Stop(
                "inconsistent",
                first,
                f"the recorded command of seat {seat} cannot be "
                f"applied: {type(exc).__name__}: {exc}",
            ) from None
        self._compare(
            produced,
            batch,
            first,
            last,
            "re-running the recorded command gives a "
            "different event (altered, illegal or reordered outcome)",
        )
        self.v.commands += 1

    def _check_actor(self, first: int, seat: int, kind: Any = None) -> None:
        actor = self.batch_actor
        if actor == "admin" and kind == "abandon":  # the operator ends a game left alone
            return
        m = _SEAT_ACTOR_RE.match(actor)
        if m and int(m.group(1)) != seat:
            raise _Stop(
                "inconsistent", first, f"actor {actor!r} submitted a command of seat {seat}"
            )
        if not m and not (actor.startswith("bot:") or actor == "timeout"):
            raise _Stop(
                "inconsistent", first, f"actor {actor!r} is not a seat, a bot or the timeout policy"
            )

    def _compare(
        self,
        produced: list[dict[str, Any]],
        batch: list[dict[str, Any]],
        first: int,
        last: bool,
        reason: str,
    ) -> None:
        mine = [canonical_json(e) for e in produced]
        theirs = [canonical_json(e) for e in batch]
        if mine == theirs:
            return
        n = len(theirs)
        if last and n < len(mine) and mine[:n] == theirs:
            raise _Stop(
                "incomplete",
                first + n,
                f"the log ends inside the batch that starts at "
                f"event {first}: {n} of its {len(mine)} events are there",
            )
        k = next(
            (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
            min(len(mine), n),
        )
        if n == len(mine) - 1 and theirs == mine[:k] + mine[k + 1 :]:
            raise _Stop(
                "incomplete",
                first + k,
                f"event {first + k} is missing (the batch that "
                f"starts at event {first} has {n} of its {len(mine)} events)",
            )
        raise _Stop("inconsistent", first + k, reason)

    # the end ----------------------------------------------------------------------------------
    def _end(self, last: dict[str, Any]) -> None:
        """The log's last event ``last`` ends the game: it is GameEnded, which the re-run
        produced byte for byte, and its scores and winners are what a signature must state."""
        state = self.state
        assert state is not None
        if not state.over:
            raise _Stop(
                "incomplete",
                self.last_seq + 1,
                f"the log ends after event "
                f"{self.last_seq}, at a command boundary, but the game is not over "
                f"(round {state.round}, step {state.step})",
            )
        self.v.summary = _summary(state)
        self.final = signed_result(last)

    def verdict(self, stop: _Stop | None) -> Verdict:
        v = self.v
        if stop is not None:
            v.verdict, v.bad_seq, v.reason = stop.kind, stop.seq, stop.reason
            v.consistent = stop.kind in ("incomplete",)
            v.complete = False
            if stop.kind == "malformed":
                v.events = 0
        else:
            v.consistent = v.complete = True
            v.verdict = "ok"
        self._authenticity()
        if v.verdict == "ok" and v.authentic is False:
            v.verdict = "not-authentic"
            v.reason = v.authenticity
        v.ok = v.verdict == "ok"
        return v

    def _authenticity(self) -> None:
        v = self.v
        if not self.read_all:
            v.authentic = None
            v.authenticity = "not checked: the log failed before its end"
        elif self.signature is None:
            if v.mode == "events":
                v.authentic = None
                v.authenticity = "not checked: a bare engine log is never signed"
            elif self.key is not None or self.require_signature:
                v.authentic = False
                v.authenticity = (
                    "the log carries no signature (an export of the server ends "
                    "with one), so nothing shows that the server wrote it"
                )
            else:
                v.authentic = None
                v.authenticity = (
                    "not checked: give the server's public key (rfg replay --key; GET /signing-key)"
                )
        else:
            # what the signature line states must be this log, whoever's key made it
            why = record_problem(self.signature) or self._signed_claims()
            if why is None and self.key is not None:
                why = check_signature(self.signature, self.key)
            if why is not None:
                v.authentic, v.authenticity = False, why
            elif self.key is None:
                v.authentic = None
                v.authenticity = (
                    "not checked: the log is signed and its signature line names this very log; "
                    "give the server's public key (rfg replay --key; GET /signing-key) to check "
                    "that the server made it"
                )
            else:
                v.authentic = True
                v.authenticity = "signed by the key given, and the signature names this very log"

    def _signed_claims(self) -> str | None:
        """What the signature states must be this log: game, length, chain head, over, and the
        result, which is GameEnded's scores and winners (docs/log-format.md, section 5)."""
        s = self.signature
        if s["game_id"] != self.game_id:
            return f"the signature is for game {s['game_id']!r}, not {self.game_id!r}"
        if s["events"] != self.last_seq or s["chain_head"] != self.link:
            return (
                f"the signature covers {s['events']} events ending in hash "
                f"{str(s['chain_head'])[:12]}..., not this log's {self.last_seq} ending in "
                f"{self.link[:12]}... (events added, removed, reordered or altered)"
            )
        over = bool(self.state is not None and self.state.over)
        if s["over"] is not over:
            return f"the signature says over={s['over']}, the log says over={over}"
        if canonical_json(s["result"]) != canonical_json(self.final):
            return (
                "the signed result is not the scores and winners of the log's GameEnded "
                "(a signature states the log's own result)"
            )
        return None


def _summary(state: GameState) -> dict[str, Any]:
    return {
        "players": len(state.players),
        "rounds": state.round,
        "over": state.over,
        "end_reason": state.end_reason,
        "winners": state.winners,
        "scores": [s["total"] for s in state.scores],
        "state_hash": engine.state_hash(state),
        "rules": state.rules,
    }


def signed_result(ended: Mapping[str, Any]) -> dict[str, Any]:
    """The ``result`` the signature of a finished game's log states: the scores and winners of
    its ``GameEnded`` (``ended``: the event or its envelope's payload), however the game ended
    (the winners of a resignation or an abandonment are not the scores' best)."""
    return {"scores": ended["scores"], "winners": ended["winners"]}


__all__ = [
    "ChainBroken",
    "Verdict",
    "parse_lines",
    "signed_result",
    "verify",
    "verify_stream",
    "verify_text",
]


def _envelope(obj: dict[str, Any], expected: int) -> Envelope:
    """An envelope of the right fields and types, with the sequence number ``expected``."""
    missing = [f for f in _ENVELOPE_TYPES if f not in obj]
    extra = [k for k in obj if k not in _ENVELOPE_TYPES]
    if missing or extra:
        raise _Stop(
            "inconsistent",
            expected,
            f"an envelope with missing fields {missing} / unknown fields {extra}",
        )
    for name, kind in _ENVELOPE_TYPES.items():
        _want(obj[name], kind, f"field {name}", expected)
    env = Envelope.from_dict(obj)
    if env.seq > expected:
        missing_to = env.seq - 1
        gap = f"{expected}" if missing_to == expected else f"{expected} to {missing_to}"
        raise _Stop(
            "incomplete",
            expected,
            f"event {gap} is missing (event {expected - 1} is followed by event {env.seq})",
        )
    if env.seq < expected:
        raise _Stop(
            "inconsistent",
            env.seq,
            f"sequence number {env.seq} where {expected} was "
            "expected (events repeated or out of order)",
        )
    return env
