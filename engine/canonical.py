"""The project's one canonical JSON: how every event, envelope, log line, hash input and stored
view is written, so that the same value always gives the same bytes.

The format is the standard library's ``json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)`` encoded as UTF-8: keys sorted by code point, no spaces,
text as it is (only '"', '\\' and control characters escaped), no NaN or infinities (refused with
``ValueError``), and what JSON cannot hold refused with ``TypeError``. The golden logs and every
stored hash are these bytes.

``canonical_bytes`` has orjson write them when the value holds only dicts, lists, tuples, text,
whole numbers, booleans and None - every event and view the game makes - for which orjson writes
exactly these bytes or refuses (integers past 64 bits, keys that are not text, lone surrogates,
nesting past 254 levels). Anything else (floats, which orjson writes its own way, and types the
standard library refuses but orjson writes, such as UUIDs and enums) and anything orjson refuses
goes to the standard library. That is about twice as fast on a game's events and views
(``bench/canonical_json.py`` prints the figures). ``orjson.Fragment`` (JSON this module wrote
before, spliced into a larger value by the projections) is written as it is.
``canonical_json`` is the same text as ``str``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: what orjson writes byte for byte as the standard library does, or refuses
_LEAVES = frozenset((str, int, bool, type(None), orjson.Fragment))
_CONTAINERS = frozenset((dict, list, tuple))


def _unsplice(obj: Any) -> Any:
    """The standard library's ``default``: a fragment is the value its text stands for."""
    if type(obj) is orjson.Fragment:
        return orjson.loads(orjson.dumps(obj))
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_REFERENCE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_unsplice
)


#: orjson refuses nesting deeper than this; a value this deep (or circular) goes to the standard
#: library, as does one with more containers than ``_MAX_CONTAINERS`` (it would take as long to
#: check as to write)
_MAX_DEPTH = 254
_MAX_CONTAINERS = 100_000


def _plain(obj: Any) -> bool:
    """Whether a dict, list or tuple holds only ``_LEAVES`` and such containers, at any depth."""
    level, depth, seen = [obj], 1, 1
    leaves, containers = _LEAVES, _CONTAINERS
    while level:
        inner: list[Any] = []
        push = inner.append
        for container in level:
            for value in container.values() if type(container) is dict else container:
                kind = type(value)
                if kind in leaves:
                    continue
                if kind in containers:
                    push(value)
                    continue
                return False
        depth += 1
        seen += len(inner)
        if inner and (depth > _MAX_DEPTH or seen > _MAX_CONTAINERS):
            return False
        level = inner
    return True


def canonical_bytes(obj: Any) -> bytes:
    """The canonical JSON of ``obj`` as UTF-8 bytes (see the module docstring), or its error."""
    kind = type(obj)
    if kind in _LEAVES or (kind in _CONTAINERS and _plain(obj)):
        try:
            return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass
    return _REFERENCE.encode(obj).encode("utf-8")


def canonical_json(obj: Any) -> str:
    """The canonical JSON of ``obj`` as text: ``canonical_bytes(obj)`` decoded."""
    return canonical_bytes(obj).decode("utf-8")
