"""Request schemas: bodies and query strings. Every one refuses unknown fields.

Bodies are JSON and use the strict fields (no coercion); query strings are text, so their numbers
are parsed from strings but still range-checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validates_schema
from marshmallow.validate import Length, OneOf, Range, Regexp

from events.games.time_control import MAX_BOT_PACE
from service.fields import StrictBool, StrictInt, StrictList, StrictNumber, StrictStr
from service.schemas.commands import CommandField

#: the largest integer JSON carries exactly (also far below Redis stream ids' 64-bit limit)
MAX_SEQ = 2**53 - 1
#: the expansions a table may ask for; Ambition is played only when the host installed its
#: component file (``RFG_AMBITION_COMPONENTS``; otherwise 422 ``ambition-unavailable``)
KNOWN_EXPANSIONS: tuple[str, ...] = ("ambition",)
COMMAND_ID = Regexp(
    r"^[A-Za-z0-9_.:~-]{1,128}$",
    error="must be 1-128 characters from A-Z a-z 0-9 _ . : ~ - (a uuid4 is a good choice)",
)


class Strict(Schema):
    class Meta:
        unknown = RAISE


class SeatConfigSchema(Strict):
    kind = StrictStr(required=True, validate=OneOf(("human", "bot"), error="must be human or bot"))
    bot = StrictStr()

    @validates_schema
    def _bot_named(self, data: dict[str, Any], **kwargs: Any) -> None:
        from bots.base import bot_names

        names = bot_names()
        if data.get("kind") == "bot":
            if data.get("bot") not in names:
                raise ValidationError(
                    f"a bot seat names a built-in bot: one of {names} (GET /bots)", "bot"
                )
        elif "bot" in data:
            raise ValidationError("only a seat of kind 'bot' names a bot", "bot")


class GameOptionsSchema(Strict):
    first_game = StrictBool()
    expansions = StrictList(StrictStr(), validate=Length(max=8))
    #: Ambition's optional objectives (with ``expansions: ["ambition"]`` only)
    objectives = StrictBool()

    @validates_schema
    def _known_expansions(self, data: dict[str, Any], **kwargs: Any) -> None:
        names = data.get("expansions", [])
        for name in names:
            if name not in KNOWN_EXPANSIONS:
                raise ValidationError(
                    f"unknown expansion {name!r}; the expansions are {list(KNOWN_EXPANSIONS)}",
                    "expansions",
                )
        if len(set(names)) != len(names):
            raise ValidationError("names an expansion twice", "expansions")
        if "objectives" in data and "ambition" not in names:
            raise ValidationError(
                "objectives are part of the Ambition expansion: send expansions: ['ambition'] "
                "too, or leave out objectives",
                "objectives",
            )


def engine_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's options for a table's (``GameOptionsSchema``) options: ``first_game``, and
    ``expansions: ["ambition"]`` -> ``ambition: true`` with ``objectives`` (default false)."""
    out = {k: options[k] for k in ("first_game",) if k in options}
    if "ambition" in options.get("expansions", ()):
        out["ambition"] = True
        out["objectives"] = bool(options.get("objectives", False))
    return out


MAX_SECONDS = 30 * 24 * 3600


def _seconds() -> StrictNumber:
    return StrictNumber(validate=Range(min=0, max=MAX_SECONDS))


class TimeControlSchema(Strict):
    """Seconds; see events/games/time_control.py: deadline = start + per_decision + bank left."""

    per_decision = _seconds()
    bank = _seconds()
    increment = _seconds()
    bank_max = _seconds()


class CreateGameSchema(Strict):
    seats = StrictList(
        fields.Nested(SeatConfigSchema),
        required=True,
        validate=Length(min=2, max=5, error="a game has 2 to 5 seats"),
    )
    options = fields.Nested(GameOptionsSchema)
    seed = StrictStr(validate=Length(min=1, max=200))
    time_control = fields.Nested(TimeControlSchema)
    timeout_policy = StrictStr(
        validate=OneOf(
            ("heuristic", "ismcts", "minimal"), error="must be heuristic, ismcts or minimal"
        )
    )
    abandon_after = StrictInt(validate=Range(min=0, max=1000))
    #: after ``abandon_after`` timeouts in a row: true, a bot takes the seat for good; false
    #: (the default), the seat is away until its player comes back (events.games.time_control)
    hand_over = StrictBool()
    #: the least time between two bot decisions, so a person can follow the bots (events.games.time_control)
    bot_pace_seconds = StrictNumber(validate=Range(min=0, max=MAX_BOT_PACE))


class ClaimSeatSchema(Strict):
    """Rotating a seat's token takes no parameters; an empty object (or no body) is accepted."""


#: characters a display name (or a decline's text) may not hold: control characters (Cc), format characters (Cf:
#: the bidi overrides and isolates, zero-width joiners, soft hyphens) that can make a name
#: read as another, surrogates and unassigned or private-use code points, and separators other
#: than the plain space (line and paragraph separators, no-break spaces)
NOT_PRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
NAME_MAX = 24


