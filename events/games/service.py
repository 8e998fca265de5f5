"""The game application service: creating games and running commands on the event store.

One place turns a command into stored facts: load the game (fold its stream, cached per process),
check the idempotency key and the expected version, let the engine decide, seal the command record
and the events into hash-chained envelopes, and append them with the lobby summary in one atomic
store call. The public and seat views (``events.games.projections``) are stored by the appends that
create and end a game; in between, the first reader of a version renders them from its cached
game and stores them with the position they reflect, so readers always get the current version
and a command does not pay for views nobody reads. Readers also get the per-viewer event feed
(redacted only by the engine's ``redact``) and log exports. A finished game of a duplicate set
that still runs holds its seed back in all of them (``events.games.seeds``).

Viewers: ``"public"``, a seat number, or ``"server"``.

Time control: the seats' clocks (``events.games.time_control``) are folded from the envelopes next to the
state and cached with it; the public and seat views carry their deadlines, the summary who timed
out or was abandoned. After each stored creation or command, listeners (``subscribe``) hear a
``Change``: the workers enqueue bot turns and timeouts there.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

import engine
from engine.canonical import canonical_json
from engine.state import GameState
from events.envelope import GENESIS_HASH, Envelope, iso_utc, seal_batch
from events.errors import ConcurrencyConflict, DecisionChanged, GameNotFound, InvalidBatch
from events.games.projections import (
    Viewer,
    ViewMemo,
    feed_item,
    render_summary,
    render_views,
)
from events.games.seeds import SeedHolds, reveals, withheld_line, withhold, withhold_item
from events.games.steps import Steps
from events.games.time_control import Clocks, validate_table
from events.games.time_control import fold as fold_clocks
from events.store.port import AppendResult, EventStore
from events.verify.replay import CREATE_COMMAND_ID, signed_result
from events.verify.signing import Signer

#: how often a command without expected_version is decided again when other commands keep
#: landing first, before the conflict is reported
_MAX_ATTEMPTS = 10
log = logging.getLogger(__name__)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Submitted:
    """The outcome of a command: the store's result and the envelopes it appended."""

    result: AppendResult
    envelopes: list[Envelope] = field(default_factory=list)

    @property
    def version(self) -> int:
        return self.result.version


@dataclass(frozen=True)
class Change:
    """What a listener hears after a command or a creation was stored (read-only objects).

    ``duplicate`` is true when the command id had been applied before (a retry): the game may
    have moved on since, and ``state``/``clocks`` are the current ones.
    """

    game_id: str
    version: int
    state: GameState
    clocks: Clocks
    duplicate: bool = False
    #: stored as needing no worker (``Games.unattended``): the dispatcher has nothing to do
    unattended: bool = False


Listener = Callable[[Change], None]


class _Command:
    """One command on its way through ``GameService.submit``: what was asked and how far it got."""

    __slots__ = (
        "game_id",
        "seat",
        "command",
        "command_id",
        "expected_version",
        "decision_id",
        "actor",
        "cached",
        "caught_up",
        "conflicts",
        "unattended",
    )

    def __init__(
        self,
        game_id: str,
        seat: int,
        command: dict[str, Any],
        command_id: str,
        expected_version: int | None,
        decision_id: int | None,
        actor: str | None,
    ) -> None:
        self.game_id = game_id
        self.seat = seat
        self.command = command
        self.command_id = command_id
        self.expected_version = expected_version
        self.decision_id = decision_id
        self.actor = actor
        #: the game as this process knows it (replaced, never changed, when caught up)
        self.cached: _Cached | None = None
        #: whether the cached game was read from the store during this command
        self.caught_up = False
        #: appends refused because the game moved on (without ``expected_version``)
        self.conflicts = 0
        #: stored as needing no worker (``Games.unattended``)
        self.unattended = False

    @property
    def entry(self) -> _Cached:
        assert self.cached is not None, "the command path starts from a cached game"
        return self.cached


class _Again(Exception):
    """The game was caught up: decide the command again on it."""


class _Replayed(Exception):
    """The command id was applied before: answer with its first result."""

    def __init__(self, result: AppendResult) -> None:
        super().__init__(result.command_id)
        self.result = result


