"""Request parsing and response helpers shared by the blueprints.

``load_body`` accepts only JSON (415 otherwise), refuses malformed JSON (400) and validates with a
schema (422 with per-field errors); ``load_query`` validates the query string (400). Versions
travel as strong ETags ``"<version>"``; ``If-Match`` and ``If-None-Match`` take the same form.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import orjson
from flask import Response, request
from marshmallow import Schema, ValidationError

from service.errors import Problem, invalid_body, invalid_query

JSON = "application/json"


def _is_json(mimetype: str) -> bool:
    return mimetype == JSON or (mimetype.startswith("application/") and mimetype.endswith("+json"))


def read_json(optional: bool = False) -> Any:
    """The parsed JSON body (None for an empty optional body)."""
    raw = request.get_data(cache=True)  # raises 413 past the size limit
    if not raw.strip():
        if optional:
            return None
        raise Problem("malformed-request", "the request needs a JSON body (Content-Type: application/json)")
    if not _is_json(request.mimetype):
        raise Problem(
            "unsupported-media-type",
            f"the body must be JSON with Content-Type: application/json, not {request.mimetype or 'none'!r}",
        )
    try:
        return orjson.loads(raw)  # the fast parser; NaN and Infinity are not JSON to it either
    except orjson.JSONDecodeError:
        pass
    try:  # the standard parser decides what orjson refused (its messages, integers past 64 bits)
        text = raw.decode("utf-8")
        return json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Problem("malformed-request", f"the body is not valid JSON: {exc}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_body(schema: Schema, optional: bool = False) -> dict[str, Any]:
    data = read_json(optional)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise Problem("invalid-request", "the body must be a JSON object", errors={"body": ["must be an object"]})
    try:
        out: dict[str, Any] = schema.load(data)
    except ValidationError as exc:
        raise invalid_body(exc) from None
    return out


def load_query(schema: Schema) -> dict[str, Any]:
    if not request.args:  # the common case: only the schema's defaults (computed once)
        try:
            return dict(_defaults(schema))
        except ValidationError as exc:  # a required parameter is missing
            raise invalid_query(exc) from None
    args: dict[str, Any] = {}
    for key in request.args:
        values = request.args.getlist(key)
        if len(values) > 1:
            raise Problem("invalid-parameters", f"{key}: give the parameter once",
                          errors={key: ["given more than once"]})  # fmt: skip
        args[key] = values[0]
    try:
        out: dict[str, Any] = schema.load(args)
    except ValidationError as exc:
        raise invalid_query(exc) from None
    return out


@functools.cache
def _defaults(schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = schema.load({})
    return out


def respond(schema: Schema, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    resp = Response(orjson.dumps(schema.dump(obj)), status=status, mimetype=JSON)
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def etag(version: int) -> str:
    return f'"{version}"'


def _parse_tag(header: str, raw: str) -> int:
    tag = raw.strip()
    if tag.startswith("W/"):
        tag = tag[2:]
    tag = tag.strip('"')
    if not tag.isdigit():
        raise Problem("malformed-request", f'{header} must be a game version such as "12" (the ETag of a view), not {raw!r}')
    return int(tag)


def if_match_version() -> int | None:
    """The version in ``If-Match`` (one ETag; ``*`` means any version), or None."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    if "," in raw:
        raise Problem("malformed-request", "If-Match must hold exactly one version, e.g. \"12\"")
    return _parse_tag("If-Match", raw)


def not_modified(version: int) -> bool:
    """Whether ``If-None-Match`` names this version (the client's copy is current)."""
    raw = request.headers.get("If-None-Match")
    if raw is None:
        return False
    for part in raw.split(","):
        p = part.strip()
        if p == "*":
            return True
        if p.startswith("W/"):
            p = p[2:]
        if p.strip('"') == str(version):
            return True
    return False


def not_modified_response(version: int) -> Response:
    resp = Response(status=304)
    resp.headers["ETag"] = etag(version)
    return resp
