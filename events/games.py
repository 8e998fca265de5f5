"""The game application service: creating games and running commands on the event store.

One place turns a command into stored facts: load the game (fold its stream, cached per process),
check the idempotency key and the expected version, let the engine decide, seal the command record
and the events into hash-chained envelopes, render the projections, and append everything in one
atomic store call. Readers get the projections stored with the stream position they reflect, the
per-viewer event feed (redacted only by the engine's ``redact``) and log exports.

Viewers: ``"public"``, a seat number, or ``"server"``.

Time control: the seats' clocks (``events.clock``) are folded from the envelopes next to the
state and cached with it; the public and seat views carry their deadlines, the summary who timed
out or was abandoned. After each stored creation or command, listeners (``subscribe``) hear a
``Change``: the workers enqueue bot turns and timeouts there.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import engine
from engine.state import GameState

from .clock import Clocks, validate_table
from .clock import fold as fold_clocks
from .envelope import GENESIS_HASH, Envelope, canonical_json, iso_utc, seal_batch
from .errors import ConcurrencyConflict, GameNotFound
from .store import AppendResult, EventStore

Viewer = int | str
CREATE_COMMAND_ID = "create"
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


Listener = Callable[[Change], None]


class _Cached:
    __slots__ = ("state", "version", "last_hash", "created_at", "clocks")

    def __init__(
        self, state: GameState, version: int, last_hash: str, created_at: str, clocks: Clocks
    ) -> None:
        self.state = state
        self.version = version
        self.last_hash = last_hash
        self.created_at = created_at
        self.clocks = clocks


def view_names(players: int) -> list[str]:
    return ["public"] + [f"seat:{i}" for i in range(players)] + ["summary"]


def render_views(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, str]:
    """Every projection of one state, as canonical JSON: public, each seat, and the lobby summary.

    ``clocks`` is the seats' time-control fold at this state (``events.clock``); without it the
    clocks are taken as freshly started at ``created_at`` (right only for a new game). The public
    and seat views carry it as ``clock`` (deadlines are public).
    """
    if clocks is None:
        clocks = Clocks.for_table(state.table, len(state.players))
        clocks.apply(state, version=state.seq, ts=created_at, actor="system", seat=None)
    clock = clocks.to_view()
    public = engine.observe(state, "public")
    public["clock"] = clock
    views = {"public": canonical_json(public)}
    for p in state.players:
        seat_view = engine.observe(state, p.seat)
        seat_view["clock"] = clock
        views[f"seat:{p.seat}"] = canonical_json(seat_view)
    views["summary"] = canonical_json(summary(game_id, state, created_at, finished_at, clocks))
    return views


def summary(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, Any]:
    """The lobby projection of a game; its results say which seats timed out or were abandoned."""
    table = _table(state)
    seats = clocks.seats if clocks is not None else []
    deadlines = []
    if clocks is not None:
        deadlines = [d for s in seats if (d := clocks.deadline(s.seat)) is not None]
    return {
        "game_id": game_id,
        "status": "finished" if state.over else "active",
        "players": len(state.players),
        "seats": table.get("seats", [{"kind": "human"} for _ in state.players]),
        "options": state.options,
        "round": state.round,
        "version": state.seq,
        "created_at": created_at,
        "finished_at": finished_at,
        "winners": state.winners if state.over else None,
        "end_reason": state.end_reason,
        "timeouts": [s.timeouts_total for s in seats] or [0 for _ in state.players],
        "abandoned": [s.seat for s in seats if s.abandoned],
        "next_deadline": iso_utc(min(deadlines)) if deadlines else None,
    }


def _table(state: GameState) -> dict[str, Any]:
    return state.table


class Games:
    """Create games and apply commands through an ``EventStore``."""

    def __init__(
        self,
        store: EventStore,
        clock: Callable[[], datetime] = utc_now,
        cache_size: int = 512,
    ) -> None:
        self.store = store
        self.clock = clock
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._tables: dict[str, dict[str, Any]] = {}
        #: called after every stored creation or command (``workers`` enqueues bot turns and
        #: timeouts here); a failing listener is logged, never fails the command
        self.listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(change)`` after each stored creation or command of this instance."""
        self.listeners.append(listener)

    def _notify(self, change: Change) -> None:
        for listener in self.listeners:
            try:
                listener(change)
            except Exception:  # noqa: BLE001 - the command is stored; the workers' sweep recovers
                log.exception("listener %r failed after %s@%d", listener, change.game_id,
                              change.version)  # fmt: skip

    # --- creation --------------------------------------------------------------------------
    def create(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: str | None = None,
        table: dict[str, Any] | None = None,
        game_id: str | None = None,
    ) -> tuple[str, int]:
        """Create a game; returns (game id, version). ``seed`` defaults to 128 random bits.

        Raises ``ValueError`` for a table whose seats or time control are malformed
        (``events.clock.validate_table``).
        """
        validate_table(table, players)
        seed = seed or secrets.token_hex(16)
        game_id = game_id or secrets.token_hex(6)
        events = engine.create(seed, players, options, table)
        now = iso_utc(self.clock())
        envs = seal_batch(events, game_id=game_id, expected_version=0, prev_hash=GENESIS_HASH,
                          command_id=CREATE_COMMAND_ID, actor="system", ts=now, visibility=engine.visibility)  # fmt: skip
        state, clocks = fold_clocks(None, None, envs)
        views = render_views(game_id, state, now, now if state.over else None, clocks)
        self.store.register_game(game_id, now, "active")
        self.store.append(game_id, 0, CREATE_COMMAND_ID, envs, views=views, status="active")
        self._remember(game_id, state, envs[-1].seq, envs[-1].hash, now, clocks)
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

    def _load(self, game_id: str) -> tuple[GameState, int, str, str, Clocks]:
        head = self.store.head(game_id)
        if head.version == 0:
            raise GameNotFound(game_id)
        with self._lock:
            cached = self._cache.get(game_id)
            if cached is not None:
                self._cache.move_to_end(game_id)
        if cached is not None and cached.version == head.version:
            return (cached.state.copy(), cached.version, cached.last_hash, cached.created_at,
                    cached.clocks.copy())  # fmt: skip
        if cached is not None and cached.version < head.version:
            created = cached.created_at
            envs = self.store.read(game_id, after=cached.version)
            state, clocks = fold_clocks(cached.state.copy(), cached.clocks.copy(), envs)
        else:
            envs = self.store.read(game_id)
            created = envs[0].ts
            state, clocks = fold_clocks(None, None, envs)
        version, last_hash = envs[-1].seq, envs[-1].hash
        self._remember(game_id, state, version, last_hash, created, clocks)
        return state.copy(), version, last_hash, created, clocks.copy()

    def _remember(
        self,
        game_id: str,
        state: GameState,
        version: int,
        last_hash: str,
        created: str,
        clocks: Clocks,
    ) -> None:
        with self._lock:
            self._cache[game_id] = _Cached(state, version, last_hash, created, clocks)
            self._cache.move_to_end(game_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

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
    ) -> Submitted:
        """Apply one seat's command; idempotent per command id, optimistic on the version.

        ``actor`` names who caused it in the envelopes (default ``seat:<n>``; the workers use
        ``bot:<name>`` and ``timeout``). Raises ``engine.IllegalCommand`` (nothing stored),
        ``ConcurrencyConflict`` when the game moved past ``expected_version``, ``GameNotFound``.
        """
        previous = self.store.command_result(game_id, command_id)
        if previous is not None:
            return self._duplicate(game_id, previous)
        state, version, last_hash, created, clocks = self._load(game_id)
        if expected_version is not None and expected_version != version:
            raise ConcurrencyConflict(game_id, expected_version, version)
        # the state is a private copy: fold the command record and the command's events into it
        record = engine.command_submitted(seat, command)
        engine.evolve(state, record)
        events = engine.play(state, seat, command)
        batch = [record, *events]
        envs = seal_batch(batch, game_id=game_id, expected_version=version, prev_hash=last_hash,
                          command_id=command_id, actor=actor or f"seat:{seat}",
                          ts=iso_utc(self.clock()), visibility=engine.visibility)  # fmt: skip
        clocks.apply(state, version=envs[-1].seq, ts=envs[-1].ts, actor=envs[-1].actor, seat=seat)
        finished = envs[-1].ts if state.over else None
        views = render_views(game_id, state, created, finished, clocks)
        result = self.store.append(game_id, version, command_id, envs, views=views,
                                   status="finished" if state.over else None)  # fmt: skip
        if result.duplicate:  # a concurrent retry of the same command won the race
            self.forget(game_id)
            return self._duplicate(game_id, result)
        self._remember(game_id, state, envs[-1].seq, envs[-1].hash, created, clocks)
        self._notify(Change(game_id, envs[-1].seq, state, clocks))
        return Submitted(result, envs)

    def _duplicate(self, game_id: str, result: AppendResult) -> Submitted:
        """The answer to a command id applied before; listeners hear the current game again
        (a retry after a crash between the append and the listeners loses nothing)."""
        envs = self.store.read(game_id, after=result.first_seq - 1, limit=result.count)
        if self.listeners:
            state, version, _, _, clocks = self._load(game_id)
            self._notify(Change(game_id, version, state, clocks, duplicate=True))
        return Submitted(result, envs)

    # --- reading ---------------------------------------------------------------------------
    def view(self, game_id: str, viewer: Viewer) -> tuple[int, str]:
        """(position, JSON) of a stored projection: ``"public"``, a seat number or ``"summary"``."""
        name = viewer if viewer in ("public", "summary") else f"seat:{viewer}"
        got = self.store.get_view(game_id, str(name))
        if got is None:
            raise GameNotFound(game_id)
        return got

    def feed(
        self, game_id: str, viewer: Viewer, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Events after ``after`` as ``viewer`` may see them (engine redaction)."""
        return [
            feed_item(env, viewer) for env in self.store.read(game_id, after=after, limit=limit)
        ]

    def export(self, game_id: str, viewer: Viewer) -> list[str]:
        """JSON Lines: the full log (envelopes with hashes) once the game is over or for the
        server; otherwise the viewer's redacted feed."""
        envs = self.store.read(game_id, upcast=False)
        over = any(e.type == "GameEnded" for e in envs[-1:])
        if over or viewer == "server":
            return [e.to_json() for e in envs]
        return [canonical_json(feed_item(e, viewer)) for e in envs]

    def rebuild_views(self, game_id: str) -> dict[str, str]:
        """Fold the whole stream from position 0 and render every projection again."""
        envs = self.store.read(game_id)
        state, clocks = fold_clocks(None, None, envs)
        created = envs[0].ts
        finished = envs[-1].ts if state.over else None
        return render_views(game_id, state, created, finished, clocks)


def feed_item(env: Envelope, viewer: Viewer) -> dict[str, Any]:
    event = env.event()
    visible = engine.redact(event, viewer) if env.visibility != "public" else event
    return {"seq": env.seq, "type": env.type, "actor": env.actor, "ts": env.ts,
            "command_id": env.command_id, "event": visible}  # fmt: skip
