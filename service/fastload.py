"""A lighter ``schema.load`` for the hottest body, a command's: a plan compiled once from the
marshmallow schema itself.

``compile_schema(schema)`` walks the schema's fields (the strict fields of ``service.fields``,
nested schemas, lists, and a command's ``CommandField``, which picks the schema of its ``kind``)
and returns a loader that gives, for a body it is sure of, exactly what ``schema.load`` would:
the same keys (attribute names, in the schema's order), the same values, the same validators
run (the schema's own validator objects). For anything else - a wrong type, a missing or unknown
field, a value a validator refuses, a whole number written ``3.0`` - it returns ``MISS``, and the
caller runs ``schema.load``, whose errors are the answer. So the lighter path never decides a
refusal and never accepts what the schema would refuse (tests/service/test_fastload.py compares
the two on every command of many games and on mutated bodies).

A schema it cannot mirror (hooks, defaults, other field types, ``unknown`` other than RAISE) raises
``Uncompilable`` when compiled: ``loader_for`` then gives None and the schema is used alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from marshmallow import RAISE, Schema, fields, missing

from service.fields import StrictBool, StrictInt, StrictList, StrictStr

#: "not sure: let the schema decide"
MISS: Any = object()
Loader = Callable[[Any], Any]


class Uncompilable(Exception):
    """The schema uses something the compiled loader does not mirror."""


@functools.cache
def loader_for(schema: Schema) -> Loader | None:
    """The compiled loader of ``schema`` (compiled once), or None if it cannot be compiled."""
    try:
        return compile_schema(schema)
    except Uncompilable:
        return None


def compile_schema(schema: Schema) -> Loader:
    if any(schema._hooks.values()) or schema.unknown != RAISE or schema.many:
        raise Uncompilable(f"{type(schema).__name__}: hooks, many or unknown != RAISE")
    plan: list[tuple[str, str, bool, Loader]] = []
    for name, f in schema.load_fields.items():
        if f.load_default is not missing or f.allow_none:
            raise Uncompilable(f"{type(schema).__name__}.{name}: a default or None allowed")
        key = f.data_key or name
        plan.append((key, f.attribute or name, f.required, compile_field(f)))
    keys = frozenset(key for key, _attr, _req, _load in plan)

    def load(data: Any) -> Any:
        if type(data) is not dict or not keys.issuperset(data):
            return MISS
        out = {}
        for key, attr, required, load_field in plan:
            if key in data:
                value = load_field(data[key])
                if value is MISS:
                    return MISS
                out[attr] = value
            elif required:
                return MISS
        return out

    return load


def _validated(f: fields.Field, load: Loader) -> Loader:
    validators = list(f.validators)
    if not validators:
        return load

    def checked(value: Any) -> Any:
        out = load(value)
        if out is MISS:
            return MISS
        for validator in validators:
            try:
                if validator(out) is False:
                    return MISS
            except Exception:  # noqa: BLE001 - the schema will say what is wrong
                return MISS
        return out

    return checked


def _of_type(kind: type) -> Loader:
    def load(value: Any) -> Any:
        return value if type(value) is kind else MISS

    return load


def compile_field(f: fields.Field) -> Loader:
    from service.schemas.commands import CommandField

    kind = type(f)
    if kind is StrictInt:
        return _validated(f, _of_type(int))  # 3.0 and True: the schema's business
    if kind is StrictStr:
        return _validated(f, _of_type(str))
    if kind is StrictBool:
        return _validated(f, _of_type(bool))
    if kind is StrictList:
        assert isinstance(f, StrictList)
        inner = compile_field(f.inner)

        def load_list(value: Any) -> Any:
            if type(value) is not list:
                return MISS
            out = [inner(x) for x in value]
            return MISS if any(x is MISS for x in out) else out

        return _validated(f, load_list)
    if kind is fields.Nested:
        assert isinstance(f, fields.Nested)
        if f.many or not isinstance(f.schema, Schema):
            raise Uncompilable("a nested list of schemas")
        return _validated(f, compile_schema(f.schema))
    if kind is CommandField:
        return _validated(f, _command_loader())
    raise Uncompilable(f"field type {kind.__name__}")


@functools.cache
def _command_loader() -> Loader:
    from service.schemas.commands import _INSTANCES

    by_kind = {k: compile_schema(schema) for k, schema in _INSTANCES.items()}

    def load(value: Any) -> Any:
        if type(value) is not dict:
            return MISS
        kind = value.get("kind")
        loader = by_kind.get(kind) if type(kind) is str else None
        return MISS if loader is None else loader(value)

    return load
