"""Errors the engine raises. Every message says what was wrong and what would be accepted."""

from __future__ import annotations

from typing import Any, NoReturn


class EngineError(Exception):
    """Base class for engine errors."""


class IllegalCommand(EngineError):
    """A command that the rules do not allow now.

    ``code`` is a stable machine-readable reason, ``field`` names the offending part of the
    command (for example ``"moves[1].die"``) and ``value`` the offending value (a die id, a tile
    id, a phase ...).
    """

    def __init__(self, code: str, message: str, field: str | None = None, value: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "value": self.value,
        }


def refuse(code: str, message: str, field: str | None = None, value: Any = None) -> NoReturn:
    """Refuse the command: raise IllegalCommand(code, message, field, value).

    Rules code reads ``if <the rule is broken>: refuse(...)``, one line per rule.
    """
    raise IllegalCommand(code, message, field, value)


class NotYourDecision(IllegalCommand):
    """The seat owes no decision of this kind now."""


class ChanceMismatch(EngineError):
    """A recorded chance outcome differs from what the game's seed produces (tampered log)."""


class InvalidEvent(EngineError):
    """An event cannot be folded into this state (wrong order, unknown type, corrupt log)."""
