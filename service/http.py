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
import io
import json
from typing import IO, Any, cast

import orjson
from flask import Flask, Request, Response, current_app, request
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream, get_content_length

from service.errors import Problem, invalid_body, invalid_query
from service.fastload import MISS, loader_for

JSON = "application/json"
#: the deepest nesting of arrays and objects a JSON body may have (orjson's own limit)
MAX_DEPTH = 1024


#: the most ``_Body.readall`` asks of the wrapped stream at once (werkzeug's own step)
_READ_STEP = 64 * 1024


class _Body(LimitedStream):
    """werkzeug's ``LimitedStream``, whose ``readall`` (``request.get_data()``) asks the wrapped
    stream for the same pieces - at most 64 KiB, at most what the limit leaves - and gets the
    same bytes and errors, without a fresh 64 KiB buffer per piece (``io.RawIOBase.read``)."""

    def readall(self) -> bytes:
        if self.is_exhausted:
            self.on_exhausted()
            return b""
        chunks = []
        while not self.is_exhausted:
            data = self._piece(min(_READ_STEP, self.limit - self._pos))
            if not data:  # (the stream may end before a maximum is reached)
                break
            chunks.append(data)
        return b"".join(chunks)

    def _piece(self, size: int) -> bytes:
        """``LimitedStream.readinto`` of ``size`` (at most what the limit leaves), as bytes."""
        try:
            data = self._stream.read(size)
        except (OSError, ValueError) as e:
            self.on_disconnect(error=e)
            return b""
        if not data:  # zero bytes: the client went away (or a maximum's stream ended)
            self.on_disconnect()
            return b""
        self._pos += len(data)
        return bytes(data)


class _AtMost(_Body):
    """A body stream of unknown length (chunked) that may hold at most ``limit`` bytes: reading
    past them raises the 413 problem (werkzeug's own maximum stops reading there, silently)."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(stream, limit + 1, is_max=True)
        self.most = limit

    def _too_large(self) -> None:
        if self._pos > self.most:  # a Problem: readers that catch other errors let it through
            raise Problem(
                "payload-too-large",
                f"the body is larger than {self.most} bytes; send a smaller one",
                max_bytes=self.most,
            )

    def readinto(self, b: Any) -> int | None:
        n = super().readinto(b)
        self._too_large()
        return n

    def _piece(self, size: int) -> bytes:
        data = super()._piece(size)
        self._too_large()
        return data


#: endpoints whose bodies have their own size limit (config key) instead of MAX_CONTENT_LENGTH
BODY_LIMITS = {"logs.verify": "REPLAY_MAX_BYTES"}


class ApiRequest(Request):
    """Flask's request, whose body stream enforces ``max_content_length`` on chunked bodies;
    the limit is the endpoint's own (``BODY_LIMITS``) or ``MAX_CONTENT_LENGTH``."""

    @property
    def max_content_length(self) -> int | None:
        if self._max_content_length is not None:
            return self._max_content_length
        try:  # (what Flask's own property reads, in one context lookup)
            config = current_app._get_current_object().config  # type: ignore[attr-defined]
        except RuntimeError:  # outside an app context: no limit
            return None
        key = BODY_LIMITS.get(self.endpoint or "")
        if key is not None:
            return int(config[key])
        limit: int | None = config["MAX_CONTENT_LENGTH"]
        return limit

    @max_content_length.setter
    def max_content_length(self, value: int | None) -> None:
        self._max_content_length = value

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        if (
            self.content_length is None
            and limit is not None
            and "wsgi.input_terminated" in self.environ
        ):
            return cast(IO[bytes], _AtMost(self.environ["wsgi.input"], limit))
        if self.shallow:
            raise RuntimeError(
                "This request was created with 'shallow=True', reading"
                " from the input stream is disabled."
            )
        # werkzeug.wsgi.get_input_stream, with the limit computed once and _Body for its
        # LimitedStream
        environ = self.environ
        stream = cast(IO[bytes], environ["wsgi.input"])
        content_length = get_content_length(environ)
        if content_length is not None and limit is not None and content_length > limit:
            raise RequestEntityTooLarge()
        if "wsgi.input_terminated" in environ:
            if limit is not None:
                return cast(IO[bytes], _Body(stream, limit, is_max=True))
            return stream
        if content_length is None:
            return io.BytesIO()
        return cast(IO[bytes], _Body(stream, content_length))


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
    try:
        return orjson.loads(raw)  # the fast parser; NaN and Infinity are not JSON to it either
    except orjson.JSONDecodeError:
        pass
    if _depth_over(raw, MAX_DEPTH):
        raise Problem(
            "malformed-request",
            f"the body nests arrays and objects more than {MAX_DEPTH} "
            "deep; send a flatter document",
        )
    try:  # the standard parser decides what orjson refused (its messages, integers past 64 bits)
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise Problem(
            "malformed-request",
            "the body nests arrays and objects too deeply; send a flatter document",
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Problem("malformed-request", f"the body is not valid JSON: {exc}") from None
    try:  # what orjson refused and json took: a string with a lone surrogate ("\ud800")?
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


def load_body(schema: Schema, optional: bool = False, fast: bool = False) -> dict[str, Any]:
    """The body as ``schema`` loads it (422 with per-field errors). ``fast``: first try the
    loader compiled from the schema (``service.fastload``: the same result for a body it is
    sure of, else the schema decides)."""
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
    loader = loader_for(schema) if fast else None
    if loader is not None:
        quick = loader(data)
        if quick is not MISS:
            return cast(dict[str, Any], quick)
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
