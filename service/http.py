"""Request parsing and response helpers shared by the blueprints.

``load_body`` accepts only JSON (415 otherwise), refuses malformed JSON (400: bad syntax, nesting
past ``MAX_DEPTH``, strings that are not Unicode such as a lone surrogate ``"\\ud800"``, ``null``
for an object) and validates with a schema (422 with per-field errors); ``load_query`` validates
the query string (400). Versions travel as strong ETags ``"<version>"``; ``If-Match`` and
``If-None-Match`` take the same form.

``init_app`` makes every body obey its size limit however it is sent (``ApiRequest``: a chunked
body past ``max_content_length`` is 413, not cut short) and refuses a body declared in a charset
other than UTF-8 (415).
"""

from __future__ import annotations

import functools
import json
from typing import IO, Any, cast

import orjson
from flask import Flask, Request, Response, current_app, request
from marshmallow import Schema, ValidationError
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream

from service.errors import Problem, invalid_body, invalid_query

JSON = "application/json"
#: the deepest nesting of arrays and objects a JSON body may have (far past what any body of
#: the API needs; well within what the parser's recursion allows)
MAX_DEPTH = 512


class _AtMost(LimitedStream):
    """A body stream of unknown length (chunked) that may hold at most ``most`` bytes: reading
    past them raises the 413 problem (werkzeug's own maximum stops reading there, silently)."""

    def __init__(self, stream: IO[bytes], most: int) -> None:
        super().__init__(stream, most + 1, is_max=True)
        self.most = most

    def readinto(self, b: Any) -> int | None:  # (every read of a LimitedStream comes here)
        n = super().readinto(b)
        if self.tell() > self.most:  # a Problem: readers that catch other errors let it through
            raise Problem(
                "payload-too-large",
                f"the body is larger than {self.most} bytes; send a smaller one",
                max_bytes=self.most,
            )
        return n


#: endpoints whose bodies have their own size limit (config key) instead of MAX_CONTENT_LENGTH
BODY_LIMITS = {"logs.verify": "REPLAY_MAX_BYTES"}


class ApiRequest(Request):
    """Flask's request, whose body stream enforces ``max_content_length`` on chunked bodies too
    (413 instead of a body cut short at the limit)."""

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        if (
            self.content_length is None
            and limit is not None
            and "wsgi.input_terminated" in self.environ
            and not self.shallow
        ):
            return cast(IO[bytes], _AtMost(self.environ["wsgi.input"], limit))
        return super().stream


def _body_limit() -> None:
    """An endpoint's own body limit (``BODY_LIMITS``) for this request."""
    key = BODY_LIMITS.get(request.endpoint or "")
    if key is not None:
        request.max_content_length = int(current_app.config[key])


def current_request() -> Request:
    """The request being served, looked up once: every attribute read through Flask's
    ``request`` proxy looks the context up again."""
    req: Request = request._get_current_object()  # type: ignore[attr-defined]
    return req


def _check_charset() -> None:
    # a Content-Type without ";" has no parameters (werkzeug's parse_options_header): most
    # requests, GETs without a body included, need no parse; the header is where
    # request.headers reads it
    if ";" not in request.environ.get("CONTENT_TYPE", ""):
        return
    charset = request.mimetype_params.get("charset")
    if charset is not None and charset.strip().lower() not in ("utf-8", "utf8"):
        raise Problem(
            "unsupported-media-type",
            f"the body is declared as charset={charset!r}; send it as UTF-8 "
            f"(charset=utf-8, or no charset)",
        )


def init_app(app: Flask) -> None:
    app.request_class = ApiRequest
    app.before_request(_body_limit)
    app.before_request(_check_charset)


def _is_json(mimetype: str) -> bool:
    return mimetype == JSON or (mimetype.startswith("application/") and mimetype.endswith("+json"))


def read_json(optional: bool = False) -> Any:
    """The parsed JSON body (None for an empty optional body)."""
    req = current_request()
    raw = req.get_data(cache=True)  # raises 413 past the size limit
    if not raw.strip():
        if optional:
            return None
        raise Problem(
            "malformed-request", "the request needs a JSON body (Content-Type: application/json)"
        )
    mimetype = req.mimetype
    if not _is_json(mimetype):
        raise Problem(
            "unsupported-media-type",
            f"the body must be JSON with Content-Type: application/json, not {mimetype or 'none'!r}",
        )
    # (brackets outnumbering the limit is what any deeper nesting needs: only then scanned)
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth_over(raw, MAX_DEPTH):
        raise Problem(
            "malformed-request",
            f"the body nests arrays and objects more than {MAX_DEPTH} deep; send a flatter "
            "document",
        )
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Problem("malformed-request", f"the body is not valid JSON: {exc}") from None
    if b"\\u" in raw:  # a lone UTF-16 surrogate ("\ud800") can only come as such an escape
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise Problem(
                "malformed-request",
                "a string in the body is not valid Unicode (a lone "
                "UTF-16 surrogate such as \\ud800); send real characters, surrogates "
                "only in pairs",
            ) from None
    return data


def _depth_over(raw: bytes, limit: int) -> bool:
    """Whether the JSON text nests brackets more than ``limit`` deep (strings skipped)."""
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_body(schema: Schema, optional: bool = False) -> dict[str, Any]:
    """The body as ``schema`` loads it (422 with per-field errors)."""
    data = read_json(optional)
    if data is None and request.get_data(cache=True).strip():
        raise Problem(
            "malformed-request",
            "the body is null; send a JSON object (or no body where it is optional)",
        )
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise Problem(
            "invalid-request",
            "the body must be a JSON object",
            errors={"body": ["must be an object"]},
        )
    try:
        out: dict[str, Any] = schema.load(data)
    except ValidationError as exc:
        raise invalid_body(exc) from None
    return out


def load_query(schema: Schema) -> dict[str, Any]:
    req = current_request()
    # the common case, no query string (or one without parameters): only the schema's defaults
    # (computed once)
    if not req.environ.get("QUERY_STRING") or not req.args:
        try:
            return dict(_defaults(schema))
        except ValidationError as exc:  # a required parameter is missing
            raise invalid_query(exc) from None
    args: dict[str, Any] = {}
    query = req.args
    for key in query:
        values = query.getlist(key)
        if len(values) > 1:
            raise Problem(
                "invalid-parameters",
                f"{key}: give the parameter once",
                errors={key: ["given more than once"]},
            )
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


def respond(
    schema: Schema,
    obj: Any,
    status: int = 200,
    headers: dict[str, str] | None = None,
    dumped: bool = False,
) -> Response:
    """``obj`` as ``schema`` dumps it, as JSON. ``dumped``: ``obj`` is already what the dump
    gives (a dict the view built field by field, of the schema's types: a test proves it for the
    endpoint), so it is sent as it is."""
    body = orjson.dumps(obj if dumped else schema.dump(obj))
    resp = Response(body, status=status, mimetype=JSON)
    if headers:
        for k, v in headers.items():
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
        raise Problem(
            "malformed-request",
            f'{header} must be a game version such as "12" (the ETag of a view), not {raw!r}',
        )
    return int(tag)


def if_match_version() -> int | None:
    """The version in ``If-Match`` (one ETag; ``*`` means any version), or None."""
    raw = request.headers.get("If-Match")
    if raw is None or raw.strip() == "*":
        return None
    if "," in raw:
        raise Problem("malformed-request", 'If-Match must hold exactly one version, e.g. "12"')
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
