"""The game application service: creating games and running commands on the event store.

One place turns a command into stored facts: load the game (fold its stream, cached per process),
check the idempotency key and the expected version, let the engine decide, seal the command record
and the events into hash-chained envelopes, render the projections, and append everything in one
atomic store call. Readers get the projections stored with the stream position they reflect, the
per-viewer event feed (redacted only by the engine's ``redact``) and log exports.

Viewers: ``"public"``, a seat number, or ``"server"``.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import engine
from engine.state import GameState

from .envelope import GENESIS_HASH, Envelope, canonical_json, iso_utc, seal_batch
from .errors import ConcurrencyConflict, GameNotFound
from .store import AppendResult, EventStore

Viewer = int | str
CREATE_COMMAND_ID = "create"


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


class _Cached:
    __slots__ = ("state", "version", "last_hash", "created_at")

    def __init__(self, state: GameState, version: int, last_hash: str, created_at: str) -> None:
        self.state = state
        self.version = version
        self.last_hash = last_hash
        self.created_at = created_at


def view_names(players: int) -> list[str]:
    return ["public"] + [f"seat:{i}" for i in range(players)] + ["summary"]


def render_views(
    game_id: str, state: GameState, created_at: str, finished_at: str | None
) -> dict[str, str]:
    """Every projection of one state, as canonical JSON: public, each seat, and the lobby summary."""
    views = {"public": canonical_json(engine.observe(state, "public"))}
    for p in state.players:
        views[f"seat:{p.seat}"] = canonical_json(engine.observe(state, p.seat))
    views["summary"] = canonical_json(summary(game_id, state, created_at, finished_at))
    return views


def summary(
    game_id: str, state: GameState, created_at: str, finished_at: str | None
) -> dict[str, Any]:
    """The lobby projection of a game."""
    table = _table(state)
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

    # --- creation --------------------------------------------------------------------------
    def create(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: str | None = None,
        table: dict[str, Any] | None = None,
        game_id: str | None = None,
    ) -> tuple[str, int]:
        """Create a game; returns (game id, version). ``seed`` defaults to 128 random bits."""
        seed = seed or secrets.token_hex(16)
        game_id = game_id or secrets.token_hex(6)
        events = engine.create(seed, players, options, table)
        now = iso_utc(self.clock())
        envs = seal_batch(events, game_id=game_id, expected_version=0, prev_hash=GENESIS_HASH,
                          command_id=CREATE_COMMAND_ID, actor="system", ts=now, visibility=engine.visibility)  # fmt: skip
        state = engine.replay(events)
        views = render_views(game_id, state, now, now if state.over else None)
        self.store.register_game(game_id, now, "active")
        self.store.append(game_id, 0, CREATE_COMMAND_ID, envs, views=views, status="active")
        self._remember(game_id, state, envs[-1].seq, envs[-1].hash, now)
        return game_id, envs[-1].seq

    # --- loading ---------------------------------------------------------------------------
    def load(self, game_id: str) -> tuple[GameState, int, str]:
        """The game's current state (a private copy), version and head hash."""
        state, version, last_hash, _ = self._load(game_id)
        return state, version, last_hash

    def _load(self, game_id: str) -> tuple[GameState, int, str, str]:
        head = self.store.head(game_id)
        if head.version == 0:
            raise GameNotFound(game_id)
        with self._lock:
            cached = self._cache.get(game_id)
            if cached is not None:
                self._cache.move_to_end(game_id)
        if cached is not None and cached.version == head.version:
            return cached.state.copy(), cached.version, cached.last_hash, cached.created_at
        state: GameState | None
        if cached is not None and cached.version < head.version:
            state, created = cached.state.copy(), cached.created_at
            envs = self.store.read(game_id, after=cached.version)
        else:
            state = None
            envs = self.store.read(game_id)
            created = envs[0].ts
        for env in envs:
            state = engine.evolve(state, env.event())
        assert state is not None and envs
        version, last_hash = envs[-1].seq, envs[-1].hash
        self._remember(game_id, state, version, last_hash, created)
        return state.copy(), version, last_hash, created

    def _remember(
        self, game_id: str, state: GameState, version: int, last_hash: str, created: str
    ) -> None:
        with self._lock:
            self._cache[game_id] = _Cached(state, version, last_hash, created)
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

        Raises ``engine.IllegalCommand`` (nothing stored), ``ConcurrencyConflict`` when the game
        moved past ``expected_version``, ``GameNotFound``.
        """
        previous = self.store.command_result(game_id, command_id)
        if previous is not None:
            return Submitted(previous, self.store.read(game_id, after=previous.first_seq - 1,
                                                        limit=previous.count))  # fmt: skip
        state, version, last_hash, created = self._load(game_id)
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
        finished = envs[-1].ts if state.over else None
        views = render_views(game_id, state, created, finished)
        result = self.store.append(game_id, version, command_id, envs, views=views,
                                   status="finished" if state.over else None)  # fmt: skip
        if result.duplicate:  # a concurrent retry of the same command won the race
            self.forget(game_id)
            return Submitted(
                result, self.store.read(game_id, after=result.first_seq - 1, limit=result.count)
            )
        self._remember(game_id, state, envs[-1].seq, envs[-1].hash, created)
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
        state = engine.replay([e.event() for e in envs])
        created = envs[0].ts
        finished = envs[-1].ts if state.over else None
        return render_views(game_id, state, created, finished)


def feed_item(env: Envelope, viewer: Viewer) -> dict[str, Any]:
    event = env.event()
    visible = engine.redact(event, viewer) if env.visibility != "public" else event
    return {"seq": env.seq, "type": env.type, "actor": env.actor, "ts": env.ts,
            "command_id": env.command_id, "event": visible}  # fmt: skip
