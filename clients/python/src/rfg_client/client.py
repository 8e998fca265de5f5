"""The client: ``Client`` (one server), ``ApiError`` (an error answer), ``Unreachable`` (nothing
answers at the server's URL), ``parse_sse``.

    api = Client("http://127.0.0.1:8000")         # or Client(): $RFG_URL, else that URL
    game = api.create_game([{"kind": "human"}, {"kind": "bot", "bot": "random"}])
    api.claim(game["game_id"], 0)                 # the seat token is remembered
    view = api.view(game["game_id"], seat=0)      # {"version", "view": {..., "decision": ...}}
    decision = view["view"]["decision"]
    api.submit(game["game_id"], 0, command, decision_id=decision["decision_id"])
    for item in api.stream(game["game_id"], seat=0): ...

Errors raise ``ApiError`` carrying the problem+json body (``status``, ``type``, ``detail``, and
``code``/``field``/``value`` for an illegal command, ``current_decision_id`` or
``current_version`` for a conflict). Commands are retried with the same command id after a
connection failure, a 429 or a 503 (the server applies a command id at most once), and so is a
game's creation (with an ``Idempotency-Key``: the server creates one game per key).

``play`` follows the seat's event stream and answers each turn signal (``event: decision``: the
decision the seat owes, with its ``decision_id`` and the seat's view): one command request per
decision and one stream request per few minutes, far below the server's rate limits.

A bot account (``Client(bot_token=...)``) follows what happens to it with ``account_events``
(``GET /bots/me/events``: challenges, games started and finished), finds its games with
``my_games``, answers challenges (``accept``, ``decline``), joins open ladders (``join_ladder``)
and challenges other accounts (``challenge``); ``rfg_client.bot.Bot`` puts these together into a
program that runs forever from its token (``python -m rfg_client``).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, NamedTuple
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

#: answers worth the same request again after a pause: rate limited, the store unavailable
RETRY_STATUSES = (429, 503)
#: a decide function: (the seat's decision, its whole view) -> the command answering it
Decide = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
#: the environment variable naming the server's URL when none is given, and the default
URL_VARIABLE, DEFAULT_URL = "RFG_URL", "http://127.0.0.1:8000"
#: a ``RateLimit`` header whose limit has nothing left: its seconds to reset
_SPENT = re.compile(r";r=0;t=(\d+)")
#: the account stream's read timeout: above the server's keep-alive interval (15 s by default),
#: so a silent connection is a dead one
EVENTS_READ_TIMEOUT = 45.0
#: reconnecting after a failure waits 1, 2, 4 ... seconds, at most this long
MAX_BACKOFF = 30.0
#: a recorder: called with each exchange (method, url, request_headers, request_body, status,
#: headers, body), a stream's once it is closed
Record = Callable[[dict[str, Any]], None]


class Unreachable(ConnectionError):
    """Nothing answers at the server's URL (connection refused, unknown host), after retries."""

    def __init__(self, url: str, reason: object) -> None:
        self.url = url
        super().__init__(
            f"nothing listens at {url} ({reason}): start the server (make run) or give its URL "
            f"(an argument, or the {URL_VARIABLE} environment variable)"
        )


class Turn(NamedTuple):
    """What ``play_turn`` did: ``status`` is ``"answered"`` (a command was stored), ``"waiting"``
    (the seat owes nothing now) or ``"over"``; ``version`` the game version it last saw."""

    status: Literal["answered", "waiting", "over"]
    version: int


