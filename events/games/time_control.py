"""Time control: the table's clock rules and each seat's decision clock, folded from the log.

A game's table (``GameState.table``, recorded in ``GameCreated``) may carry::

    "time_control": {"per_decision": 30, "bank": 300, "increment": 5, "bank_max": 600},
    "timeout_policy": "heuristic",      # or "ismcts", "minimal"
    "abandon_after": 3,                 # timeouts in a row before a seat is away; 0 = never
    "hand_over": false,                 # true: after them the seat is abandoned to a bot for good
    "bot_pace_seconds": 1.5,            # the least time between two bot decisions; 0 = at once
    "challenge": "3f9a0c1d2e4b5a69",    # the challenge the game was made from (its seats may
                                        # abort it until round 1 ends: engine.leaving)

All times are seconds (numbers; stored as whole milliseconds). A seat's current decision starts
at the timestamp of the envelope batch that made it pending; its deadline is

    deadline = started + per_decision + bank_left

``per_decision`` is free time per decision (a "delay": it never eats the bank); ``bank`` is the
seat's reserve (a chess clock; 0 when only ``increment`` is given), topped up by ``increment``
after every decision and then capped at ``bank_max`` (a starting bank above the cap is kept until
the first decision). With only ``per_decision`` each decision has a fixed allowance (BGA "per move");
with only ``bank``/``increment`` it is a Fischer clock (Lichess).

Everything here is a pure fold over stored data (the table, envelope timestamps and actors, and
the engine's ``pending``), so projections that show deadlines rebuild byte-identically.

Decision identity: a seat's decision is named by ``decision_id``, the stream version at which
it became pending; it restarts when the seat was not pending before, when the seat itself just
acted (a multi-step decision), or when the kind of decision changed. Workers use it in their
deterministic command ids (``bot:<seat>:<decision_id>``) so one decision is played once.

Bot pace: with ``bot_pace_seconds`` > 0 the built-in bots (bot seats, away and abandoned seats) play one
decision at a time, each no earlier than the pace after the last bot decision (or the game's
creation), so a person can follow an all-bot game live. ``Clocks.bot_due`` says when the next one
may be played; the workers schedule it then (``workers.dispatch``). People are never paced.

Timeouts, away and abandonment: a command whose envelopes carry the actor ``"timeout"`` counts
as a timeout of its seat (its decision is played by the table's ``timeout_policy``); a command
by the seat's own player (any actor but the timeout and the built-in bots) resets the count.
After ``abandon_after`` timeouts in a row the seat is **away**: a built-in bot plays each of its
decisions at once, until its player comes back (``POST /games/<id>/seats/<n>/back``: the engine's
command ``back``, which changes nothing in the game; any command of the seat's own player ends
the absence). A table created with ``hand_over: true`` instead hands the seat to the bot for
good: it is **abandoned** for the rest of the game. Every decision the timeout policy or a bot
makes for a person's seat (human or external) is counted (``bot_decisions``): the result and the
replay say which decisions were not the player's. All of it is derived from the log (actors and
table), not stored separately, so a replay shows it at every step.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import engine
from engine.state import GameState
from events.envelope import Envelope, iso_utc

TIMEOUT_ACTOR = "timeout"
#: the actor of a built-in bot's command starts so (``bot:<name>``; ``workers.dispatch``)
BOT_ACTOR_PREFIX = "bot:"
#: what plays a timed-out decision: a built-in bot (the workers play a timeout like a bot seat's
#: turn, within the same job budget; ismcts searches about 0.2 s a decision, 0.4 s at worst) or
#: ``minimal``, the do-the-least legal default (``workers.policy.minimal_command``)
TIMEOUT_POLICIES = ("heuristic", "ismcts", "minimal")
DEFAULT_TIMEOUT_POLICY = "heuristic"
DEFAULT_ABANDON_AFTER = 3
SEAT_KINDS = ("human", "bot", "external")
_TC_KEYS = ("per_decision", "bank", "increment", "bank_max")
_MAX_SECONDS = 30 * 24 * 3600
#: a challenge id (``service.challenges``): what ``table.challenge`` holds
_CHALLENGE_ID = re.compile(r"[0-9a-f]{16}")
#: the most a table may pace its bots (seconds between two bot decisions)
MAX_BOT_PACE = 5


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Clock rules of a table, in milliseconds. ``bank_ms`` None: no bank (per-decision only)."""

    per_decision_ms: int = 0
    bank_ms: int | None = None
    increment_ms: int = 0
    bank_max_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """As the table gives it (seconds), for views."""
        out: dict[str, Any] = {"per_decision": self.per_decision_ms / 1000}
        if self.bank_ms is not None:
            out["bank"] = self.bank_ms / 1000
            out["increment"] = self.increment_ms / 1000
            if self.bank_max_ms is not None:
                out["bank_max"] = self.bank_max_ms / 1000
        return out


