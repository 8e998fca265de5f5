"""A small Python client of the REST API (standard library only), for tests, bots and scripts.

    api = Client("http://127.0.0.1:8000")
    game = api.create_game([{"kind": "human"}, {"kind": "bot", "bot": "random"}])
    api.claim(game["game_id"], 0)                 # the seat token is remembered
    view = api.view(game["game_id"], seat=0)      # {"version", "view": {..., "decision": ...}}
    api.submit(game["game_id"], 0, command, expected_version=view["version"])
    for item in api.stream(game["game_id"], seat=0): ...

Errors raise ``ApiError`` carrying the problem+json body (``status``, ``type``, ``detail``, and
``code``/``field``/``value`` for an illegal command, ``current_version`` for a conflict).
``submit`` retries a command after a connection failure with the same command id, which the server
answers with the original result.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import Request, urlopen


class ApiError(Exception):
    """An HTTP error answer; ``problem`` is its problem+json body."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        super().__init__(f"{status} {problem.get('title', '')}: {problem.get('detail', '')}")

    @property
    def type(self) -> str:
        return str(self.problem.get("type", ""))


class Client:
    def __init__(
        self, base_url: str, *, admin_token: str | None = None, timeout: float = 30.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.admin_token = admin_token
        self.timeout = timeout
        self.tokens: dict[tuple[str, int], str] = {}

    # --- transport ------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        data: bytes | None = None,
        content_type: str | None = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        url = self.base_url + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        hdrs = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            content_type = "application/json"
        if content_type:
            hdrs["Content-Type"] = content_type
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        hdrs.update(headers or {})
        req = Request(url, data=data, method=method, headers=hdrs)
        try:
            with urlopen(req, timeout=self.timeout) as resp:
                return resp.status, dict(resp.headers.items()), resp.read()
        except HTTPError as exc:
            raw = exc.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"status": exc.code, "detail": raw.decode("utf-8", "replace")}
            raise ApiError(exc.code, problem) from None

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        _status, _headers, raw = self.request(method, path, **kwargs)
        return json.loads(raw)

    def _seat_token(self, game_id: str, seat: int, token: str | None) -> str | None:
        return token or self.tokens.get((game_id, seat))

    # --- games and seats ------------------------------------------------------------------
    def create_game(
        self,
        seats: list[dict[str, Any]],
        options: dict[str, Any] | None = None,
        seed: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"seats": seats}
        if options is not None:
            body["options"] = options
        if seed is not None:
            body["seed"] = seed
        token = self.admin_token if seed is not None else None
        result: dict[str, Any] = self._json("POST", "/games", body=body, token=token)
        return result

    def list_games(self, **filters: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", "/games", query=filters)
        return result

    def game(self, game_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"/games/{game_id}")
        return result

    def claim(self, game_id: str, seat: int) -> str:
        """Claim a human seat; the token is returned and remembered for later calls."""
        out = self._json("POST", f"/games/{game_id}/seats/{seat}/claim")
        token: str = out["token"]
        self.tokens[(game_id, seat)] = token
        return token

    def view(
        self, game_id: str, seat: int | None = None, token: str | None = None
    ) -> dict[str, Any]:
        """The public view, or a seat's private view (with its ``decision``)."""
        if seat is None:
            result: dict[str, Any] = self._json("GET", f"/games/{game_id}/view")
        else:
            result = self._json("GET", f"/games/{game_id}/seats/{seat}/view",
                                token=self._seat_token(game_id, seat, token))  # fmt: skip
        return result

    def submit(
        self,
        game_id: str,
        seat: int,
        command: dict[str, Any],
        *,
        command_id: str | None = None,
        expected_version: int | None = None,
        token: str | None = None,
        retries: int = 2,
    ) -> dict[str, Any]:
        """Submit a command; a connection failure is retried with the same command id."""
        body: dict[str, Any] = {"command_id": command_id or uuid.uuid4().hex, "command": command}
        if expected_version is not None:
            body["expected_version"] = expected_version
        path = f"/games/{game_id}/seats/{seat}/commands"
        tok = self._seat_token(game_id, seat, token)
        for attempt in range(retries + 1):
            try:
                result: dict[str, Any] = self._json("POST", path, body=body, token=tok)
                return result
            except (URLError, ConnectionError, TimeoutError):
                if attempt == retries:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    # --- events and logs ------------------------------------------------------------------
    def feed(
        self,
        game_id: str,
        *,
        seat: int | None = None,
        after: int = 0,
        limit: int = 100,
        token: str | None = None,
    ) -> dict[str, Any]:
        path = f"/games/{game_id}" + ("" if seat is None else f"/seats/{seat}") + "/events"
        tok = None if seat is None else self._seat_token(game_id, seat, token)
        result: dict[str, Any] = self._json("GET", path, token=tok,
                                            query={"after": after, "limit": limit})  # fmt: skip
        return result

    def stream(
        self,
        game_id: str,
        *,
        seat: int | None = None,
        after: int = 0,
        token: str | None = None,
        reconnect: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Feed items from the SSE stream until the game's end (or the server closes the stream;
        with ``reconnect`` it resumes from the last id until the end)."""
        path = f"/games/{game_id}" + ("" if seat is None else f"/seats/{seat}") + "/events/stream"
        tok = None if seat is None else self._seat_token(game_id, seat, token)
        last = after
        while True:
            hdrs = {"Accept": "text/event-stream", "Last-Event-ID": str(last)}
            if tok:
                hdrs["Authorization"] = f"Bearer {tok}"
            req = Request(self.base_url + path, headers=hdrs)
            try:
                resp = urlopen(req, timeout=self.timeout)
            except HTTPError as exc:
                raise ApiError(exc.code, json.loads(exc.read() or b"{}")) from None
            with resp:
                for event, data, ident in parse_sse(resp):
                    if event == "end":
                        return
                    if event == "message" and data:
                        if ident is not None:
                            last = int(ident)
                        yield json.loads(data)
            if not reconnect:
                return

    def export(self, game_id: str, *, seat: int | None = None, token: str | None = None) -> str:
        """The game's log as JSON Lines text (full after the end, redacted while live)."""
        path = f"/games/{game_id}" + ("" if seat is None else f"/seats/{seat}") + "/log"
        tok = self.admin_token if seat is None else self._seat_token(game_id, seat, token)
        _status, _headers, raw = self.request("GET", path, token=tok)
        return raw.decode("utf-8")

    def verify(self, log_text: str) -> dict[str, Any]:
        """The verdict ``rfg replay`` gives for a log."""
        result: dict[str, Any] = self._json("POST", "/replays/verify", data=log_text.encode(),
                                            content_type="application/x-ndjson")  # fmt: skip
        return result

    # --- reference data -------------------------------------------------------------------
    def catalogue(self) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", "/catalogue")
        return result

    def bots(self) -> list[str]:
        names: list[str] = self._json("GET", "/bots")["bots"]
        return names

    def ready(self) -> bool:
        try:
            self.request("GET", "/readyz")
            return True
        except (ApiError, URLError, ConnectionError):
            return False


def parse_sse(lines: Any) -> Iterator[tuple[str, str, str | None]]:
    """(event, data, id) per Server-Sent Event from an iterable of byte lines."""
    event, ident = "message", None
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data or event != "message":
                yield event, "\n".join(data), ident
            event, data, ident = "message", [], None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            ident = value
