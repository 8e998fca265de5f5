"""The event envelope: what one stored event looks like, its canonical JSON and hash chain,
as the store writes and reads it.

The engine produces bare event dicts such as ``{"type": "DiceRolled", "v": 1, ...}``; the caller
wraps them (``seal_batch``) into envelopes carrying game id, sequence number, visibility, command
id, actor, timestamp and the hash chain, and hands those to an ``EventStore``.

Hash chain: ``hash = sha256(canonical_json(envelope without "hash"))``, where the body includes
``prev_hash`` (the previous envelope's ``hash``; ``GENESIS_HASH`` for seq 1). Canonical JSON is
``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`` encoded
as UTF-8. The hash covers the payload as written; a stored envelope is read back unchanged, so
``verify_chain`` runs on what the store returns.

The bytes are written by ``engine.canonical``, the project's one canonical JSON
(``tests/events/test_envelope_sealing.py`` checks them on whole games and on the edge cases).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import repeat
from operator import itemgetter
from typing import Any

import orjson

from engine.canonical import canonical_bytes, canonical_json
from events.errors import ChainBroken, InvalidBatch

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first envelope (seq 1) of every game."""

_VISIBILITY_RE = re.compile(r"^(public|server|seat:\d+)$")
_FIELDS = (
    "type",
    "schema_version",
    "game_id",
    "seq",
    "visibility",
    "command_id",
    "actor",
    "ts",
    "payload",
    "prev_hash",
    "hash",
)
_RESERVED_EVENT_KEYS = ("type", "v")
_field_values = itemgetter(*_FIELDS)
_new_object = object.__new__


def iso_utc(moment: datetime) -> str:
    """Format an aware datetime as the ISO-8601 UTC string envelopes carry (``...Z``)."""
    if moment.tzinfo is None:
        raise ValueError("iso_utc needs an aware datetime; pass datetime.now(UTC) or similar")
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def check_timestamp(ts: str) -> None:
    """Raise ValueError unless ``ts`` is an ISO-8601 timestamp in UTC."""
    try:
        parsed = datetime.fromisoformat(ts)
    except (TypeError, ValueError):
        raise ValueError(
            f"timestamp {ts!r} is not ISO-8601; pass the clock's time as iso_utc(now)"
        ) from None
    if parsed.tzinfo is None or parsed.utcoffset() != UTC.utcoffset(None):
        raise ValueError(f"timestamp {ts!r} is not in UTC; pass iso_utc(now), ending in 'Z'")


def check_visibility(visibility: str) -> None:
    """Raise ValueError unless ``visibility`` is "public", "server" or "seat:N"."""
    if not isinstance(visibility, str) or not _VISIBILITY_RE.match(visibility):
        raise ValueError(
            f"visibility {visibility!r} is invalid; use 'public', 'server' or 'seat:N'"
        )


