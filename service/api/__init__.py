"""One blueprint per resource; ``BLUEPRINTS`` is what ``create_app`` registers."""

from __future__ import annotations

from flask import Blueprint

from service.api import (
    accounts,
    challenges,
    commands,
    docs,
    events,
    games,
    health,
    ladders,
    logs,
    meta,
    samples,
    seats,
)

BLUEPRINTS: list[Blueprint] = [
    meta.bp,
    health.bp,
    games.bp,
    seats.bp,
    commands.bp,
    events.bp,
    logs.bp,
    accounts.bp,
    ladders.bp,
    docs.bp,
    samples.bp,
    challenges.bp,
]
