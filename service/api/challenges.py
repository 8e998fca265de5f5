"""Challenges between bot accounts, without the admin token (storage: ``service.challenges``).

* ``POST /challenges`` (bot token): a table of built-in bots and bot accounts (the caller's own
  account once, at most one other) with ``POST /games``' options; with no other account the
  game starts at once (201, ``status: accepted``, ``game_id``), else the challenge is open until
  the challenged account accepts or declines, the challenger cancels, or it expires.
* ``GET /challenges/<id>`` (either account), ``GET /bots/me/challenges`` (open ones, in and out).
* ``POST /challenges/<id>/accept`` / ``decline`` (the challenged account), ``cancel`` (the
  challenger). Accepting creates the game with both accounts seated as
  ``{"kind": "external", "account": id}``; both get its decisions on their decisions streams.

A rated challenge names a ``ladder``: both accounts must be its current entrants, the table is
the ladder's (a player count it plays, its time control and options; any other seats are built-in
bots that are its entrants), and the game joins the ladder's games when it starts, to be recorded
and rated as a scheduled one is (``ladder.service.Ladders.add_challenge_game``).

Limits per account: ``MAX_OPEN_CHALLENGES`` open challenges and ``CHALLENGES_PER_MINUTE`` made a
minute to other accounts; of the built-in bots, ``MAX_OPEN_CHALLENGES`` unfinished games from
such challenges (no rate: a bot plays one game after another as fast as they go). 429 past any."""

from __future__ import annotations

import secrets
import unicodedata
from typing import Any

from flask import Blueprint, Response, current_app
from marshmallow import Schema, ValidationError, fields, validates_schema
from marshmallow.validate import Length, OneOf, Regexp

from events.games.time_control import validate_table
from events.store.lobby import Lobby
from ladder.service import LadderError
from service.ambition import require_available
from service.api.games import TABLE_KEYS
from service.api.ladders import ladders
from service.auth import bearer_token, bot_account, require_bot
from service.backend import Backend, backend
from service.challenges import (
    DECLINE_REASONS,
    DECLINE_TEXT_MAX,
    KEEP_SECONDS,
    Challenges,
    Refused,
    accounts_in,
    public,
)
from service.errors import Problem
from service.fields import StrictList, StrictStr
from service.http import load_body, load_query, respond
from service.limits import check_open_games, client_address, opened_game
from service.players import challenge_seats
from service.schemas.requests import (
    LADDER_NAME,
    NOT_PRINTABLE,
    CreateGameSchema,
    DisplayName,
    EmptyQuerySchema,
    Strict,
    engine_options,
)

bp = Blueprint("challenges", __name__)
_empty = EmptyQuerySchema()

ACCOUNT_ID = Regexp(r"^[0-9a-f]{16}$", error="must be a bot account id (16 hex digits)")


class ChallengeSeatSchema(Strict):
    kind = StrictStr(
        required=True,
        validate=OneOf(
            ("bot", "external", "human"),
            error="must be bot (a built-in bot), external (a bot account) or human (the seat "
            "of a player challenging without a bot token)",
        ),
    )
    bot = StrictStr()
    account = StrictStr(validate=ACCOUNT_ID)
    name = DisplayName()  # the human seat's: the name the table shows for the player

    @validates_schema
    def _named(self, data: dict[str, Any], **kwargs: Any) -> None:
        from bots.base import bot_names

        if data.get("kind") == "bot":
            if data.get("bot") not in bot_names():
                raise ValidationError(
                    f"a bot seat names a built-in bot: one of {bot_names()} (GET /bots)", "bot"
                )
            if "account" in data:
                raise ValidationError("only a seat of kind 'external' names an account", "account")
        elif data.get("kind") == "external":
            if "account" not in data:
                raise ValidationError(
                    "an external seat names a bot account: its account_id", "account"
                )
            if "bot" in data:
                raise ValidationError("only a seat of kind 'bot' names a bot", "bot")
        if data.get("kind") != "human" and "name" in data:
            raise ValidationError(
                "only the human seat takes a name (the player's, shown at the table)", "name"
            )
        if data.get("kind") == "human":
            for name in ("bot", "account"):
                if name in data:
                    raise ValidationError("a human seat names nobody: it is yours", name)


class CreateChallengeSchema(CreateGameSchema):
    """``POST /games``' body without ``seed``, its seats built-in bots or bot accounts."""

    class Meta(CreateGameSchema.Meta):
        exclude = ("seed",)

    seats = StrictList(
        fields.Nested(ChallengeSeatSchema),
        required=True,
        validate=Length(min=2, max=5, error="a game has 2 to 5 seats"),
    )
    #: a rated challenge: the ladder both accounts are entrants of
    ladder = StrictStr(validate=LADDER_NAME)


