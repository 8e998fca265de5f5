"""Determinized states for bot authors: ``GET /games/<id>/seats/<n>/samples?count=K``.

Only that seat's token (or the bot account seated there) may ask; the samples are drawn by
``engine.sampler`` from the seat's own view and nothing else, so they tell the seat nothing it
does not already know. Each is a full state in the engine's canonical JSON form
(``engine.to_dict``; ``engine.from_dict`` reads it back), ready for a search. ``seed`` makes the
answer reproducible; without it the server picks a fresh one and returns it. Rate-limited per
token (``LIMIT_SAMPLES``); at most ``MAX_SAMPLES`` states per request.
"""

from __future__ import annotations

import json
import secrets

from flask import Blueprint, Response
from marshmallow import Schema, fields
from marshmallow.validate import Length, Range

from engine.canonical import canonical_json
from engine.rng import Rng
from engine.sampler import Sampler, SamplerError
from service.auth import require_seat
from service.backend import backend
from service.http import load_query
from service.schemas.requests import Strict

MAX_SAMPLES = 20

bp = Blueprint("samples", __name__)


class SamplesQuerySchema(Strict):
    count = fields.Integer(strict=False, load_default=1, validate=Range(min=1, max=MAX_SAMPLES))
    seed = fields.String(validate=Length(min=1, max=100))


class SamplesSchema(Schema):
    game_id = fields.String()
    seat = fields.Integer()
    version = fields.Integer()
    seed = fields.String()
    samples = fields.List(fields.Dict())
    unsampled = fields.String(allow_none=True)


_query = SamplesQuerySchema()
_out = SamplesSchema()


@bp.get("/games/<gid:game_id>/seats/<int:seat>/samples")
def samples(game_id: str, seat: int) -> Response:
    args = load_query(_query)
    require_seat(game_id, seat)
    pos, text = backend().games.view(game_id, seat)
    seed = args.get("seed") or secrets.token_hex(16)
    unsampled = None
    try:
        sampler = Sampler(json.loads(text), Rng.from_seed(f"samples:{seed}"))
        states = [s.to_dict() for s in sampler.draws(args["count"])]
    except SamplerError as exc:  # the very rare Explore shortfall: no samples, and why
        states, unsampled = [], str(exc)
    body = {
        "game_id": game_id,
        "seat": seat,
        "version": pos,
        "seed": seed,
        "samples": states,
        "unsampled": unsampled,
    }
    # a sample's generator state is a big integer (beyond 64 bits: see engine.rng), which orjson
    # refuses; the engine's canonical JSON writes it exactly
    return Response(
        canonical_json(_out.dump(body)),
        mimetype="application/json",
        headers={"Cache-Control": "private, no-store"},
    )
