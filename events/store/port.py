"""The ``EventStore`` port: what the game service needs from event storage, its result types,
and the batch validation every adapter runs before writing.

The caller does the thinking: it folds the game's events into state, runs a command, seals the
resulting events into envelopes (seq ``expected_version + 1 ...``, hash-chained to the stored
head) and renders its projections to JSON. The store only checks and writes, atomically:

* the command id was not applied before (if it was, the original result is returned and nothing
  is written, however much later the retry comes);
* the stream is at ``expected_version`` (else ``ConcurrencyConflict`` with the actual version);
* the first envelope links to the stored head hash;

then appends all envelopes, records the command's result and stores the views tagged with the
stream position they reflect, all or nothing. Who may append (a seat's token, rate limits) is
the caller's to check before it appends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from events.envelope import GENESIS_HASH, Envelope, check_timestamp, check_visibility
from events.errors import InvalidBatch
from events.store.seeds import SeedHoldStore

#: a game id: 1-128 letters, digits, '_', '.', ':' or '-' (the one definition: the API's routes, the
#: lobby's cursors and openapi.yaml's ``GameId`` use it; it needs no escaping in a Redis key or URL)
GAME_ID_PATTERN = r"[A-Za-z0-9_.:-]{1,128}"
_GAME_ID_RE = re.compile(GAME_ID_PATTERN)
_MAX_COMMAND_ID = 200
_STATUS_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append did. For a duplicate command: the original append's numbers."""

    game_id: str
    command_id: str
    first_seq: int
    last_seq: int
    version: int
    duplicate: bool = False

    @property
    def count(self) -> int:
        """Number of events the command appended (0 for a command that produced none)."""
        return self.last_seq - self.first_seq + 1


@dataclass(frozen=True, slots=True)
class StreamHead:
    """Where a game's stream ends: its version (last seq) and the hash of that envelope."""

    version: int
    last_hash: str


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One row of the lobby index."""

    game_id: str
    created_at: str
    status: str | None
    version: int


@runtime_checkable
class EventStore(Protocol):
    """Port implemented by ``RedisStore`` (real Redis, embedded server or fakeredis)."""

    def append(
        self,
        game_id: str,
        expected_version: int,
        command_id: str,
        envelopes: Sequence[Envelope],
        *,
        views: Mapping[str, str] | None = None,
        status: str | None = None,
        notices: Sequence[tuple[str, str]] | None = None,
        unattended: bool = False,
    ) -> AppendResult:
        """Atomically append one command's envelopes; store ``views`` at the new version and
        set the game's lobby ``status`` in the same step (and, ``unattended``, record that the
        new version needs no worker). ``notices`` (stream key, JSON) are written with it,
        outside its atomic step (see ``RedisStore.append``). Raises ``ConcurrencyConflict``,
        ``GameNotFound`` (expected_version > 0 on a game with no stream) or ``InvalidBatch``."""
        ...

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """Envelopes with seq > ``after`` in order (at most ``limit``), as stored. Raises
        ``GameNotFound`` for an unknown game."""
        ...

    def version(self, game_id: str) -> int:
        """Last seq of the game's stream; 0 for a game that does not exist yet."""
        ...

    def head(self, game_id: str) -> StreamHead:
        """Version and last hash; ``StreamHead(0, GENESIS_HASH)`` for a game that does not exist."""
        ...

    def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        """The result recorded for ``command_id`` (``duplicate=True``), or None if never applied."""
        ...

    def catch_up(
        self, game_id: str, after: int, command_id: str | None = None
    ) -> tuple[AppendResult | None, list[Envelope], int]:
        """In one round trip: the result recorded for ``command_id`` (None if never applied or
        not asked), the envelopes with seq > ``after`` (what a cached state lacks) and the
        stream's version. Raises ``GameNotFound`` for an unknown game."""
        ...

    def put_views(self, game_id: str, position: int, views: Mapping[str, str]) -> list[str]:
        """Store views computed at stream ``position`` outside an append (e.g. a rebuild).
        A view is only replaced by one at the same or a later position; returns the names
        written. Raises ``GameNotFound``, or ``InvalidBatch`` if position > version."""
        ...

    def get_view(self, game_id: str, name: str) -> tuple[int, str] | None:
        """``(position, json)`` of a stored view, None if never stored. Raises ``GameNotFound``."""
        ...

    def views_at(
        self, game_id: str, names: Sequence[str]
    ) -> tuple[int, list[tuple[int, str] | None]]:
        """The game's version and the stored views ``names`` (``get_view`` of each, None for one
        never stored), read together in one round trip (a view whose position is below the
        version is behind the stream). Raises ``GameNotFound``."""
        ...

    def create_game(
        self,
        game_id: str,
        created_at: str,
        command_id: str,
        envelopes: Sequence[Envelope],
        *,
        views: Mapping[str, str] | None = None,
        status: str = "active",
        idle_seconds: int = 0,
        finished_seconds: int = 0,
        notices: Sequence[tuple[str, str]] | None = None,
    ) -> AppendResult:
        """Create a game all or nothing: its first events, views, status, creation time,
        retention (as ``set_retention``) and lobby entry (on a Redis Cluster the lobby comes right
        after the game's own keys). A retry with the same game and command id answers the first
        result (``duplicate``); another game of that id is a ``ConcurrencyConflict``."""
        ...

    def list_games(self, status: str | None = None, limit: int = 100) -> list[GameEntry]:
        """Lobby index, newest first, optionally only games with ``status``."""
        ...

    def notice_stream(self, name: str) -> str:
        """The stream that an append's ``notices`` for the bot account ``name`` go to."""
        ...

    @property
    def seed_holds(self) -> SeedHoldStore:
        """The seeds held back on this store for duplicate sets (``events.games.seeds``)."""
        ...

    def confirm_replicated(self, game_id: str) -> None:
        """Return once the replicas the store waits for hold everything of the game (at once
        where it waits for none): before answering a command recorded earlier, whose first
        attempt may be on the master alone."""
        ...