def _one_line(text: str) -> None:
    """A decline's words: at most ``DECLINE_TEXT_MAX`` characters of printable text on one line
    (shown to the challenger as they are)."""
    if len(text) > DECLINE_TEXT_MAX:
        raise ValidationError(
            f"must be at most {DECLINE_TEXT_MAX} characters, not {len(text)}; say it shorter"
        )
    for ch in text:
        if unicodedata.category(ch) in NOT_PRINTABLE:
            raise ValidationError(
                f"must be one line of printable text, not U+{ord(ch):04X} "
                f"({unicodedata.name(ch, 'unnamed')})"
            )


class DeclineSchema(Strict):
    """Why the challenged account declines: one of ``DECLINE_REASONS`` (default ``generic``)
    and, optionally, a line of words for the challenger (``text``)."""

    reason = StrictStr(
        load_default=DECLINE_REASONS[0],
        validate=OneOf(
            DECLINE_REASONS,
            error=f"must be one of {', '.join(DECLINE_REASONS)} (generic when no other fits; "
            "say more in text)",
        ),
    )
    text = StrictStr(validate=_one_line)


class EmptyBodySchema(Strict):
    """No parameters; an empty object (or no body) is accepted."""


class ChallengeSchema(Schema):
    challenge_id = fields.String()
    status = fields.String()
    challenger = fields.String(allow_none=True)
    challenged = fields.String(allow_none=True)
    challenge_secret = fields.String()
    seats = fields.List(fields.Dict())
    options = fields.Dict()
    time_control = fields.Dict()
    timeout_policy = fields.String()
    abandon_after = fields.Integer()
    created_at = fields.String()
    expires_at = fields.String()
    game_id = fields.String(allow_none=True)
    reason = fields.String()
    text = fields.String()
    ladder = fields.String(allow_none=True)
    entrants = fields.List(fields.String())
    links = fields.Dict(keys=fields.String(), values=fields.String())


class ChallengeListSchema(Schema):
    incoming = fields.List(fields.Nested(ChallengeSchema), data_key="in")
    outgoing = fields.List(fields.Nested(ChallengeSchema), data_key="out")


_create = CreateChallengeSchema()
_decline = DeclineSchema()
_no_body = EmptyBodySchema()
_challenge = ChallengeSchema()
_list = ChallengeListSchema()


def _store() -> Challenges:
    b = backend()
    return Challenges(b.client, b.store.prefix, b.store.notice_stream)


def resource(c: dict[str, Any], b: Backend | None = None) -> dict[str, Any]:
    """The challenge as ``GET /challenges/{id}`` answers it (``c`` with its ``status``): its
    seats with their ``name`` and ``rating`` (on the challenge's ladder: ``service.players``).
    ``b``: the backend, outside a request (a stream's generator)."""
    cid = c["challenge_id"]
    links = {"self": f"/challenges/{cid}"}
    if c["status"] == "open":
        links["cancel"] = f"/challenges/{cid}/cancel"
        if c.get("challenged"):
            links["accept"] = f"/challenges/{cid}/accept"
            links["decline"] = f"/challenges/{cid}/decline"
    out = public(c)
    out["seats"] = challenge_seats(
        b or backend(), list(out.get("seats") or []), c.get("ladder"), c.get("entrants")
    )
    out.setdefault("game_id", None)
    out.setdefault("ladder", None)
    if out["game_id"]:
        links["game"] = f"/games/{out['game_id']}"
        if out["challenger"] is None:  # a player's: the seat their secret now holds
            links["seat"] = f"/games/{out['game_id']}/seats/{human_seat(out['seats'])}"
    out["links"] = links
    return out


def human_seat(seats: list[dict[str, Any]]) -> int:
    return next(i for i, s in enumerate(seats) if s["kind"] == "human")


def _refused(exc: Refused) -> Problem:
    headers = {}
    if exc.slug == "rate-limited":
        headers["Retry-After"] = str(exc.extensions["retry_after"])
    return Problem(exc.slug, exc.detail, headers=headers, **exc.extensions)