class _Cached:
    """One game as this process last saw it; never changed once cached (callers copy). ``memo``
    is what rendering the game's views may reuse (``ViewMemo``); it is handed on from one
    version's entry to the next."""

    __slots__ = ("state", "version", "last_hash", "last_ts", "created_at", "clocks", "memo")

    def __init__(
        self,
        state: GameState,
        version: int,
        last_hash: str,
        last_ts: str,
        created_at: str,
        clocks: Clocks,
        memo: ViewMemo | None = None,
    ) -> None:
        self.state = state
        self.version = version
        self.last_hash = last_hash
        self.last_ts = last_ts
        self.created_at = created_at
        self.clocks = clocks
        self.memo = ViewMemo() if memo is None else memo


class GameService:
    """Create games and apply commands through an ``EventStore``."""

    def __init__(
        self,
        store: EventStore,
        clock: Callable[[], datetime] = utc_now,
        cache_size: int = 512,
        names: Callable[[str], Mapping[int, str]] | None = None,
    ) -> None:
        self.store = store
        #: the seats' display names of a game, rendered into its views (None: no names)
        self.names = names
        self.clock = clock
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        #: called after every stored creation or command (``workers`` enqueues bot turns and
        #: timeouts here); a failing listener is logged, never fails the command
        self.listeners: list[Listener] = []
        #: set by the workers' dispatcher: whether a game's new state needs no worker (every
        #: pending decision a person's without a clock); such an append is stored ``unattended``
        #: and its listeners are told so (``Change.unattended``: the dispatcher writes nothing)
        self.unattended: Callable[[str, GameState, Clocks], bool] | None = None
        #: the seeds held back until a duplicate set has ended (``events.games.seeds``)
        self.holds = SeedHolds(store)
        #: finished games' states at any event, for replay steps (``view_at``)
        self.steps = Steps(store)

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(change)`` after each stored creation or command of this instance."""
        self.listeners.append(listener)

    def _notify(self, change: Change) -> None:
        for listener in self.listeners:
            try:
                listener(change)
            except Exception:  # noqa: BLE001 - the command is stored; the workers' sweep recovers
                log.exception(
                    "listener %r failed after %s@%d", listener, change.game_id, change.version
                )

    # --- creation --------------------------------------------------------------------------
    def create(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: str | None = None,
        table: dict[str, Any] | None = None,
        game_id: str | None = None,
        retention: tuple[int, int] = (0, 0),
    ) -> tuple[str, int]:
        """Create a game; returns (game id, version). ``seed`` defaults to 128 random bits.

        One atomic write (``EventStore.create_game``) stores the game's first events, views,
        lobby entry and ``retention`` (idle seconds, finished seconds: as
        ``RedisStore.set_retention``): a failure leaves nothing half made. Creating again with
        the same ``game_id`` (a retry) answers the game stored first, whatever the seed, and
        its listeners hear it again.

        Raises ``ValueError`` for a table whose seats or time control are malformed
        (``events.games.time_control.validate_table``).
        """
        validate_table(table, players)
        seed = seed or secrets.token_hex(16)
        game_id = game_id or secrets.token_hex(6)
        events = engine.create(seed, players, options, table, game=game_id)
        now = iso_utc(self.clock())
        envs = seal_batch(
            events,
            game_id=game_id,
            expected_version=0,
            prev_hash=GENESIS_HASH,
            command_id=CREATE_COMMAND_ID,
            actor="system",
            ts=now,
            visibility=engine.visibility,
        )
        state, clocks = fold_clocks(None, None, envs)
        memo = ViewMemo()
        views = render_views(game_id, state, now, now if state.over else None, clocks, memo)
        notices = self._notices(game_id, state, clocks, envs[-1].seq, CREATE_COMMAND_ID)
        result = self.store.create_game(
            game_id,
            now,
            CREATE_COMMAND_ID,
            envs,
            views=views,
            status="active",
            idle_seconds=retention[0],
            finished_seconds=retention[1],
            notices=notices,
        )
        if result.duplicate:  # a retry: the game stored first is the game
            self.forget(game_id)
            if self.listeners:  # (the first attempt may have failed before telling them)
                state, version, _, _, clocks = self._load(game_id)
                self._notify(Change(game_id, version, state, clocks, duplicate=True))
            return game_id, result.last_seq
        self._remember(game_id, state, envs[-1], now, clocks, memo)
        self._notify(Change(game_id, envs[-1].seq, state, clocks))
        return game_id, envs[-1].seq

    # --- loading ---------------------------------------------------------------------------
    def load(self, game_id: str) -> tuple[GameState, int, str]:
        """The game's current state (a private copy), version and head hash."""
        state, version, last_hash, _, _ = self._load(game_id)
        return state, version, last_hash

    def load_clocks(self, game_id: str) -> tuple[GameState, int, Clocks]:
        """The game's current state, version and seat clocks (private copies)."""
        state, version, _, _, clocks = self._load(game_id)
        return state, version, clocks

    def peek(self, game_id: str) -> tuple[GameState, int, Clocks] | None:
        """The game as this process last saw it, without asking the store; None if it is not
        cached. For a caller that knows nobody else appends (a worker playing a game on under
        its lease; ``submit`` checks the version anyway). The cached objects themselves, not
        copies: read them, never change them."""
        cached = self._cached(game_id)
        if cached is None:
            return None
        return cached.state, cached.version, cached.clocks

    def observed(self, game_id: str, version: int, seat: int) -> dict[str, Any] | None:
        """``engine.observe(state, seat)`` of the game at ``version`` if this process rendered
        the views of that very version (``render_views`` keeps them): read-only, shared."""
        cached = self._cached(game_id)
        if cached is None or cached.version != version:
            return None
        seen = cached.memo.observed
        if seen is None or seen[0] is not cached.state:
            return None
        view: dict[str, Any] | None = seen[1].get(seat)
        return view

    def _load(self, game_id: str) -> tuple[GameState, int, str, str, Clocks]:
        _previous, entry = self._catch_up(game_id, self._cached(game_id), None)
        return (
            entry.state.copy(),
            entry.version,
            entry.last_hash,
            entry.created_at,
            entry.clocks.copy(),
        )

    def _remember(
        self,
        game_id: str,
        state: GameState,
        last: Envelope,
        created: str,
        clocks: Clocks,
        memo: ViewMemo | None = None,
    ) -> _Cached:
        """Cache the game at ``last`` (its newest envelope)."""
        entry = _Cached(state, last.seq, last.hash, last.ts, created, clocks, memo)
        with self._lock:
            self._cache[game_id] = entry
            self._cache.move_to_end(game_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return entry

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._cache.pop(game_id, None)

    # --- commands --------------------------------------------------------------------------
    def submit(
        self,
        game_id: str,
        seat: int,
        command: dict[str, Any],
        command_id: str,
        expected_version: int | None = None,
        actor: str | None = None,
        decision_id: int | None = None,
    ) -> Submitted:
        """Apply one seat's command; idempotent per command id, optimistic on the version.

        ``decision_id`` (instead of ``expected_version``): the id of the seat's decision the
        command answers (``decision_id`` in the seat view: the version at which that decision
        became pending, ``SeatClock.decision_id``). The command is applied whatever other seats
        did meanwhile as long as the seat still owes that same decision, and refused with
        ``DecisionChanged`` (nothing stored) once it does not. Atomic: the id is checked on the
        state the command is decided on, and the append only lands on that very version (else
        the game is caught up, the id checked again and the command decided again).

        ``actor`` names who caused it in the envelopes (default ``seat:<n>``; the workers use
        ``bot:<name>`` and ``timeout``). Raises ``engine.IllegalCommand`` (nothing stored),
        ``ConcurrencyConflict`` when the game moved past ``expected_version``, ``GameNotFound``.

        Round trips: the cached state is trusted optimistically, because the append itself
        checks the command id and the version atomically. A cache known to be behind (the client
        saw a later version) is caught up first in one round trip; a cache found behind by the
        append is caught up and the command decided again (only without ``expected_version``:
        with it, the client decided on an older version and gets the conflict).
        """
        cmd = _Command(game_id, seat, command, command_id, expected_version, decision_id, actor)
        return self._run(cmd)

    def _run(self, cmd: _Command) -> Submitted:
        """The command path: start from the cached game (caught up if known behind), then
        attempt - check, decide, seal, project, append - until one attempt is stored; a command
        id applied before is answered with its first result instead."""
        try:
            self._start(cmd)
            while True:
                try:
                    return self._attempt(cmd)
                except _Again:
                    continue
        except _Replayed as replayed:
            return self._duplicate(cmd.game_id, replayed.result)

    def _attempt(self, cmd: _Command) -> Submitted:
        """One attempt on the cached game; raises ``_Again`` once it caught the game up."""
        self._check_version(cmd)
        self._check_decision(cmd)
        state, clocks, record, events = self._decide(cmd)
        envs = self._seal(cmd, record, events)
        clocks.apply(
            state, version=envs[-1].seq, ts=envs[-1].ts, actor=envs[-1].actor, seat=cmd.seat
        )
        result = self._append(cmd, state, clocks, envs)
        return self._stored(cmd, state, clocks, envs, result)

    def _start(self, cmd: _Command) -> None:
        """The cached game, caught up first when there is none or the client saw a later one."""
        cmd.cached = self._cached(cmd.game_id)
        newer = cmd.expected_version if cmd.expected_version is not None else cmd.decision_id
        if cmd.cached is not None and (newer is None or newer <= cmd.cached.version):
            return
        self._catch_up_command(cmd, cmd.command_id)

    def _advance(self, game_id: str, cached: _Cached | None, envs: list[Envelope]) -> _Cached:
        """The game ``cached`` (None: from its first envelope) with ``envs`` folded in, cached as
        a new entry (the cached objects are never changed)."""
        if cached is not None:
            state, clocks = fold_clocks(cached.state.copy(), cached.clocks.copy(), envs)
            created = cached.created_at
        else:
            state, clocks = fold_clocks(None, None, envs)
            created = envs[0].ts
        memo = cached.memo if cached is not None else None
        return self._remember(game_id, state, envs[-1], created, clocks, memo)

    def _catch_up_command(self, cmd: _Command, command_id: str | None) -> None:
        """Catch the cached game up (one round trip); with ``command_id``, a retry of a command
        applied before raises ``_Replayed``."""
        previous, cmd.cached = self._catch_up(cmd.game_id, cmd.cached, command_id)
        cmd.caught_up = True
        if previous is not None:
            raise _Replayed(previous)

    def _again(self, cmd: _Command) -> _Again:
        """Catch up and decide again (``raise self._again(cmd)``)."""
        self._catch_up_command(cmd, cmd.command_id)
        return _Again()

    def _replayed_or(self, cmd: _Command, error: Exception) -> Exception:
        """``error``, unless the command id was applied before: then ``_Replayed``."""
        previous = self.store.command_result(cmd.game_id, cmd.command_id)
        return error if previous is None else _Replayed(previous)

    def _check_version(self, cmd: _Command) -> None:
        """With ``expected_version``, the game must be at it (else the client decided on an
        older version - unless this is a retry of a command applied: its first answer)."""
        cached = cmd.entry
        if cmd.expected_version is not None and cmd.expected_version != cached.version:
            conflict = ConcurrencyConflict(cmd.game_id, cmd.expected_version, cached.version)
            raise self._replayed_or(cmd, conflict)

    def _check_decision(self, cmd: _Command) -> None:
        """With ``decision_id``, the seat must still owe that decision (looked up again on the
        stored game once before refusing: the cache may be behind)."""
        cached = cmd.entry
        if cmd.decision_id is None or _decision_of(cached, cmd.seat)[0] == cmd.decision_id:
            return
        if not cmd.caught_up:
            raise self._again(cmd)
        current, kind = _decision_of(cached, cmd.seat)
        changed = DecisionChanged(
            cmd.game_id, cmd.seat, cmd.decision_id, current, kind, cached.version
        )
        raise self._replayed_or(cmd, changed)

    def _decide(self, cmd: _Command) -> tuple[GameState, Clocks, dict[str, Any], list[Any]]:
        """The command record and the engine's events, folded into private copies of the cached
        state and clocks. Illegal on a cache not caught up: a retry of an applied command, or a
        stale cache - caught up and decided again."""
        cached = cmd.entry
        state, clocks = cached.state.copy(), cached.clocks.copy()
        try:
            record = engine.command_submitted(cmd.seat, cmd.command)
            engine.evolve(state, record)
            events = engine.play(state, cmd.seat, cmd.command)
        except engine.IllegalCommand:
            if cmd.caught_up:
                raise
            raise self._again(cmd) from None
        return state, clocks, record, events

    def _seal(self, cmd: _Command, record: dict[str, Any], events: list[Any]) -> list[Envelope]:
        """The command record and its events as envelopes chained to the cached head."""
        cached = cmd.entry
        return seal_batch(
            [record, *events],
            game_id=cmd.game_id,
            expected_version=cached.version,
            prev_hash=cached.last_hash,
            command_id=cmd.command_id,
            actor=cmd.actor or f"seat:{cmd.seat}",
            ts=iso_utc(self.clock()),
            visibility=engine.visibility,
        )

    def _append(
        self, cmd: _Command, state: GameState, clocks: Clocks, envs: list[Envelope]
    ) -> AppendResult:
        """Render the projections and the notices and append everything in one atomic call. A
        conflict (the game moved on since this process saw it) is final with
        ``expected_version``, else caught up and decided again (``_MAX_ATTEMPTS``)."""
        cached = cmd.entry
        if state.over:  # a finished game's views are final: stored now, compacted with it later
            views = render_views(
                cmd.game_id,
                state,
                cached.created_at,
                envs[-1].ts,
                clocks,
                cached.memo,
                self._names(cmd.game_id),
            )
        else:  # the lobby's summary; the public and seat views are rendered when read (``view``)
            views = render_summary(cmd.game_id, state, cached.created_at, None, clocks)
        notices = self._notices(cmd.game_id, state, clocks, envs[-1].seq, cmd.command_id)
        extra: dict[str, Any] = {"notices": notices} if notices else {}
        if self.unattended is not None and not state.over:
            cmd.unattended = self.unattended(cmd.game_id, state, clocks)
            if cmd.unattended:
                extra["unattended"] = True
        try:
            return self.store.append(
                cmd.game_id,
                cached.version,
                cmd.command_id,
                envs,
                views=views,
                status="finished" if state.over else None,
                **extra,
            )
        except ConcurrencyConflict as exc:
            cmd.conflicts += 1
            if cmd.expected_version is not None or cmd.conflicts >= _MAX_ATTEMPTS:
                expected = cached.version if cmd.expected_version is None else cmd.expected_version
                raise ConcurrencyConflict(cmd.game_id, expected, exc.actual) from None
            self._catch_up_command(cmd, None)
            raise _Again() from None

    def _stored(
        self,
        cmd: _Command,
        state: GameState,
        clocks: Clocks,
        envs: list[Envelope],
        result: AppendResult,
    ) -> Submitted:
        """The append's outcome: a duplicate (the command id was applied before, maybe by a
        concurrent retry) answered with its first result, else the game cached at its new
        version and the listeners told."""
        if result.duplicate:
            raise _Replayed(result)
        cached = cmd.entry
        self._remember(cmd.game_id, state, envs[-1], cached.created_at, clocks, cached.memo)
        self._notify(Change(cmd.game_id, envs[-1].seq, state, clocks, unattended=cmd.unattended))
        return Submitted(result, envs)

    def _notices(
        self, game_id: str, state: GameState, clocks: Clocks, version: int, command_id: str
    ) -> list[tuple[str, str]] | None:
        """The decisions this append makes pending for external seats (bot accounts), one
        notice each on the account's stream (``RedisStore.notice_stream``; the decisions stream
        ``GET /bots/me/decisions/stream`` delivers them at once)."""
        stream_of = getattr(self.store, "notice_stream", None)
        seats = state.table.get("seats") if stream_of is not None and not state.over else None
        if not seats:
            return None
        out = []
        for i, seat in enumerate(seats):
            if not isinstance(seat, dict) or seat.get("kind") != "external":
                continue
            account = seat.get("account")
            sc = clocks.seats[i]
            if not account or sc.decision_id != version or sc.kind is None or sc.abandoned:
                continue
            deadline = clocks.deadline(i)
            data = {
                "game_id": game_id,
                "seat": i,
                "kind": sc.kind,
                "decision_id": version,
                "decision_version": version,  # deprecated: decision_id
                "game_version": version,  # deprecated
                "since": sc.since,
                "deadline": iso_utc(deadline) if deadline is not None else None,
                "links": {
                    "view": f"/games/{game_id}/seats/{i}/view",
                    "commands": f"/games/{game_id}/seats/{i}/commands",
                },
                "command_id": command_id,
            }
            assert stream_of is not None
            out.append((stream_of(str(account)), orjson.dumps(data).decode("utf-8")))
        return out or None

    def _cached(self, game_id: str) -> _Cached | None:
        with self._lock:
            cached = self._cache.get(game_id)
            if cached is not None:
                self._cache.move_to_end(game_id)
            return cached

    def _catch_up(
        self, game_id: str, cached: _Cached | None, command_id: str | None
    ) -> tuple[AppendResult | None, _Cached]:
        """One round trip: the command id's earlier result, if any, and the events the cached
        state lacks, folded into a new cache entry (the cached objects are never changed)."""
        previous, envs, version = self.store.catch_up(
            game_id, cached.version if cached else 0, command_id
        )
        if cached is not None and (
            version < cached.version or (envs and envs[0].prev_hash != cached.last_hash)
        ):
            # the stored game is not the one cached: deleted and created again, or its tail was
            # lost (a failover without ``?wait=``) and other events were stored since: start over
            self.forget(game_id)
            cached = None
            previous, envs, version = self.store.catch_up(game_id, 0, command_id)
        if cached is not None and not envs:
            return previous, cached
        return previous, self._advance(game_id, cached, envs)

    def _duplicate(self, game_id: str, result: AppendResult) -> Submitted:
        """The answer to a command id applied before; listeners hear the current game again
        (a retry after a crash between the append and the listeners loses nothing)."""
        confirm = getattr(self.store, "confirm_replicated", None)
        if confirm is not None:  # the first attempt may be on the master alone
            confirm(game_id)
        envs = self.store.read(game_id, after=result.first_seq - 1, limit=result.count)
        if self.listeners:
            state, version, _, _, clocks = self._load(game_id)
            self._notify(Change(game_id, version, state, clocks, duplicate=True))
        return Submitted(result, envs)

    # --- reading ---------------------------------------------------------------------------
    def view(self, game_id: str, viewer: Viewer) -> tuple[int, str]:
        """(position, JSON) of a projection at the game's current version, as the API serves it:
        ``"public"``, a seat number or ``"summary"``. The summary is written by every append. The
        public and seat views are written by the append that creates or ends the game; in between
        they are rendered when first read at a version (``render``: this process's cached game,
        caught up) and stored with their position for the next reader, so a command does not pay
        for views nobody reads and a reader never sees a view behind the stream it read."""
        if viewer == "summary":
            summary = self.store.get_view(game_id, "summary")
            if summary is None:
                raise GameNotFound(game_id)
            return summary
        name = "public" if viewer == "public" else f"seat:{viewer}"
        version, (stored,) = self.store.views_at(game_id, [name])
        if stored is None or stored[0] < version:  # behind: rendered now, at the current version
            position, views = self.render(game_id)
            if name not in views:  # (a seat the game does not have)
                raise GameNotFound(game_id)
            stored = position, views[name]
        return stored[0], self._revealed(game_id, stored[1])

    def _revealed(self, game_id: str, view: str) -> str:
        """A view as it may be read: a finished game whose duplicate set still runs shows
        ``seed_withheld`` instead of its seed (``events.games.seeds``)."""
        if reveals(view) and self.holds.running(game_id):
            return withhold(view)
        return view

    def render(self, game_id: str) -> tuple[int, dict[str, str]]:
        """Every projection of the game at its current version, rendered from this process's
        cached game (caught up) with the seats' names as they are now, and stored for later
        readers; (position, views). A view stored meanwhile at a later position is kept
        (``put_views`` never moves a view back); one of the same position is replaced (a name
        given since shows at once)."""
        _previous, entry = self._catch_up(game_id, self._cached(game_id), None)
        finished = entry.last_ts if entry.state.over else None
        views = render_views(
            game_id,
            entry.state,
            entry.created_at,
            finished,
            entry.clocks,
            entry.memo,
            self._names(game_id),
        )
        try:
            self.store.put_views(game_id, entry.version, views)
        except InvalidBatch:  # (the stream was deleted and created again meanwhile)
            log.warning("views of %s@%d not stored: the stream changed", game_id, entry.version)
        return entry.version, views

    def _names(self, game_id: str) -> Mapping[int, str]:
        return self.names(game_id) if self.names is not None else {}

    def feed(
        self, game_id: str, viewer: Viewer, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Events after ``after`` as ``viewer`` may see them (engine redaction; the seed
        GameEnded reveals is held back while the game's duplicate set runs: ``events.games.seeds``)."""
        envs = self.store.read(game_id, after=after, limit=limit)
        return self._held_back(game_id, viewer, [feed_item(env, viewer) for env in envs])

    def _held_back(
        self, game_id: str, viewer: Viewer, items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Feed items as they may be read: a GameEnded (always the last event) without its seed
        while another game of the game's duplicate set still runs."""
        if viewer != "server" and items and items[-1]["type"] == "GameEnded":
            if self.holds.running(game_id):
                items[-1] = withhold_item(items[-1])
        return items

    def export(self, game_id: str, viewer: Viewer, signer: Signer | None = None) -> list[str]:
        """JSON Lines: the full log (envelopes with hashes) once the game is over or for the
        server, ending with a signature line when a ``signer`` is given (``events.verify.signing``);
        otherwise the viewer's redacted feed. A finished game whose duplicate set still runs
        gives the viewer's redacted feed under a ``seed_withheld`` line (``events.games.seeds``)."""
        envs = self.store.read(game_id, upcast=False)
        over = any(e.type == "GameEnded" for e in envs[-1:])
        if over and viewer != "server" and self.holds.running(game_id):
            feed = [feed_item(e, viewer) for e in envs]
            feed[-1] = withhold_item(feed[-1])  # GameEnded
            return [withheld_line(game_id), *(canonical_json(item) for item in feed)]
        if over or viewer == "server":
            lines = [e.to_json() for e in envs]
            if signer is not None and envs:
                result = signed_result(self.load(game_id)[0]) if over else None
                record = signer.sign(game_id, envs[-1].seq, envs[-1].hash, over, result)
                lines.append(canonical_json({"signature": record}))
            return lines
        return [canonical_json(feed_item(e, viewer)) for e in envs]

    def view_at(self, game_id: str, at: int, viewer: Viewer) -> str:
        """The projection ``viewer`` (``"public"`` or a seat number) had at stream position
        ``at``: the first ``at`` envelopes folded and rendered as a live reader would have read
        them then (what a replay shows at that step), with the seats' names as they are now. The
        caller decides who may read which (a seat's view of a game under way is that seat's
        secret). Raises ``GameNotFound`` (also for a seat the game does not have) and
        ``ValueError`` for an ``at`` outside 1..version."""
        state, clocks, envs = self.steps.fold_at(game_id, at)
        finished = envs[-1].ts if state.over else None
        views = render_views(
            game_id, state, envs[0].ts, finished, clocks, names=self._names(game_id)
        )
        text = views.get("public" if viewer == "public" else f"seat:{viewer}")
        if text is None:
            raise GameNotFound(game_id)
        return self._revealed(game_id, text)

    def rebuild_views(self, game_id: str) -> dict[str, str]:
        """Fold the whole stream from position 0 and render every projection again."""
        envs = self.store.read(game_id)
        state, clocks = fold_clocks(None, None, envs)
        created = envs[0].ts
        finished = envs[-1].ts if state.over else None
        return render_views(game_id, state, created, finished, clocks, names=self._names(game_id))


def _decision_of(entry: _Cached, seat: int) -> tuple[int | None, str | None]:
    seats = entry.clocks.seats
    if not 0 <= seat < len(seats) or seats[seat].decision_id is None:
        return None, None
    return seats[seat].decision_id, seats[seat].kind