def _seconds(raw: Mapping[str, Any], key: str) -> int | None:
    if key not in raw or raw[key] is None:
        return None
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"time_control.{key} must be a number of seconds, not {value!r}")
    if not 0 <= value <= _MAX_SECONDS:
        raise ValueError(f"time_control.{key} must be between 0 and {_MAX_SECONDS} seconds")
    return max(1, round(value * 1000)) if value > 0 else 0  # any positive time is at least 1 ms


def parse_time_control(raw: Any) -> TimeControl | None:
    """The ``TimeControl`` of a table's ``time_control`` (None or ``{}``: no time control).

    Raises ``ValueError`` with a message a person can act on.
    """
    if raw is None or raw == {}:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError('time_control must be an object such as {"per_decision": 60}')
    unknown = sorted(set(raw) - set(_TC_KEYS))
    if unknown:
        raise ValueError(f"time_control has unknown key(s) {unknown}; known: {list(_TC_KEYS)}")
    per = _seconds(raw, "per_decision") or 0
    bank = _seconds(raw, "bank")
    inc = _seconds(raw, "increment") or 0
    cap = _seconds(raw, "bank_max")
    if bank is None and (inc or cap is not None):
        bank = 0  # an increment without a bank: the bank starts empty and grows
    if per == 0 and not bank and not inc:
        raise ValueError(
            "time_control gives no time: set per_decision > 0, or a bank and/or increment > 0"
        )
    return TimeControl(per, bank, inc, cap)


def bot_pace_ms(table: Mapping[str, Any]) -> int:
    """The table's least time between two bot decisions, in milliseconds (0: not paced).
    Raises ``ValueError`` with a message a person can act on."""
    value = table.get("bot_pace_seconds", 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"bot_pace_seconds must be a number of seconds, not {value!r}")
    if not 0 <= value <= MAX_BOT_PACE:
        raise ValueError(f"bot_pace_seconds must be between 0 and {MAX_BOT_PACE} seconds")
    return round(value * 1000)


def seat_kinds(table: Mapping[str, Any], players: int) -> list[str]:
    """The kind of each seat (``human`` when the table does not say)."""
    seats = table.get("seats") or []
    return [
        str(seats[i].get("kind", "human"))
        if i < len(seats) and isinstance(seats[i], Mapping)
        else "human"
        for i in range(players)
    ]


def timeout_policy(table: Mapping[str, Any]) -> str:
    return str(table.get("timeout_policy") or DEFAULT_TIMEOUT_POLICY)


def hands_over(table: Mapping[str, Any]) -> bool:
    """Whether the table hands a seat that timed out ``abandon_after`` times in a row to a bot
    for good (else the seat is away until its player comes back)."""
    return table.get("hand_over") is True


def abandon_after(table: Mapping[str, Any]) -> int:
    value = table.get("abandon_after", DEFAULT_ABANDON_AFTER)
    return DEFAULT_ABANDON_AFTER if value is None else int(value)


def validate_table(table: Mapping[str, Any] | None, players: int) -> None:
    """Check the clock-related parts of a table; raise ``ValueError`` if they are wrong.

    Bot names are not checked here (``events`` does not know the bots); the API and the workers
    check them against ``bots``.
    """
    if table is None:
        return
    if not isinstance(table, Mapping):
        raise ValueError("the table must be an object")
    seats = table.get("seats")
    if seats is not None:
        if not isinstance(seats, list) or len(seats) != players:
            raise ValueError(f"table.seats must list exactly {players} seats")
        for i, s in enumerate(seats):
            if not isinstance(s, Mapping) or s.get("kind", "human") not in SEAT_KINDS:
                raise ValueError(f"table.seats[{i}].kind must be one of {list(SEAT_KINDS)}")
            if s.get("kind") == "bot" and not isinstance(s.get("bot"), str):
                raise ValueError(f"table.seats[{i}] is a bot seat and must name its bot")
    parse_time_control(table.get("time_control"))
    bot_pace_ms(table)
    policy = table.get("timeout_policy")
    if policy is not None and policy not in TIMEOUT_POLICIES:
        raise ValueError(f"table.timeout_policy must be one of {list(TIMEOUT_POLICIES)}")
    bot = table.get("abandoned_bot")
    if bot is not None and not isinstance(bot, str):
        raise ValueError("table.abandoned_bot must name a bot")
    k = table.get("abandon_after")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
        raise ValueError("table.abandon_after must be a whole number >= 0 (0: never abandon)")
    if table.get("hand_over") not in (None, True, False):
        raise ValueError(
            "table.hand_over must be true (a bot takes a timed-out seat for good) or false "
            "(the seat is away until its player comes back)"
        )
    challenge = table.get("challenge")
    if challenge is not None and not (
        isinstance(challenge, str) and _CHALLENGE_ID.fullmatch(challenge)
    ):
        raise ValueError("table.challenge must be a challenge id (16 hex digits)")