def _check_table(account: str | None, body: dict[str, Any]) -> None:
    """The table a challenger may ask for: a bot account's own seat once (``account``), or a
    player's one human seat (``account`` None); at most one other bot account, once."""
    seats = body["seats"]
    named = accounts_in(seats)
    humans = sum(1 for s in seats if s["kind"] == "human")
    if account is None and humans != 1:
        raise Problem(
            "invalid-request",
            'a player challenging without a bot token holds exactly one seat: {"kind": "human"} '
            "(a bot account sends its bot token and takes its own external seat instead)",
            errors={"seats": ["exactly one human seat, yours"]},
        )
    if account is not None and (humans or named.count(account) != 1):
        raise Problem(
            "invalid-request",
            f"the challenger's own account must hold exactly one seat and no seat is human: "
            f'add {{"kind": "external", "account": "{account}"}} to seats once',
            errors={"seats": ["the challenger's account holds exactly one seat"]},
        )
    others = {a for a in named if a != account}
    if len(others) > 1 or len(named) - sum(1 for a in named if a == account) > len(others):
        raise Problem(
            "invalid-request",
            "a challenge seats at most one other bot account, once; fill the other seats with "
            "built-in bots",
            errors={"seats": ["at most one other bot account, in one seat"]},
        )
    accounts = backend().accounts
    assert accounts is not None
    for other in others:
        acct = accounts.get(other)
        if acct is None or not acct["active"]:
            raise Problem(
                "invalid-request",
                f"bot account {other!r} does not exist or its token was revoked; challenge an "
                "account that can answer (or the built-in bots: GET /bots)",
                errors={"seats": [f"no active bot account {other!r}"]},
            )
    table: dict[str, Any] = {"seats": seats}
    table.update({k: body[k] for k in TABLE_KEYS if k in body})
    try:
        validate_table(table, len(seats))
    except ValueError as exc:
        raise Problem("invalid-request", str(exc), errors={"time_control": [str(exc)]}) from None


#: what a rated challenge may not choose: its game is the ladder's table
LADDER_TABLE_KEYS = ("options", "timeout_policy", "abandon_after", "bot_pace_seconds")


def _rated(account: str | None, body: dict[str, Any]) -> None:
    """A rated challenge (``body["ladder"]``): check that it fits the ladder and give it the
    ladder's table and the entrant of every seat (``body["entrants"]``). 422 for a body that
    cannot be rated there (naming the field), 403 when the challenger is not an entrant."""
    name = body["ladder"]

    def bad(field: str, detail: str) -> Problem:
        return Problem("invalid-request", detail, errors={field: [detail]})

    if account is None:
        raise bad("ladder", "a rated challenge is between two bot accounts: send your bot token")
    lad = ladders()
    try:
        cfg = lad.config(name)
    except LadderError:
        raise bad("ladder", f"no ladder named {name!r} (GET /ladders lists them)") from None
    others = [a for a in accounts_in(body["seats"]) if a != account]
    if not others:
        raise bad(
            "seats",
            "a rated challenge seats the account you challenge: add "
            '{"kind": "external", "account": "<its id>"}',
        )
    mine = lad.current_entrant(name, account)
    if mine is None:
        raise Problem(
            "forbidden",
            f"your account {account!r} is not an entrant of ladder {name!r}; join it first "
            "(POST /bots/me/ladders) or challenge unrated (leave out ladder)",
        )
    theirs = lad.current_entrant(name, others[0])
    if theirs is None:
        raise bad(
            "seats",
            f"bot account {others[0]!r} is not an entrant of ladder {name!r}: a rated "
            "challenge is between two of its entrants (GET /ladders/{ladder} lists them)",
        )
    if cfg.paused:
        raise Problem(
            "ladder-conflict", f"ladder {name!r} is paused: it starts no game, rated or not"
        )
    n = len(body["seats"])
    if n not in cfg.players:
        raise bad("seats", f"ladder {name!r} plays {cfg.players} players a table, not {n}")
    for key in LADDER_TABLE_KEYS:
        if key in body:
            raise bad(key, f"a rated game plays ladder {name!r}'s table: leave out {key}")
    if body.get("time_control", cfg.time_control) != cfg.time_control:
        raise bad(
            "time_control",
            f"a rated game plays ladder {name!r}'s time control, {cfg.time_control}; "
            "leave out time_control or send that one",
        )
    entrants, used = [], set()
    for seat in body["seats"]:
        if seat["kind"] == "external":
            entrants.append(mine if seat["account"] == account else theirs)
            continue
        free = [e for e in lad.current_bots(name, seat["bot"]) if e not in used]
        if not free:
            raise bad(
                "seats",
                f"ladder {name!r} has no (other) entrant that is the built-in bot "
                f"{seat['bot']!r}; a rated game's bot seats are entrants of the ladder",
            )
        used.add(free[0])
        entrants.append(free[0])
    body["time_control"] = cfg.time_control
    body["options"] = dict(cfg.options)
    body["entrants"] = entrants


