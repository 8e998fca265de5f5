"""The shapes of the commands a seat may submit, one schema per decision kind.

These check structure only (fields, types, no unknown fields); whether a command is legal now is
the engine's business (``engine.IllegalCommand``, answered as a 422 problem with its ``code``).
The kinds and fields are the ones docs/scenarios.md lists and openapi.yaml describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields
from marshmallow.validate import Length, OneOf

from engine.catalogue import PHASES
from service.fields import StrictBool, StrictInt, StrictList, StrictStr, die_id, tile_id

PHASE = OneOf(PHASES, error="must be one of " + ", ".join(PHASES))
SIDES = ("development", "world")


class _Strict(Schema):
    class Meta:
        unknown = RAISE


def _dice(required: bool = False) -> StrictList:
    return StrictList(die_id(), required=required)


def _tiles(required: bool = False) -> StrictList:
    return StrictList(tile_id(), required=required)


class _Kind(_Strict):
    kind = StrictStr(required=True)


class StartTiles(_Kind):
    development = tile_id()
    #: Ambition: the die each removing start tile takes, in order (default: a Home die from the
    #: Citizenry)
    remove = StrictList(die_id(), validate=Length(max=4))


class Move(_Strict):
    die = die_id()
    to = StrictStr(required=True, validate=PHASE)


class Select(_Strict):
    die = die_id()
    phase = StrictStr(required=True, validate=PHASE)


class ReassignUse(_Strict):
    via = StrictStr(required=True, validate=Length(min=1, max=64))
    park = die_id(required=False)
    moves = StrictList(fields.Nested(Move))


class Assign(_Kind):
    select = fields.Nested(Select, required=True)
    wild = StrictList(fields.Nested(Move))
    two_phase = StrictList(fields.Nested(Move))  # Ambition: a die showing two phases
    reassign = StrictList(fields.Nested(ReassignUse))
    talents = StrictList(fields.Nested(Move))


class Explore(_Kind):
    task = StrictStr(
        required=True,
        validate=OneOf(
            ("scout", "stock", "rearrange", "finish"),
            error="must be scout, stock, rearrange (Advanced Logistics) or finish",
        ),
    )
    explorer = die_id(required=False)
    abandon = _tiles()
    development = _tiles()
    world = _tiles()


class Placement(_Strict):
    tile = tile_id()
    as_ = StrictStr(
        required=True,
        data_key="as",
        attribute="as",
        validate=OneOf(SIDES, error="must be development or world"),
    )
    on_top = StrictBool()


class PlaceTiles(_Kind):
    placements = StrictList(fields.Nested(Placement), required=True)


class AbandonOne(_Kind):
    tile = tile_id()


class Discount(_Strict):
    tile = tile_id()
    via = StrictStr(required=True, validate=Length(min=1, max=64))
    die = die_id(required=False)


class Construct(_Kind):
    order = _dice(required=True)
    remove = _dice()
    returns = StrictList(StrictList(die_id()))
    stack_order = _dice()
    discounts = StrictList(fields.Nested(Discount))  # Ambition


class Good(_Strict):
    die = die_id()
    world = StrictStr(required=True, validate=Length(min=1, max=16))


class Produce(_Kind):
    goods = StrictList(fields.Nested(Good), required=True)


class ShipTask(_Strict):
    shipper = die_id()
    good = die_id()
    action = StrictStr(
        required=True, validate=OneOf(("trade", "consume"), error="must be trade or consume")
    )
    bankers = StrictBool()


class Ship(_Kind):
    tasks = StrictList(fields.Nested(ShipTask), required=True)


class Manage(_Kind):
    recruit = _dice()
    recall = _dice()


class Forecast(_Kind):
    """Ambition, Psi-Crystal Forecasters (at Reveal)."""

    phase = StrictStr(validate=PHASE)


class BuyVp(_Kind):
    """Ambition, Deficit Spending (when Ship ends)."""

    spend = StrictInt()
    first = StrictBool()


COMMAND_SCHEMAS: dict[str, type[Schema]] = {
    "start_tiles": StartTiles,
    "assign": Assign,
    "explore": Explore,
    "place_tiles": PlaceTiles,
    "abandon_one": AbandonOne,
    "develop": Construct,
    "settle": Construct,
    "produce": Produce,
    "ship": Ship,
    "manage": Manage,
    "forecast": Forecast,
    "buy_vp": BuyVp,
}
_INSTANCES = {k: v() for k, v in COMMAND_SCHEMAS.items()}


class CommandField(fields.Field):
    """A command object, checked by the schema of its ``kind``."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        if not isinstance(value, dict):
            raise ValidationError("must be an object with a 'kind'")
        kind = value.get("kind")
        schema = _INSTANCES.get(kind) if isinstance(kind, str) else None
        if schema is None:
            raise ValidationError(
                {
                    "kind": [
                        f"must be one of {', '.join(COMMAND_SCHEMAS)} (the 'kind' of the "
                        f"seat's decision in its view)"
                    ]
                }
            )
        return schema.load(value)

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value