def from_challenge(table: Mapping[str, Any]) -> str | None:
    """The challenge a game was made from (its table records it), else None: only such a game
    may be aborted (``engine.leaving``)."""
    challenge = table.get("challenge")
    return challenge if isinstance(challenge, str) else None


def parse_ts(ts: str) -> datetime:
    return datetime.fromisoformat(ts)


def _ms_between(start: str, end: str) -> int:
    return (parse_ts(end) - parse_ts(start)) // timedelta(milliseconds=1)


@dataclass(slots=True)
class SeatClock:
    """One seat's clock. ``decision_id`` names its current decision and ``since`` is when it
    became pending (None: it owes none)."""

    seat: int
    timed: bool
    kind: str | None = None
    since: str | None = None
    decision_id: int | None = None
    bank_ms: int | None = None
    timeouts: int = 0
    timeouts_total: int = 0
    abandoned: bool = False
    abandoned_at: int | None = None
    #: a person's seat (human or external), whose decisions a bot may make for it
    person: bool = True
    #: away: a bot plays the seat until its player comes back (``away_at``: since that version)
    away: bool = False
    away_at: int | None = None
    #: decisions the timeout policy or a bot made for this person's seat
    bot_decisions: int = 0

    def copy(self) -> SeatClock:
        return SeatClock(
            self.seat,
            self.timed,
            self.kind,
            self.since,
            self.decision_id,
            self.bank_ms,
            self.timeouts,
            self.timeouts_total,
            self.abandoned,
            self.abandoned_at,
            self.person,
            self.away,
            self.away_at,
            self.bot_decisions,
        )


@dataclass(slots=True)
class Clocks:
    """Every seat's clock, folded batch by batch (one batch = one command's envelopes)."""

    control: TimeControl | None
    policy: str
    abandon_after: int
    seats: list[SeatClock] = field(default_factory=list)
    version: int = 0
    #: the table's least time between two bot decisions (ms; 0: not paced)
    pace_ms: int = 0
    #: the timestamp of the last bot decision, else of the game's creation (for the pace)
    bot_moved: str | None = None
    #: whether ``abandon_after`` timeouts in a row abandon the seat for good (else: away)
    hand_over: bool = False

    @classmethod
    def for_table(cls, table: Mapping[str, Any], players: int) -> Clocks:
        control = parse_time_control(table.get("time_control"))
        kinds = seat_kinds(table, players)
        bank = control.bank_ms if control is not None else None
        seats = [
            SeatClock(
                i, control is not None and kinds[i] != "bot", bank_ms=bank, person=kinds[i] != "bot"
            )
            for i in range(players)
        ]
        return cls(
            control,
            timeout_policy(table),
            abandon_after(table),
            seats,
            pace_ms=bot_pace_ms(table),
            hand_over=hands_over(table),
        )

    def copy(self) -> Clocks:
        return Clocks(
            self.control,
            self.policy,
            self.abandon_after,
            [s.copy() for s in self.seats],
            self.version,
            self.pace_ms,
            self.bot_moved,
            self.hand_over,
        )

    # --- the fold ------------------------------------------------------------------------
    def apply(
        self, state: GameState, *, version: int, ts: str, actor: str, seat: int | None
    ) -> None:
        """Fold one batch: ``state`` is the state after it, ``seat`` the seat whose command it
        was (None for the game's creation)."""
        if seat is not None and 0 <= seat < len(self.seats):
            self._acted(self.seats[seat], ts, actor, version)
        if self.bot_moved is None or actor.startswith(BOT_ACTOR_PREFIX):
            self.bot_moved = ts
        owed = {} if state.over else engine.pending(state)
        for sc in self.seats:
            kind = owed.get(sc.seat)
            if kind is None:
                sc.kind = sc.since = sc.decision_id = None
            elif sc.kind is None or sc.seat == seat or sc.kind != kind:
                sc.kind, sc.since, sc.decision_id = kind, ts, version
        self.version = version

    def _acted(self, sc: SeatClock, ts: str, actor: str, version: int) -> None:
        c = self.control
        if c is not None and sc.timed and sc.bank_ms is not None and sc.since is not None:
            over = max(0, _ms_between(sc.since, ts) - c.per_decision_ms)
            bank = max(0, sc.bank_ms - over) + c.increment_ms
            sc.bank_ms = bank if c.bank_max_ms is None else min(bank, c.bank_max_ms)
        if actor == TIMEOUT_ACTOR:
            sc.timeouts += 1
            sc.timeouts_total += 1
            sc.bot_decisions += sc.person
            out = sc.abandoned or sc.away
            if self.abandon_after and sc.timeouts >= self.abandon_after and not out:
                if self.hand_over:
                    sc.abandoned, sc.abandoned_at = True, version
                else:
                    sc.away, sc.away_at = True, version
        elif actor.startswith(BOT_ACTOR_PREFIX):
            sc.bot_decisions += sc.person
        elif not sc.abandoned:  # the seat's own player: back if it was away
            sc.timeouts = 0
            sc.away, sc.away_at = False, None

    # --- questions ---------------------------------------------------------------------------
    def deadline(self, seat: int) -> datetime | None:
        """When the seat's current decision times out (None: no decision or no time control)."""
        sc = self.seats[seat]
        c = self.control
        if c is None or not sc.timed or sc.abandoned or sc.away or sc.since is None:
            return None
        allowance = c.per_decision_ms + (sc.bank_ms or 0)
        return parse_ts(sc.since) + timedelta(milliseconds=allowance)

    def bot_due(self) -> datetime | None:
        """When the next bot decision may be played (None: at once, the table is not paced)."""
        if not self.pace_ms or self.bot_moved is None:
            return None
        return parse_ts(self.bot_moved) + timedelta(milliseconds=self.pace_ms)

    def to_view(self) -> dict[str, Any]:
        """The ``clock`` block of the public and seat views (deadlines are public)."""
        seats = []
        for sc in self.seats:
            dl = self.deadline(sc.seat)
            seats.append(
                {
                    "seat": sc.seat,
                    "timed": sc.timed,
                    "pending": sc.kind,
                    "since": sc.since,
                    "decision_id": sc.decision_id,
                    "decision_version": sc.decision_id,  # deprecated: decision_id
                    "deadline": iso_utc(dl) if dl is not None else None,
                    "bank_ms": sc.bank_ms if sc.timed else None,
                    "timeouts": sc.timeouts,
                    "timeouts_total": sc.timeouts_total,
                    "abandoned": sc.abandoned,
                    "abandoned_at": sc.abandoned_at,
                    "away": sc.away,
                    "away_at": sc.away_at,
                    "bot_decisions": sc.bot_decisions,
                }
            )
        return {
            "time_control": self.control.to_dict() if self.control is not None else None,
            "timeout_policy": self.policy,
            "abandon_after": self.abandon_after,
            "hand_over": self.hand_over,
            "seats": seats,
        }