def _still_rated(c: dict[str, Any]) -> str | None:
    """Why a rated challenge can no longer start (an account left the ladder, the ladder was
    deleted or paused), or None."""
    name = c["ladder"]
    lad = ladders()
    try:
        cfg = lad.config(name)
    except LadderError:
        return f"ladder {name!r} no longer exists"
    if cfg.paused:
        return f"ladder {name!r} is paused"
    for account in (c["challenger"], c["challenged"]):
        if lad.current_entrant(name, account) is None:
            return f"bot account {account!r} is no longer an entrant of ladder {name!r}"
    return None


def _start(store: Challenges, c: dict[str, Any]) -> str:
    """Create the challenge's game (its accounts seated) and record it as accepted."""
    b = backend()
    check_open_games(b.store)
    game_id = secrets.token_hex(6)
    outcome = {"status": "accepted", "game_id": game_id}
    if not store.decide(c, outcome, tell=False):
        raise _closed(store, c["challenge_id"])
    # (the player's name is the seat claim's, not part of the game's seat configuration)
    table: dict[str, Any] = {
        "seats": [{k: v for k, v in s.items() if k != "name"} for s in c["seats"]]
    }
    table.update({k: c[k] for k in TABLE_KEYS if k in c})
    if c.get("ladder"):  # a rated game: seated as a ladder seats its entrants
        table["ladder"] = c["ladder"]
        for seat, entrant in zip(table["seats"], c["entrants"], strict=True):
            seat["entrant"] = entrant
    # the log says where the game came from: its seats may abort it (``seats.abort``)
    table["challenge"] = c["challenge_id"]
    # a program that timed out ``abandon_after`` times in a row is not waited for: a bot
    # takes its seat for good, as a ladder's results expect (``events.games.time_control``)
    table["hand_over"] = True
    options = c.get("options") or {}
    cfg = current_app.config
    b.games.create(
        len(c["seats"]),
        engine_options(options),
        table=table,
        game_id=game_id,
        retention=(int(cfg["ABANDONED_GAME_SECONDS"]), int(cfg["FINISHED_GAME_SECONDS"])),
    )
    if c.get("secret"):  # a player's: their secret is the seat's token from now on
        seat = human_seat(c["seats"])
        b.tokens.seat_digest(game_id, seat, c["secret"], c["seats"][seat].get("name"))
    if c.get("ladder"):  # recorded on the ladder when it ends
        ladders().add_challenge_game(c["ladder"], game_id, c["entrants"], c["challenge_id"])
    opened_game(game_id)
    store.seat_accounts(game_id, c["seats"])
    if c["challenged"] is None:
        keep = int(cfg["ABANDONED_GAME_SECONDS"]) or KEEP_SECONDS
        store.playing(c["owner"], game_id, max(keep, KEEP_SECONDS))
    store.tell(c, outcome)  # the challenger hears of it once the game exists
    return game_id


def _finished(game_ids: list[str]) -> list[bool]:
    """Whether each game is over (or gone: expired, never created)."""
    return [st is None or st == "finished" for st in Lobby(backend().store).statuses(game_ids)]


def _closed(store: Challenges, cid: str) -> Problem:
    c = store.get(cid)
    status = c["status"] if c is not None else "gone"
    return Problem(
        "not-found",
        f"challenge {cid!r} is no longer open (it is {status}); "
        "GET /bots/me/challenges lists the open ones",
    )


def _load(store: Challenges, cid: str, what: str) -> tuple[dict[str, Any], str]:
    """The challenge and the caller's part in it: "challenger" (its bot account's token, or a
    player's challenge secret) or "challenged" (the asked account's bot token); 401 without a
    token that is either, 403 for another party's."""
    token = bearer_token()
    c = store.get(cid)
    if c is not None and store.holds_secret(c, token):
        return c, "challenger"
    account = bot_account(token)
    if account is None:
        raise Problem(
            "unauthorized",
            f"{what} a challenge needs a bot token (Authorization: Bearer <bot token>) or, for a "
            "player's challenge, the challenge_secret its creation answered (Authorization: "
            "Bearer <challenge_secret>)",
        )
    if c is None:
        raise Problem(
            "not-found",
            f"no challenge {cid!r} (or it was decided or expired over an hour ago); "
            "GET /bots/me/challenges lists yours",
        )
    if account == c["challenger"]:
        return c, "challenger"
    if account == c.get("challenged"):
        return c, "challenged"
    raise Problem(
        "forbidden",
        f"challenge {cid!r} is between others; this bot token's account {account!r} can "
        "neither read nor answer it",
    )