class ApiError(Exception):
    """An HTTP error answer; ``problem`` is its problem+json body."""

    def __init__(
        self, status: int, problem: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.problem = problem
        self.headers = headers or {}
        super().__init__(f"{status} {problem.get('title', '')}: {problem.get('detail', '')}")

    @property
    def type(self) -> str:
        """The problem type, e.g. ``/problems/decision-changed``."""
        return str(self.problem.get("type", ""))

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked to wait (``Retry-After``), if it did."""
        raw = {k.lower(): v for k, v in self.headers.items()}.get("retry-after")
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None


class Client:
    """One server, at ``base_url`` (default: the ``RFG_URL`` environment variable, else
    http://127.0.0.1:8000). ``retries``: how often a request is sent again after a connection
    failure, a 429 or a 503 (waiting ``Retry-After``, at most ``max_wait`` seconds each time);
    when nothing answers at the URL it raises ``Unreachable``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        admin_token: str | None = None,
        bot_token: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        max_wait: float = 10.0,
        record: Record | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get(URL_VARIABLE) or DEFAULT_URL).rstrip("/")
        self.admin_token = admin_token
        self.bot_token = bot_token
        #: called with every exchange (``Record``): a bot's own account of what it sent and got
        self.record = record
        #: when a limit the server reported spent (``RateLimit: ...;r=0;t=<s>``) has room again
        self._resume_at = 0.0
        self.timeout = timeout
        self.retries = retries
        self.max_wait = max_wait
        self.tokens: dict[tuple[str, int], str] = {}
        #: one request at a time (a stream's until its answer's head), so that each answer's
        #: ``RateLimit`` paces the next: threads sending at once would race past r=0 into a 429
        self._sending = threading.Lock()

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
        retries: int | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request: (status, headers, body). Raises ``ApiError`` for an error answer, after
        ``retries`` more tries for connection failures, 429 and 503 (``None``: the client's)."""
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
        left = self.retries if retries is None else retries
        attempt = 0
        while True:
            attempt += 1
            req = Request(url, data=data, method=method, headers=hdrs)
            try:
                with self._sending:  # the answer's RateLimit paces the next request
                    self._wait_for_room()
                    try:
                        with urlopen(req, timeout=self.timeout) as resp:
                            got = resp.status, dict(resp.headers.items()), resp.read()
                    except HTTPError as exc:
                        got = exc.code, _headers(exc), exc.read()
                    self._record(req, *got)
                if got[0] < 400:
                    return got
                error = _api_error(got[0], got[2], got[1])
                if error.status not in RETRY_STATUSES or left <= 0:
                    raise error from None
                wait = error.retry_after if error.retry_after is not None else 0.1 * attempt
            except (URLError, ConnectionError, TimeoutError) as exc:
                if left <= 0:
                    unreachable = _unreachable(self.base_url, exc)
                    if unreachable is not None:
                        raise unreachable from None
                    raise
                wait = 0.05 * attempt
            left -= 1
            time.sleep(min(self.max_wait, max(0.0, wait)))

    def _wait_for_room(self) -> None:
        """Before a request: if an answer said a limit had nothing left, wait until it has."""
        wait = self._resume_at - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def _pace(self, headers: dict[str, str]) -> None:
        spent = _SPENT.search({k.lower(): v for k, v in headers.items()}.get("ratelimit", ""))
        if spent is not None:
            self._resume_at = time.monotonic() + int(spent[1])

    def _record(self, req: Request, status: int, headers: dict[str, str], body: bytes) -> None:
        """Every answer passes here: its ``RateLimit`` header paces the next request (at
        ``r=0`` the next waits ``t`` seconds, so a client never needs a 429 to slow down), and
        the recorder, if any, gets the exchange."""
        self._pace(headers)
        if self.record is None:
            return
        sent = req.data if isinstance(req.data, bytes) else b""
        self.record(
            {
                "method": req.get_method(),
                "url": req.full_url,
                "request_headers": {k.lower(): v for k, v in req.header_items()},
                "request_body": sent.decode("utf-8", "replace"),
                "status": status,
                "headers": {k.lower(): v for k, v in headers.items()},
                "body": body.decode("utf-8", "replace"),
            }
        )

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        _status, _headers, raw = self.request(method, path, **kwargs)
        return json.loads(raw)

    def _seat_token(self, game_id: str, seat: int, token: str | None) -> str | None:
        return token or self.tokens.get((game_id, seat)) or self.bot_token

    # --- games and seats ------------------------------------------------------------------
    def create_game(
        self,
        seats: list[dict[str, Any]],
        options: dict[str, Any] | None = None,
        seed: str | None = None,
        *,
        idempotency_key: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """``POST /games``; ``extra`` are further body fields (``time_control``, ...). Sent with an
        ``Idempotency-Key`` (a new UUID unless given), so that its retries after a 503 or a lost
        connection create one game."""
        body: dict[str, Any] = {"seats": seats, **extra}
        if options is not None:
            body["options"] = options
        if seed is not None:
            body["seed"] = seed
        token = self.admin_token if seed is not None else None
        key = idempotency_key or str(uuid.uuid4())
        result: dict[str, Any] = self._json(
            "POST", "/games", body=body, token=token, headers={"Idempotency-Key": key}
        )
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
            result = self._json(
                "GET",
                f"/games/{game_id}/seats/{seat}/view",
                token=self._seat_token(game_id, seat, token),
            )
        return result

    def submit(
        self,
        game_id: str,
        seat: int,
        command: dict[str, Any],
        *,
        decision_id: int | None = None,
        expected_version: int | None = None,
        command_id: str | None = None,
        token: str | None = None,
        retries: int | None = None,
    ) -> dict[str, Any]:
        """Submit a command. With ``decision_id`` (the decision's, from the seat view) it is
        applied while the seat still owes that decision; with ``expected_version`` only if the
        game has not moved at all. Resent with the same command id after a connection failure,
        429 or 503; a 409 raises ``ApiError`` (read the view again: ``play_turn`` does)."""
        body: dict[str, Any] = {"command_id": command_id or uuid.uuid4().hex, "command": command}
        if decision_id is not None:
            body["decision_id"] = decision_id
        if expected_version is not None:
            body["expected_version"] = expected_version
        path = f"/games/{game_id}/seats/{seat}/commands"
        result: dict[str, Any] = self._json(
            "POST", path, body=body, retries=retries, token=self._seat_token(game_id, seat, token)
        )
        return result

    def play_turn(
        self,
        game_id: str,
        seat: int,
        decide: Decide,
        *,
        token: str | None = None,
        conflicts: int = 5,
    ) -> Turn:
        """Answer the seat's pending decision, if it has one: read the seat view, ask
        ``decide(decision, view)`` for a command, submit it by ``decision_id``. On a 409 (the
        decision changed meanwhile: a timeout played it, or another client of the seat did) the
        view is read again and ``decide`` asked again, up to ``conflicts`` times."""
        for _ in range(conflicts + 1):
            got = self.view(game_id, seat=seat, token=token)
            view, version = got["view"], int(got["version"])
            if view.get("step") == "over":
                return Turn("over", version)
            decision = view.get("decision")
            if decision is None:
                return Turn("waiting", version)
            try:
                out = self.submit(
                    game_id,
                    seat,
                    decide(decision, view),
                    decision_id=decision["decision_id"],
                    token=token,
                )
                return Turn("answered", int(out["version"]))
            except ApiError as exc:
                if exc.status != 409:
                    raise
        raise ApiError(
            409,
            {
                "title": "Conflict",
                "status": 409,
                "detail": f"seat {seat}'s decision kept changing over "
                f"{conflicts + 1} tries; is another client playing it?",
            },
        )

    def play(
        self,
        game_id: str,
        seat: int,
        decide: Decide,
        *,
        token: str | None = None,
    ) -> dict[str, Any]:
        """Play the seat to the end of the game with ``decide``: follow the seat's stream and
        answer each turn signal (``decide(decision, view)``, submitted by its ``decision_id``;
        a 409 needs nothing: the stream signals the decision owed now). Returns the final public
        view (``result`` holds the scores)."""
        for signal in self.turns(game_id, seat, token=token):
            command = decide(signal["decision"], signal["view"])
            try:
                self.submit(game_id, seat, command, decision_id=signal["decision_id"], token=token)
            except ApiError as exc:
                if exc.status != 409:
                    raise
        view: dict[str, Any] = self.view(game_id)["view"]
        return view

    def turns(
        self, game_id: str, seat: int, *, after: int = 0, token: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """The seat's turn signals (its stream's ``event: decision`` data: ``decision``,
        ``decision_id``, ``view``, ``links``) until the game's end, reconnecting with
        ``Last-Event-ID`` when the server closes the stream or the connection drops."""
        path = f"/games/{game_id}/seats/{seat}/events/stream"
        tok = self._seat_token(game_id, seat, token)
        last, drops = str(after), 0
        while True:
            try:
                for event, data, ident in self._sse(path, tok, last):
                    drops = 0
                    if event == "end":
                        return
                    if event == "message" and ident is not None:
                        last = ident
                    elif event == "decision" and data:
                        yield json.loads(data)
            except ApiError as exc:  # 429 (too many streams) or 503: wait as told, then again
                if exc.status not in RETRY_STATUSES or drops >= self.retries:
                    raise
                drops += 1
                time.sleep(min(self.max_wait, exc.retry_after or 1.0))
            except (OSError, http.client.HTTPException):  # the connection dropped: resume
                if drops >= self.retries:
                    raise
                drops += 1
                time.sleep(0.1 * drops)

    def wait(
        self,
        game_id: str,
        *,
        seat: int | None = None,
        after: int | None = None,
        token: str | None = None,
        timeout: float = 5.0,
    ) -> None:
        """Block until the game has an event after ``after`` (default: its current version), or
        ``timeout`` seconds pass; polls the event feed (cheap; ``stream`` pushes instead)."""
        if after is None:
            after = int(self.view(game_id)["version"])
        deadline = time.monotonic() + timeout
        delay = 0.02
        while time.monotonic() < deadline:
            if self.feed(game_id, seat=seat, after=after, limit=1, token=token)["events"]:
                return
            time.sleep(delay)
            delay = min(0.25, delay * 2)

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
        result: dict[str, Any] = self._json(
            "GET", path, token=tok, query={"after": after, "limit": limit}
        )
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
        with ``reconnect`` it resumes with ``Last-Event-ID`` until the end)."""
        path = f"/games/{game_id}" + ("" if seat is None else f"/seats/{seat}") + "/events/stream"
        tok = None if seat is None else self._seat_token(game_id, seat, token)
        last = str(after)
        while True:
            ended = False
            for event, data, ident in self._sse(path, tok, last):
                if event == "end":
                    ended = True
                    break
                if event == "message" and data:
                    if ident is not None:
                        last = ident
                    yield json.loads(data)
            if ended or not reconnect:
                return

    def decisions(self, *, last_event_id: str | None = None) -> Iterator[dict[str, Any]]:
        """The bot account's pending decisions across its games, forever
        (``GET /bots/me/decisions/stream``, resumed as ``follow`` resumes): each a
        ``PendingDecision`` (``game_id``, ``seat``, ``decision_id``, ``links.view``). Delivery is
        at least once: a reconnect sends every decision still pending again."""
        for event, data in self.follow("/bots/me/decisions/stream", last_event_id):
            if event == "decision":
                yield data

    def _sse(
        self, path: str, token: str | None, last: str | None, timeout: float | None = None
    ) -> Iterator[tuple[str, str, str | None]]:
        hdrs = {"Accept": "text/event-stream"}
        if last is not None:
            hdrs["Last-Event-ID"] = last
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        req = Request(self.base_url + path, headers=hdrs)
        try:
            with self._sending:  # until the answer's head: its RateLimit paces the next request
                self._wait_for_room()
                try:
                    resp = urlopen(req, timeout=timeout or self.timeout)
                except HTTPError as exc:
                    raw = exc.read()
                    self._record(req, exc.code, _headers(exc), raw)
                    raise _api_error(exc.code, raw, _headers(exc)) from None
                self._pace(dict(resp.headers.items()))
        except URLError as exc:
            unreachable = _unreachable(self.base_url, exc)
            if unreachable is not None:
                raise unreachable from None
            raise
        lines: list[bytes] = []
        try:
            with resp:
                yield from parse_sse(_kept(resp, lines) if self.record is not None else resp)
        finally:
            self._record(req, resp.status, dict(resp.headers.items()), b"".join(lines))

    def export(self, game_id: str, *, seat: int | None = None, token: str | None = None) -> str:
        """The game's log as JSON Lines text (full after the end, redacted while live)."""
        path = f"/games/{game_id}" + ("" if seat is None else f"/seats/{seat}") + "/log"
        tok = self.admin_token if seat is None else self._seat_token(game_id, seat, token)
        _status, _headers, raw = self.request("GET", path, token=tok)
        return raw.decode("utf-8")

    def verify(self, log_text: str) -> dict[str, Any]:
        """The verdict ``rfg replay`` gives for a log."""
        result: dict[str, Any] = self._json(
            "POST", "/replays/verify", data=log_text.encode(), content_type="application/x-ndjson"
        )
        return result

    # --- bot accounts and challenges ------------------------------------------------------
    def register_bot(self, name: str, description: str, contact: str) -> dict[str, Any]:
        """``POST /bots/accounts`` (once per bot: keep the token); the client's ``bot_token``
        becomes the new account's."""
        body = {"name": name, "description": description, "contact": contact}
        account: dict[str, Any] = self._json(
            "POST", "/bots/accounts", body=body, token=self.admin_token
        )
        self.bot_token = account["token"]
        return account

    def me(self) -> dict[str, Any]:
        """``GET /bots/me``: the bot token's account (``account_id``, ``name``, ...)."""
        result: dict[str, Any] = self._json("GET", "/bots/me", token=self.bot_token)
        return result

    def challenge(self, seats: list[dict[str, Any]], **table: Any) -> dict[str, Any]:
        """``POST /challenges`` with the bot token: ``seats`` are built-in bots and bot
        accounts (yours once), ``table`` ``POST /games``' options (``time_control``, ...).
        Against built-in bots only the answer is ``accepted`` with its ``game_id``."""
        result: dict[str, Any] = self._json(
            "POST", "/challenges", body={"seats": seats, **table}, token=self.bot_token
        )
        return result

    def challenge_account(
        self, me: str, opponent: str, *, ladder: str | None = None, **table: Any
    ) -> dict[str, Any]:
        """Challenge another bot account to a two-seat game (``me``: your account id); with
        ``ladder`` the game is rated on it (both accounts must be its entrants)."""
        seats = [{"kind": "external", "account": me}, {"kind": "external", "account": opponent}]
        if ladder is not None:
            table["ladder"] = ladder
        return self.challenge(seats, **table)

    def accept(self, challenge_id: str) -> dict[str, Any]:
        """``POST /challenges/{id}/accept``: the game starts (``game_id``)."""
        result: dict[str, Any] = self._json(
            "POST", f"/challenges/{challenge_id}/accept", token=self.bot_token
        )
        return result

    def decline(
        self, challenge_id: str, reason: str = "generic", text: str | None = None
    ) -> dict[str, Any]:
        """``POST /challenges/{id}/decline`` with a ``reason`` (``generic``, ``later``,
        ``too-fast``, ``too-slow``, ``time-control``, ``rated``, ``casual``, ``not-these-bots``,
        ``not-now``) and an optional ``text`` (at most 200 characters) the challenger sees."""
        body: dict[str, Any] = {"reason": reason}
        if text is not None:
            body["text"] = text
        result: dict[str, Any] = self._json(
            "POST", f"/challenges/{challenge_id}/decline", body=body, token=self.bot_token
        )
        return result

    def my_games(self, status: Literal["active", "finished"] = "active") -> list[dict[str, Any]]:
        """``GET /bots/me/games?status=...``, every page: the account's games, newest first
        (``game_id``, ``seat``, ``players``, ``result``, ``links``)."""
        games: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = self._json(
                "GET",
                "/bots/me/games",
                token=self.bot_token,
                query={"status": status, "limit": 100, "cursor": cursor},
            )
            games += page["games"]
            cursor = page.get("next_cursor")
            if not cursor:
                return games

    def join_ladder(self, ladder: str) -> dict[str, Any]:
        """``POST /bots/me/ladders``: enter an open ladder (403 when it is closed); the
        scheduler pairs the account from then on and its games are rated."""
        result: dict[str, Any] = self._json(
            "POST", "/bots/me/ladders", body={"ladder": ladder}, token=self.bot_token
        )
        return result

    def leave_ladder(self, ladder: str) -> None:
        """``DELETE /bots/me/ladders/{ladder}``: paired no more (history and rating kept)."""
        self.request("DELETE", f"/bots/me/ladders/{ladder}", token=self.bot_token)

    def my_ladders(self) -> dict[str, Any]:
        """``GET /bots/me/ladders``: the account's ladders, with its rating on each."""
        result: dict[str, Any] = self._json("GET", "/bots/me/ladders", token=self.bot_token)
        return result

    def abort(self, game_id: str, seat: int, token: str | None = None) -> dict[str, Any]:
        """``POST /games/{id}/seats/{n}/abort``: call off a game from a challenge before its
        first round ends (unrated, no winners); later it is a 409 saying why."""
        result: dict[str, Any] = self._json(
            "POST",
            f"/games/{game_id}/seats/{seat}/abort",
            token=self._seat_token(game_id, seat, token),
        )
        return result

    def rotate_token(self) -> str:
        """``POST /bots/me/token``: a new bot token (the client uses it from now on); the old one
        is refused at once. The account, its ladder entries and ratings stay."""
        token: str = self._json("POST", "/bots/me/token", token=self.bot_token)["token"]
        self.bot_token = token
        return token

    def account_events(self, *, last_event_id: str | None = None) -> Iterator[dict[str, Any]]:
        """What happens to the bot account, forever (``GET /bots/me/events``, resumed as
        ``follow`` resumes): each event's data, its ``type`` ``challenge``,
        ``challenge-accepted``, ``-declined``, ``-canceled``, ``game-started`` or
        ``game-finished``. On connect without ``last_event_id`` the server first sends the
        state: the open challenges addressed to the account, its active games."""
        for _event, data in self.follow("/bots/me/events", last_event_id):
            yield data

    def follow(
        self, path: str, last_event_id: str | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(event, data) of a bot account's stream at ``path``, forever. When the server closes
        it, it is resumed at once with ``Last-Event-ID``; after a dropped connection, or one
        silent for ``EVENTS_READ_TIMEOUT`` (three keep-alives), after 1, 2, 4 ... seconds (at
        most ``MAX_BACKOFF``), or the ``Retry-After`` of a 429 or 503. Any other error answer (a
        401: the token was revoked or rotated) raises ``ApiError``."""
        last, failures = last_event_id, 0
        while True:
            try:
                for event, data, ident in self._sse(
                    path, self.bot_token, last, timeout=EVENTS_READ_TIMEOUT
                ):
                    failures = 0
                    if ident is not None:
                        last = ident
                    if data:
                        yield event, json.loads(data)
                continue  # the server closed the stream (its time is up): resume at once
            except ApiError as exc:
                if exc.status not in RETRY_STATUSES:
                    raise
                wait = exc.retry_after
            except (OSError, http.client.HTTPException):  # refused, reset, timed out
                wait = None
            failures += 1
            if wait is None:
                wait = min(MAX_BACKOFF, 2.0 ** (failures - 1)) * random.uniform(0.5, 1.0)
            time.sleep(wait)

    # --- reference data -------------------------------------------------------------------
    def catalogue(self) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", "/catalogue")
        return result

    def bots(self) -> list[str]:
        names: list[str] = self._json("GET", "/bots")["bots"]
        return names

    def ready(self) -> bool:
        try:
            self.request("GET", "/readyz", retries=0)
            return True
        except (ApiError, URLError, ConnectionError, TimeoutError):
            return False


def _unreachable(url: str, exc: BaseException) -> Unreachable | None:
    """``Unreachable`` when ``exc`` says nothing listens at ``url`` (refused, unknown host)."""
    reason = exc.reason if isinstance(exc, URLError) else exc
    if isinstance(reason, OSError) and not isinstance(
        reason, TimeoutError | ConnectionResetError | ConnectionAbortedError
    ):
        return Unreachable(url, reason)
    return None


def _headers(exc: HTTPError) -> dict[str, str]:
    return dict(exc.headers.items()) if exc.headers else {}


def _api_error(status: int, raw: bytes, headers: dict[str, str]) -> ApiError:
    try:
        problem = json.loads(raw)
    except ValueError:
        problem = {"status": status, "detail": raw.decode("utf-8", "replace")}
    if not isinstance(problem, dict):
        problem = {"status": status, "detail": str(problem)}
    return ApiError(status, problem, headers)


def _kept(lines: Iterable[bytes], into: list[bytes]) -> Iterator[bytes]:
    """``lines``, each also appended to ``into`` (a stream's body, for the recorder)."""
    for line in lines:
        into.append(line)
        yield line


def parse_sse(lines: Iterable[bytes]) -> Iterator[tuple[str, str, str | None]]:
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