class DisplayName(StrictStr):
    """A person's name at the table: trimmed, 1 to 24 characters, printable, single spaces."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> Any:
        import unicodedata

        name = super()._deserialize(value, attr, data, **kwargs)
        name = unicodedata.normalize("NFC", name).strip()
        if not name:
            raise ValidationError("must not be empty: type the name the other players will see")
        if len(name) > NAME_MAX:
            raise ValidationError(f"must be at most {NAME_MAX} characters, not {len(name)}")
        for ch in name:
            cat = unicodedata.category(ch)
            if cat in NOT_PRINTABLE or (cat == "Zs" and ch != " "):
                raise ValidationError(
                    f"must hold only printable characters and plain spaces, not "
                    f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')}); type the name again"
                )
        if "  " in name:
            raise ValidationError("must not hold two spaces in a row")
        return name


class ClaimSeatRequestSchema(Strict):
    """Claiming a seat: the name the table shows for it (optional: "Seat <n>" without one) and
    the seat's invite code when the host invited someone to it (``invite``), or the seat's move
    code when its holder moves it to this device (``move``)."""

    name = DisplayName()
    invite = StrictStr(
        validate=Regexp(
            r"^[A-Za-z0-9_-]{16,128}$",
            error="must be the invite code from the invite link (letters, digits, - and _)",
        )
    )
    move = StrictStr(
        validate=Regexp(
            r"^[A-Za-z0-9_-]{16,128}$",
            error="must be the move code from the move link (letters, digits, - and _)",
        )
    )

    @validates_schema
    def _one_code(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "invite" in data and "move" in data:
            raise ValidationError("give either an invite code or a move code, not both", "move")


class InviteRequestSchema(Strict):
    """``replace``: true to invite someone anew to a claimed seat, revoking its token (the
    host re-invites a friend who lost their device); an empty object (or no body) invites to an
    open seat only."""

    replace = StrictBool(load_default=False)


class MoveRequestSchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class ResignRequestSchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class AbandonRequestSchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class AbortRequestSchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class BackRequestSchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class CommandRequestSchema(Strict):
    command_id = StrictStr(required=True, validate=COMMAND_ID)
    expected_version = StrictInt(validate=Range(min=0, max=MAX_SEQ))
    decision_id = StrictInt(validate=Range(min=0, max=MAX_SEQ))
    command = CommandField(required=True)


class ListGamesQuerySchema(Strict):
    status = fields.String(validate=OneOf(("active", "finished")))
    players = fields.Integer(strict=False, validate=Range(min=2, max=5))
    created_after = fields.AwareDateTime(format="iso", default_timezone=UTC)
    created_before = fields.AwareDateTime(format="iso", default_timezone=UTC)
    limit = fields.Integer(strict=False, load_default=20, validate=Range(min=1, max=100))
    cursor = fields.String(validate=Length(min=1, max=300))


class FeedQuerySchema(Strict):
    after = fields.Integer(strict=False, load_default=0, validate=Range(min=0, max=MAX_SEQ))
    limit = fields.Integer(strict=False, load_default=100, validate=Range(min=1, max=1000))


class StreamQuerySchema(Strict):
    after = fields.Integer(strict=False, load_default=0, validate=Range(min=0, max=MAX_SEQ))


class ViewQuerySchema(Strict):
    """A view now, or (``at``) the view at event ``at`` of a finished game's log (a replay step;
    ``service.api.steps`` checks it against the log's length)."""

    at = fields.Integer(strict=False, validate=Range(min=1, max=MAX_SEQ))


class EmptyQuerySchema(Strict):
    """Endpoints without query parameters refuse unknown ones too."""


# --- bot accounts and ladders -----------------------------------------------------------------
LADDER_NAME = Regexp(
    r"^[A-Za-z0-9_.-]{1,64}$", error="must be 1-64 letters, digits, '_', '.' or '-'"
)


class RegisterBotSchema(Strict):
    name = StrictStr(required=True, validate=Length(1, 64))
    description = StrictStr(load_default="", validate=Length(0, 500))
    contact = StrictStr(required=True, validate=Length(1, 200))


class CreateLadderSchema(Strict):
    name = StrictStr(required=True, validate=LADDER_NAME)
    players = StrictList(
        StrictInt(validate=Range(2, 5)), load_default=lambda: [4], validate=Length(1, 4)
    )
    concurrency = StrictInt(load_default=4, validate=Range(1, 1000))
    duplicate = StrictBool(load_default=False)
    time_control = fields.Nested(TimeControlSchema, load_default=dict)
    open = StrictBool(load_default=False)


class AddEntrantSchema(Strict):
    entrant = StrictStr(required=True, validate=LADDER_NAME)
    bot = StrictStr()
    account = StrictStr(
        validate=Regexp(r"^[0-9a-f]{16}$", error="must be a bot account id (16 hex digits)")
    )

    @validates_schema
    def _one_of(self, data: dict[str, Any], **kwargs: Any) -> None:
        from bots.base import bot_names

        if ("bot" in data) == ("account" in data):
            raise ValidationError(
                "give either bot (a built-in bot) or account (a bot account id)", "bot"
            )
        if "bot" in data and data["bot"] not in bot_names():
            raise ValidationError(f"a built-in bot: one of {bot_names()} (GET /bots)", "bot")


class LadderGamesQuerySchema(Strict):
    status = fields.String(validate=OneOf(("active", "finished")))
    limit = fields.Integer(strict=False, load_default=20, validate=Range(min=1, max=100))
    cursor = fields.String(
        validate=Regexp(r"^[0-9]{1,15}$", error="not a cursor this API issued; use next_cursor")
    )


class AccountGamesQuerySchema(Strict):
    status = fields.String(
        validate=OneOf(("active", "finished"), error="must be active or finished (or left out)")
    )
    limit = fields.Integer(strict=False, load_default=20, validate=Range(min=1, max=100))
    #: checked as the lobby's (``service.lobby.decode_cursor``)
    cursor = fields.String(validate=Length(min=1, max=300))


class UpdateLadderSchema(Strict):
    paused = StrictBool()
    concurrency = StrictInt(validate=Range(1, 1000))
    open = StrictBool()


class JoinLadderSchema(Strict):
    ladder = StrictStr(required=True, validate=LADDER_NAME)
