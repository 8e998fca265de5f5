"""Strict marshmallow fields for JSON input: no coercion.

marshmallow's stock fields coerce (``"3"`` -> 3, ``"yes"`` -> True, ``True`` -> 1). A game API
should refuse such input with a precise message instead, so every request schema uses these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import ValidationError, fields
from marshmallow.validate import Range


class StrictInt(fields.Integer):
    """A JSON integer: not a bool, a fraction or a numeric string. ``3.0`` is the integer 3, as in
    JSON Schema (some JSON encoders write whole numbers that way)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError(f"must be an integer, not {type(value).__name__}")
        return value  # already what Integer would make of it (validators still run)


class StrictBool(fields.Boolean):
    """JSON ``true`` or ``false`` only."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if not isinstance(value, bool):
            raise ValidationError(f"must be true or false, not {type(value).__name__}")
        return value


class StrictStr(fields.String):
    """A JSON string (marshmallow's String already refuses other types; this names the type)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if not isinstance(value, str):
            raise ValidationError(f"must be a string, not {type(value).__name__}")
        return value


class StrictList(fields.List):
    """A JSON array (refuses a string or an object where a list is expected)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if not isinstance(value, list):
            raise ValidationError(f"must be an array, not {type(value).__name__}")
        return super()._deserialize(value, attr, data, **kwargs)


def die_id(**kwargs: Any) -> StrictInt:
    """A die id (0-110 in the base game, more with Ambition), a phantom worker id (1000 and up)
    or an Ambition talent counter (2000 and up)."""
    kwargs.setdefault("required", True)
    return StrictInt(validate=Range(min=0), **kwargs)


def tile_id(**kwargs: Any) -> StrictInt:
    """A game tile number (1-55 in the base game)."""
    kwargs.setdefault("required", True)
    return StrictInt(validate=Range(min=1), **kwargs)


class StrictNumber(fields.Float):
    """A JSON number (integer or decimal): not a bool or a numeric string."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError(f"must be a number, not {type(value).__name__}")
        return value