@bp.post("/challenges")
def create() -> Response:
    load_query(_empty)
    # a bot account with its token; a player (someone holding a seat in the browser) without
    account = require_bot("challenging") if bearer_token() is not None else None
    body = load_body(_create)
    _check_table(account, body)
    if "ladder" in body:
        _rated(account, body)
    require_available(body.get("options") or {})
    cfg = current_app.config
    store = _store()
    owner = account or f"addr:{client_address()}"
    who = "a bot account" if account else f"address {client_address()}"
    try:
        if any(a != account for a in accounts_in(body["seats"])):  # it will be open a while
            store.check_open(owner, int(cfg["MAX_OPEN_CHALLENGES"]), who)
            store.count_made(owner, int(cfg["CHALLENGES_PER_MINUTE"]), who)
        else:  # it starts now: bounded by the games it leaves unfinished
            store.check_playing(owner, int(cfg["MAX_OPEN_CHALLENGES"]), _finished, who)
    except Refused as exc:
        raise _refused(exc) from None
    secret = None if account else secrets.token_urlsafe(32)
    cid, c = store.create(account, dict(body), float(cfg["CHALLENGE_SECONDS"]), owner, secret)
    if c["challenged"] is None:  # only built-in bots to ask: it starts now
        _start(store, c)
    out = store.get(cid)
    assert out is not None
    answer = resource(out)
    if secret is not None:  # shown this once
        answer["challenge_secret"] = secret
    return respond(_challenge, answer, status=201, headers={"Location": f"/challenges/{cid}"})


@bp.get("/challenges/<challenge_id>")
def get_challenge(challenge_id: str) -> Response:
    load_query(_empty)
    c, _part = _load(_store(), challenge_id, "reading")
    return respond(_challenge, resource(c), headers={"Cache-Control": "no-store"})


@bp.get("/bots/me/challenges")
def mine() -> Response:
    load_query(_empty)
    account = require_bot("listing your challenges")
    store = _store()
    out = {
        "incoming": [resource(c) for c in store.open_challenges(account, "in")],
        "outgoing": [resource(c) for c in store.open_challenges(account, "out")],
    }
    return respond(_list, out, headers={"Cache-Control": "no-store"})


def _answer(challenge_id: str, what: str) -> tuple[Challenges, dict[str, Any]]:
    load_query(_empty)
    store = _store()
    c, part = _load(store, challenge_id, what)
    wanted = "challenger" if what == "canceling" else "challenged"
    if part != wanted:
        hint = (
            "only the challenger cancels it; decline it instead"
            if what == "canceling"
            else "only the challenged account answers it; cancel it instead"
        )
        raise Problem("forbidden", f"{what} challenge {challenge_id!r}: {hint}")
    if c["status"] != "open":
        raise _closed(store, challenge_id)
    return store, c


@bp.post("/challenges/<challenge_id>/accept")
def accept(challenge_id: str) -> Response:
    store, c = _answer(challenge_id, "accepting")
    load_body(_no_body, optional=True)
    accounts = backend().accounts
    assert accounts is not None
    challenger = accounts.get(c["challenger"]) if c["challenger"] else {"active": True}
    if challenger is None or not challenger["active"]:  # it could not play: no game
        store.decide(c, {"status": "canceled"})
        raise Problem(
            "not-found",
            f"challenge {challenge_id!r} is canceled: its challenger's bot token was revoked; "
            "nothing was started",
        )
    why = _still_rated(c) if c.get("ladder") else None
    if why is not None:  # it could not be rated as asked: no game
        store.decide(c, {"status": "canceled"})
        raise Problem(
            "ladder-conflict",
            f"challenge {challenge_id!r} is canceled: {why}; nothing was started",
        )
    _start(store, c)
    out = store.get(challenge_id)
    assert out is not None
    return respond(_challenge, resource(out))


@bp.post("/challenges/<challenge_id>/decline")
def decline(challenge_id: str) -> Response:
    store, c = _answer(challenge_id, "declining")
    body = load_body(_decline, optional=True) or {}
    outcome = {"status": "declined", "reason": DECLINE_REASONS[0], **body}
    if not store.decide(c, outcome):
        raise _closed(store, challenge_id)
    out = store.get(challenge_id)
    assert out is not None
    return respond(_challenge, resource(out))


@bp.post("/challenges/<challenge_id>/cancel")
def cancel(challenge_id: str) -> Response:
    store, c = _answer(challenge_id, "canceling")
    load_body(_no_body, optional=True)
    if not store.decide(c, {"status": "canceled"}):
        raise _closed(store, challenge_id)
    out = store.get(challenge_id)
    assert out is not None
    return respond(_challenge, resource(out))