@dataclass(frozen=True, slots=True)
class Envelope:
    """One stored event. ``seq`` is 1-based and contiguous within a game."""

    type: str
    schema_version: int
    game_id: str
    seq: int
    visibility: str
    command_id: str
    actor: str
    ts: str
    payload: dict[str, Any] = field(default_factory=dict)
    prev_hash: str = GENESIS_HASH
    hash: str = ""
    # canonical JSON computed when sealing; trusted by checked_json (see its docstring)
    _json: str | None = field(default=None, init=False, repr=False, compare=False)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_event(
        cls,
        event: Mapping[str, Any],
        *,
        game_id: str,
        seq: int,
        visibility: str,
        command_id: str,
        actor: str,
        ts: str,
        prev_hash: str,
    ) -> Envelope:
        """Wrap an engine event dict ``{"type": ..., "v": ..., **payload}`` and seal it."""
        if "type" not in event or not isinstance(event["type"], str):
            raise InvalidBatch(f"event {event!r} has no string 'type'; the engine must set it")
        version = event.get("v", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise InvalidBatch(
                f"event {event['type']} has schema version {version!r}; use int >= 1"
            )
        payload = {k: v for k, v in event.items() if k not in _RESERVED_EVENT_KEYS}
        env = cls(
            type=event["type"],
            schema_version=version,
            game_id=game_id,
            seq=seq,
            visibility=visibility,
            command_id=command_id,
            actor=actor,
            ts=ts,
            payload=payload,
            prev_hash=prev_hash,
        )
        body = env._body_bytes()
        digest = hashlib.sha256(body).hexdigest()
        object.__setattr__(env, "hash", digest)  # sealing a fresh object
        object.__setattr__(env, "_json", _splice_hash(body.decode("utf-8"), digest))
        return env

    # -- hashing --------------------------------------------------------------------------
    def body(self) -> dict[str, Any]:
        """Every field except ``hash``: what the hash covers."""
        return {
            "type": self.type,
            "schema_version": self.schema_version,
            "game_id": self.game_id,
            "seq": self.seq,
            "visibility": self.visibility,
            "command_id": self.command_id,
            "actor": self.actor,
            "ts": self.ts,
            "payload": self.payload,
            "prev_hash": self.prev_hash,
        }

    def _body_bytes(self) -> bytes:
        """The canonical JSON of ``body()`` (``engine.canonical``), or ``InvalidBatch``."""
        try:
            return canonical_bytes(self.body())
        except UnicodeEncodeError:  # text JSON holds but UTF-8 cannot (a lone surrogate)
            raise
        except (TypeError, ValueError) as exc:
            raise InvalidBatch(
                f"event {self.type} (seq {self.seq}) is not JSON-serialisable ({exc}); events "
                f"must hold only dicts, lists, str, int, float (finite), bool and None"
            ) from None

    def compute_hash(self) -> str:
        """sha256 (hex) of the canonical JSON of ``body()``."""
        return hashlib.sha256(self._body_bytes()).hexdigest()

    def sealed(self) -> Envelope:
        """A copy with ``hash`` computed from the current body."""
        body = self._body_bytes()
        digest = hashlib.sha256(body).hexdigest()
        env = replace(self, hash=digest)
        object.__setattr__(env, "_json", _splice_hash(body.decode("utf-8"), digest))
        return env

    # -- (de)serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = self.body()
        d["hash"] = self.hash
        return d

    def to_json(self) -> str:
        """Canonical JSON of the whole envelope (including ``hash``)."""
        return canonical_json(self.to_dict())

    def checked_json(self) -> str:
        """``to_json()``, guaranteed to match ``hash``; what ``append`` stores.

        An envelope sealed by ``from_event``/``seal_batch`` carries the JSON computed when it
        was sealed, and that is returned: the stored event is exactly what was hashed, even if
        the payload dict was (wrongly) mutated in place afterwards. Any other envelope (from
        ``from_dict``, ``replace``...) is re-encoded and checked; ``InvalidBatch`` if its hash is
        stale. Treat payloads as immutable once sealed.
        """
        if self._json is not None:
            return self._json
        body = self._body_bytes()
        if hashlib.sha256(body).hexdigest() != self.hash:
            raise InvalidBatch(
                f"envelope seq {self.seq} has a stale or missing hash; call .sealed() after "
                f"changing it (or build it with seal_batch)"
            )
        return _splice_hash(body.decode("utf-8"), self.hash)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Envelope:
        if cls is Envelope and type(d) is dict and len(d) == len(_FIELDS):
            # what cls(**d) does, without parsing keyword arguments: a dict with all 11 keys
            # (hence no other key) read back from the store
            try:
                values = _field_values(d)
            except KeyError:
                pass
            else:
                env = _new_object(cls)
                any(map(object.__setattr__, repeat(env), _FIELDS, values))
                object.__setattr__(env, "_json", None)
                return env
        try:
            return cls(**d)
        except TypeError:
            missing = [f for f in _FIELDS if f not in d]
            extra = [k for k in d if k not in _FIELDS]
            raise ValueError(
                f"envelope has missing fields {missing} / unknown fields {extra}; it was not "
                f"written by Envelope.to_json"
            ) from None

    @classmethod
    def from_json(cls, text: str | bytes) -> Envelope:
        try:
            data = orjson.loads(text)  # the fast parser; it refuses what json alone accepts
        except orjson.JSONDecodeError:  # (integers past 64 bits, NaN), so json decides then
            data = json.loads(text)
        return cls.from_dict(data)

    def event(self) -> dict[str, Any]:
        """The engine-facing event dict: ``{"type": ..., "v": ..., **payload}``."""
        return {"type": self.type, "v": self.schema_version, **self.payload}


def _splice_hash(body_json: str, digest: str) -> str:
    """Full canonical JSON from the body's: "hash" sorts between "game_id" and "payload", and
    inside canonical JSON strings every '"' is escaped, so the first ',"payload":' is the
    top-level key."""
    return body_json.replace(',"payload":', f',"hash":"{digest}","payload":', 1)


Visibility = str | Callable[[Mapping[str, Any]], str]


def seal_batch(
    events: Iterable[Mapping[str, Any]],
    *,
    game_id: str,
    expected_version: int,
    prev_hash: str,
    command_id: str,
    actor: str,
    ts: str,
    visibility: Visibility = "public",
) -> list[Envelope]:
    """Wrap one command's events into chained envelopes with seq ``expected_version + 1 ...``.

    ``prev_hash`` is the hash of the game's last stored envelope (``GENESIS_HASH`` for a new
    game; ``EventStore.head`` returns it). ``visibility`` is one string for all events or a
    function of the event dict.
    """
    check_timestamp(ts)
    out: list[Envelope] = []
    link = prev_hash
    for i, event in enumerate(events, start=1):
        vis = visibility(event) if callable(visibility) else visibility
        check_visibility(vis)
        env = Envelope.from_event(
            event,
            game_id=game_id,
            seq=expected_version + i,
            visibility=vis,
            command_id=command_id,
            actor=actor,
            ts=ts,
            prev_hash=link,
        )
        out.append(env)
        link = env.hash
    return out


def verify_chain(
    envelopes: Sequence[Envelope], prev_hash: str = GENESIS_HASH, first_seq: int = 1
) -> str:
    """Check seq contiguity, ``prev_hash`` links and every ``hash``; return the last hash.

    For a stream read from the start use the defaults; for a slice read ``after=n`` pass the
    hash of envelope ``n`` and ``first_seq=n + 1``. Raises ``ChainBroken``.
    """
    link = prev_hash
    for expected_seq, env in enumerate(envelopes, start=first_seq):
        if env.seq != expected_seq:
            raise ChainBroken(env.game_id, env.seq, f"expected seq {expected_seq}")
        if env.prev_hash != link:
            raise ChainBroken(env.game_id, env.seq, "prev_hash does not match the previous hash")
        if env.compute_hash() != env.hash:
            raise ChainBroken(env.game_id, env.seq, "hash does not match the envelope's content")
        link = env.hash
    return link
