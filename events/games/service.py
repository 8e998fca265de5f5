"""The game application service: creating games and running commands on the event store.

One place turns a command into stored facts: load the game (fold its stream, cached per process
as a ``Snapshot``), check the expected version or decision id, let the engine decide, seal the
command record and the events into hash-chained envelopes, and append them with the lobby summary
in one atomic store call. The public and seat views (``events.games.projections``) are stored by the appends that
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
    view_name,
)
from events.games.seeds import SeedHolds, reveals, withheld_line, withhold, withhold_item
from events.games.served import named_bonuses
from events.games.steps import Steps
from events.games.time_control import Clocks, unattended, validate_table
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
    #: stored as needing no worker (``events.games.time_control.unattended``): the dispatcher
    #: has nothing to do
    unattended: bool = False


Listener = Callable[[Change], None]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One game as this process last saw it: its state and seat clocks at ``version``, the hash
    the next append chains to and the game's first and last timestamps. Never changed once
    cached: a command folds into copies and caches a new snapshot. ``memo`` is what rendering the
    game's views may reuse (``ViewMemo``); it is handed on from one version's snapshot to the
    next."""

    state: GameState
    version: int
    last_hash: str
    last_ts: str
    created_at: str
    clocks: Clocks
    memo: ViewMemo = field(default_factory=ViewMemo)

    def decision(self, seat: int) -> tuple[int | None, str | None]:
        """The id and kind of ``seat``'s pending decision ((None, None): it owes none)."""
        seats = self.clocks.seats
        if not 0 <= seat < len(seats) or seats[seat].decision_id is None:
            return None, None
        return seats[seat].decision_id, seats[seat].kind


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
        self._cache: OrderedDict[str, Snapshot] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        #: called after every stored creation or command (``workers`` enqueues bot turns and
        #: timeouts here); a failing listener is logged, never fails the command
        self.listeners: list[Listener] = []
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
        notices = self._notices(
            game_id, state, clocks, envs[-1].seq, CREATE_COMMAND_ID, created=True
        )
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
                game = self._current(game_id)
                self._notify(Change(game_id, game.version, game.state, game.clocks, duplicate=True))
            return game_id, result.last_seq
        self._remember(game_id, state, envs[-1], now, clocks, memo)
        self._notify(Change(game_id, envs[-1].seq, state, clocks))
        return game_id, envs[-1].seq

    # --- loading ---------------------------------------------------------------------------
    def load(self, game_id: str) -> tuple[GameState, int, str]:
        """The game's current state (a private copy), version and head hash."""
        game = self._current(game_id)
        return game.state.copy(), game.version, game.last_hash

    def load_clocks(self, game_id: str) -> tuple[GameState, int, Clocks]:
        """The game's current state, version and seat clocks (private copies)."""
        game = self._current(game_id)
        return game.state.copy(), game.version, game.clocks.copy()

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

    def _remember(
        self,
        game_id: str,
        state: GameState,
        last: Envelope,
        created: str,
        clocks: Clocks,
        memo: ViewMemo | None = None,
    ) -> Snapshot:
        """Cache the game at ``last`` (its newest envelope)."""
        entry = Snapshot(
            state,
            last.seq,
            last.hash,
            last.ts,
            created,
            clocks,
            ViewMemo() if memo is None else memo,
        )
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
        ``ConcurrencyConflict`` when the game moved past ``expected_version``,
        ``DecisionChanged``, ``GameNotFound``.

        Load, decide, append, publish. The cached game is trusted, because the append checks the
        command id and the version atomically; it is read from the store first (one round trip,
        which also finds the command id's earlier result) when there is none or the client saw a
        later version, and again before a decision it says is not the seat's, or a command it
        finds illegal, is refused. An append that finds the game moved on is final with
        ``expected_version`` (the client decided on an older version); without it the game is
        read again and the command decided again, ``_MAX_ATTEMPTS`` times at most. A command id
        applied before is answered with its first result, whenever that is found.
        """
        game = self._cached(game_id)
        seen = expected_version if expected_version is not None else decision_id
        behind = game is not None and seen is not None and seen > game.version
        fresh = False  # whether ``game`` was read from the store during this command
        conflicts = 0
        while True:
            # load: the cached game, read from the store when there is none or it is behind
            if behind or game is None:
                previous, game = self._catch_up(game_id, game, command_id)
                if previous is not None:
                    return self._replay(game_id, previous)
                behind, fresh = False, True

            # decide: on the version the client saw, for the decision it answers
            refusal: ConcurrencyConflict | DecisionChanged | None = None
            current, kind = game.decision(seat)
            if expected_version is not None and expected_version != game.version:
                refusal = ConcurrencyConflict(game_id, expected_version, game.version)
            elif decision_id is not None and decision_id != current:
                if not fresh:  # (the cached game may be behind)
                    behind = True
                    continue
                refusal = DecisionChanged(game_id, seat, decision_id, current, kind, game.version)
            if refusal is not None:  # unless the command id was applied before
                previous = self.store.command_result(game_id, command_id)
                if previous is None:
                    raise refusal
                return self._replay(game_id, previous)
            decided = self._decide(game_id, game, seat, command, command_id, actor, final=fresh)
            if decided is None:  # illegal on a cached game that may be behind
                behind = True
                continue
            state, clocks, envs = decided
            quiet = unattended(state, clocks)

            # append
            try:
                result = self._append(game_id, game, command_id, state, clocks, envs, quiet)
            except ConcurrencyConflict as conflict:  # the game moved on since ``game``
                conflicts += 1
                if expected_version is not None or conflicts >= _MAX_ATTEMPTS:
                    expected = game.version if expected_version is None else expected_version
                    raise ConcurrencyConflict(game_id, expected, conflict.actual) from None
                behind = True
                continue
            if result.duplicate:  # (a concurrent retry of the command was stored first)
                return self._replay(game_id, result)

            # publish
            self._remember(game_id, state, envs[-1], game.created_at, clocks, game.memo)
            self._notify(Change(game_id, envs[-1].seq, state, clocks, unattended=quiet))
            return Submitted(result, envs)

    def _decide(
        self,
        game_id: str,
        game: Snapshot,
        seat: int,
        command: dict[str, Any],
        command_id: str,
        actor: str | None,
        *,
        final: bool,
    ) -> tuple[GameState, Clocks, list[Envelope]] | None:
        """The command record and the engine's events folded into copies of the game's state
        and clocks, and sealed into envelopes chained to its head. An illegal command raises
        ``engine.IllegalCommand`` when the game is ``final`` (read from the store during this
        command), else returns None (the cached game may be behind)."""
        state, clocks = game.state.copy(), game.clocks.copy()
        try:
            record = engine.command_submitted(seat, command)
            engine.evolve(state, record)
            events = engine.play(state, seat, command)
        except engine.IllegalCommand:
            if final:
                raise
            return None
        envs = seal_batch(
            [record, *events],
            game_id=game_id,
            expected_version=game.version,
            prev_hash=game.last_hash,
            command_id=command_id,
            actor=actor or f"seat:{seat}",
            ts=iso_utc(self.clock()),
            visibility=engine.visibility,
        )
        last = envs[-1]
        clocks.apply(state, version=last.seq, ts=last.ts, actor=last.actor, seat=seat)
        return state, clocks, envs

    def _append(
        self,
        game_id: str,
        game: Snapshot,
        command_id: str,
        state: GameState,
        clocks: Clocks,
        envs: list[Envelope],
        quiet: bool,
    ) -> AppendResult:
        """Render the projections and the notices and append everything in one atomic call on
        the game's version (``ConcurrencyConflict`` when it moved on). ``quiet``: the new version
        needs no worker (``events.games.time_control.unattended``)."""
        if state.over:  # a finished game's views are final: stored now, compacted with it later
            views = render_views(
                game_id,
                state,
                game.created_at,
                envs[-1].ts,
                clocks,
                game.memo,
                self._names(game_id),
            )
        else:  # the lobby's summary; the public and seat views are rendered when read (``view``)
            views = render_summary(game_id, state, game.created_at, None, clocks)
        return self.store.append(
            game_id,
            game.version,
            command_id,
            envs,
            views=views,
            status="finished" if state.over else None,
            notices=self._notices(game_id, state, clocks, envs[-1].seq, command_id),
            unattended=quiet,
        )

    def _replay(self, game_id: str, result: AppendResult) -> Submitted:
        """The answer to a command id applied before: its first result and envelopes, once the
        replicas hold them (the first attempt may be on the master alone). Listeners hear the
        current game again: a retry after a crash between an append and its listeners loses
        nothing."""
        self.store.confirm_replicated(game_id)
        envs = self.store.read(game_id, after=result.first_seq - 1, limit=result.count)
        if self.listeners:
            game = self._current(game_id)
            self._notify(Change(game_id, game.version, game.state, game.clocks, duplicate=True))
        return Submitted(result, envs)

    def _notices(
        self,
        game_id: str,
        state: GameState,
        clocks: Clocks,
        version: int,
        command_id: str,
        *,
        created: bool = False,
    ) -> list[tuple[str, str]] | None:
        """What this append tells the bot accounts seated in the game (external seats), one
        notice each on the account's stream (``EventStore.notice_stream``), all with the append
        in one round trip: ``game-started`` for each of their seats when the game is
        ``created``, ``game-finished`` (its result) when the append ends it, and each decision
        it makes pending (no ``type``). ``GET /bots/me/decisions/stream`` delivers the decisions,
        ``GET /bots/me/events`` the games' starts and ends; both send a notice only once the
        command it names (``command_id``, ending at ``version``) is found recorded."""
        seats = state.table.get("seats")
        if not seats:
            return None
        out = []
        for i, seat in enumerate(seats):
            if not isinstance(seat, dict) or seat.get("kind") != "external":
                continue
            account = seat.get("account")
            if not account:
                continue
            stream = self.store.notice_stream(str(account))
            said = {"game_id": game_id, "seat": i, "command_id": command_id, "version": version}
            if created:
                started = {"type": "game-started", **said, "ladder": state.table.get("ladder")}
                out.append((stream, orjson.dumps(started).decode("utf-8")))
            if state.over:
                result = named_bonuses(
                    {"reason": state.end_reason, "winners": state.winners, "scores": state.scores}
                )
                finished = {"type": "game-finished", **said, "result": result}
                out.append((stream, orjson.dumps(finished).decode("utf-8")))
                continue
            sc = clocks.seats[i]
            if sc.decision_id != version or sc.kind is None or sc.abandoned:
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
            out.append((stream, orjson.dumps(data).decode("utf-8")))
        return out or None

    def _cached(self, game_id: str) -> Snapshot | None:
        with self._lock:
            cached = self._cache.get(game_id)
            if cached is not None:
                self._cache.move_to_end(game_id)
            return cached

    def _current(self, game_id: str) -> Snapshot:
        """The cached game caught up with the store (one round trip); read it, never change it."""
        return self._catch_up(game_id, self._cached(game_id), None)[1]

    def _catch_up(
        self, game_id: str, cached: Snapshot | None, command_id: str | None
    ) -> tuple[AppendResult | None, Snapshot]:
        """One round trip: the command id's earlier result, if any, and the events the cached
        state lacks, folded into a new snapshot (the cached objects are never changed)."""
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

    def _advance(self, game_id: str, cached: Snapshot | None, envs: list[Envelope]) -> Snapshot:
        """The game ``cached`` (None: from its first envelope) with ``envs`` folded in, cached as
        a new snapshot (the cached objects are never changed)."""
        if cached is not None:
            state, clocks = fold_clocks(cached.state.copy(), cached.clocks.copy(), envs)
            created = cached.created_at
        else:
            state, clocks = fold_clocks(None, None, envs)
            created = envs[0].ts
        memo = cached.memo if cached is not None else None
        return self._remember(game_id, state, envs[-1], created, clocks, memo)

    # --- reading ---------------------------------------------------------------------------
    def view(self, game_id: str, viewer: Viewer) -> tuple[int, str]:
        """(position, JSON) of a projection at the game's current version, as the API serves it:
        ``"public"``, a seat number or ``"summary"``. The summary is written by every append. The
        public and seat views are written by the append that creates or ends the game; in between
        they are rendered when first read at a version (``render``: this process's cached game,
        caught up) and stored with their position for the next reader, so a command does not pay
        for views nobody reads and a reader never sees a view behind the stream it read. Views
        are read under their format's name (``view_name``): one stored by code that rendered
        another shape counts as none and is rendered again."""
        if viewer == "summary":
            summary = self.store.get_view(game_id, "summary")
            if summary is None:
                raise GameNotFound(game_id)
            return summary
        name = view_name(viewer)
        version, (stored,) = self.store.views_at(game_id, [name])
        # none (or one of an older format only) or behind: rendered now, at the current version
        if stored is None or stored[0] < version:
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
        envs = self.store.read(game_id)
        over = any(e.type == "GameEnded" for e in envs[-1:])
        if over and viewer != "server" and self.holds.running(game_id):
            feed = [feed_item(e, viewer) for e in envs]
            feed[-1] = withhold_item(feed[-1])  # GameEnded
            return [withheld_line(game_id), *(canonical_json(item) for item in feed)]
        if over or viewer == "server":
            lines = [e.to_json() for e in envs]
            if signer is not None and envs:
                result = signed_result(envs[-1].payload) if over else None
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
        text = views.get(view_name(viewer))
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