def check_game_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not _GAME_ID_RE.fullmatch(game_id):
        raise InvalidBatch(
            f"game id {game_id!r} is invalid; use 1-128 characters from A-Z a-z 0-9 _ . : - "
            f"(a uuid4 hex is a good choice)"
        )


def check_command_id(command_id: str) -> None:
    if not isinstance(command_id, str) or not command_id or len(command_id) > _MAX_COMMAND_ID:
        raise InvalidBatch(
            f"command id {command_id!r} is invalid; give each command a unique non-empty string "
            f"of at most {_MAX_COMMAND_ID} characters (the client's idempotency key or a uuid)"
        )


def check_status(status: str | None) -> None:
    if status is not None and (not isinstance(status, str) or not _STATUS_RE.match(status)):
        raise InvalidBatch(
            f"status {status!r} is invalid; use a short word such as 'open', 'active' or "
            f"'finished' (1-64 characters from A-Z a-z 0-9 _ . : -), or None to leave it as is"
        )


def check_views(views: Mapping[str, str]) -> None:
    for name, text in views.items():
        if not isinstance(name, str) or not name:
            raise InvalidBatch(f"view name {name!r} is invalid; use a non-empty string")
        if not isinstance(text, str):
            raise InvalidBatch(
                f"view {name!r} is a {type(text).__name__}; pass it already rendered to a JSON "
                f"string (json.dumps) so the store can write it as is"
            )


def validate_batch(
    game_id: str, expected_version: int, command_id: str, envelopes: Sequence[Envelope]
) -> tuple[str, str, list[str]]:
    """Check a batch before writing; return ``(first prev_hash, last hash, envelope JSONs)``.

    For an empty batch both hashes are empty strings (the head is not checked or changed).
    """
    check_game_id(game_id)
    check_command_id(command_id)
    if not isinstance(expected_version, int) or expected_version < 0:
        raise InvalidBatch(
            f"expected_version {expected_version!r} is invalid; pass the version the command was "
            f"decided on (0 for a new game)"
        )
    for env in envelopes:
        if not isinstance(env, Envelope):
            raise InvalidBatch(
                f"append takes Envelope objects, got {type(env).__name__}; wrap engine events "
                f"with events.store.seal_batch(...) first"
            )
    texts: list[str] = []
    prev = envelopes[0].prev_hash if envelopes else ""
    if expected_version == 0 and envelopes and prev != GENESIS_HASH:
        raise InvalidBatch(
            f"the first envelope of game {game_id!r} must have prev_hash=GENESIS_HASH"
        )
    link = prev
    for i, env in enumerate(envelopes, start=1):
        want = expected_version + i
        if env.seq != want:
            raise InvalidBatch(
                f"envelope {i} of the batch has seq {env.seq}, expected {want}; seal the batch "
                f"with seq numbers expected_version+1, +2, ..."
            )
        if env.game_id != game_id or env.command_id != command_id:
            raise InvalidBatch(
                f"envelope seq {env.seq} belongs to game {env.game_id!r} / command "
                f"{env.command_id!r}, not {game_id!r} / {command_id!r}; seal it for this append"
            )
        try:
            check_visibility(env.visibility)
            if env.ts != envelopes[0].ts or i == 1:
                check_timestamp(env.ts)
        except ValueError as exc:
            raise InvalidBatch(f"envelope seq {env.seq}: {exc}") from None
        if not isinstance(env.actor, str) or not env.actor:
            raise InvalidBatch(
                f"envelope seq {env.seq} has actor {env.actor!r}; name who caused it "
                f"('seat:N', 'bot:<name>', 'timeout' or 'system')"
            )
        if env.prev_hash != link:
            raise InvalidBatch(
                f"envelope seq {env.seq} does not link to the previous envelope's hash; seal the "
                f"batch with seal_batch so the chain is consistent"
            )
        texts.append(env.checked_json())
        link = env.hash
    return prev, (link if envelopes else ""), texts