def worker_plays(state: GameState, clocks: Clocks, seat: int) -> str | None:
    """Who plays ``seat``'s pending decision if its person or program does not: ``"bot"`` (a bot
    seat, or a seat away or abandoned to a bot), ``"timeout"`` (the table's policy, at the seat's
    deadline), or None (it owes no decision, or owes it with no deadline). ``clocks`` are the
    ones folded with ``state``."""
    sc = clocks.seats[seat]
    if sc.decision_id is None:
        return None
    if sc.abandoned or sc.away or seat_kinds(state.table, len(state.players))[seat] == "bot":
        return "bot"
    return "timeout" if clocks.deadline(seat) is not None else None


def unattended(state: GameState, clocks: Clocks) -> bool:
    """Whether a game under way owes no decision a worker plays (``worker_plays``): every
    pending decision is a person's or an external program's with no deadline. The append of such
    a version records it ``unattended``, and the workers' dispatcher and sweep pass it by."""
    return not state.over and all(
        worker_plays(state, clocks, seat) is None for seat in range(len(clocks.seats))
    )


def batches(envelopes: Iterable[Envelope]) -> list[list[Envelope]]:
    """Consecutive envelopes grouped by command id (one command's batch each)."""
    out: list[list[Envelope]] = []
    for env in envelopes:
        if out and out[-1][0].command_id == env.command_id:
            out[-1].append(env)
        else:
            out.append([env])
    return out


def batch_seat(batch: list[Envelope]) -> int | None:
    """The seat whose command a batch records (None for the creation batch)."""
    first = batch[0]
    if first.type == "CommandSubmitted":
        seat = first.payload.get("seat")
        return seat if isinstance(seat, int) else None
    return None


def fold(
    state: GameState | None, clocks: Clocks | None, envelopes: Iterable[Envelope]
) -> tuple[GameState, Clocks]:
    """Fold whole batches of envelopes into a state and its clocks (both updated in place when
    given; start from ``None, None`` to fold a game from its first envelope)."""
    for batch in batches(envelopes):
        for env in batch:
            state = engine.evolve(state, env.event())
        assert state is not None
        if clocks is None:
            clocks = Clocks.for_table(state.table, len(state.players))
        last = batch[-1]
        clocks.apply(state, version=last.seq, ts=last.ts, actor=last.actor, seat=batch_seat(batch))
    if state is None or clocks is None:
        raise ValueError("nothing to fold: the game has no envelopes")
    return state, clocks
