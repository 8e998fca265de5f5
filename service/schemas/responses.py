"""Response schemas: what each endpoint answers (``schema.dump``), mirrored in openapi.yaml.

Views (``view``) and events (``event``) are the engine's own JSON (``engine.observe`` and
``engine.redact``) passed through untouched: the service never edits what a viewer may see.
"""

from __future__ import annotations

from marshmallow import Schema, fields


class ProblemSchema(Schema):
    """RFC 9457 problem details, with this API's extension members."""

    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    instance = fields.String()
    # extension members, present when they apply
    code = fields.String()  # the engine's IllegalCommand code
    field = fields.String(allow_none=True)
    value = fields.Raw(allow_none=True)
    errors = fields.Raw()  # field -> messages, for invalid requests
    current_version = fields.Integer()
    expected_version = fields.Integer()
    decision_id = fields.Integer()  # decision-changed: the decision the command named
    current_decision_id = fields.Integer(allow_none=True)  # and the seat's decision now
    current_decision_kind = fields.String(allow_none=True)
    max_bytes = fields.Integer()
    limit = fields.String()  # the limit a 429 hit
    retry_after = fields.Integer()  # seconds, as in Retry-After


class StatusSchema(Schema):
    status = fields.String()


class LinksField(fields.Dict):
    def __init__(self) -> None:
        super().__init__(keys=fields.String(), values=fields.String())


class SeatInfoSchema(Schema):
    seat = fields.Integer()
    kind = fields.String()
    bot = fields.String()
    account = fields.String()
    entrant = fields.String()
    claimed = fields.Boolean()
    name = fields.String()
    invited = fields.Boolean()
    host = fields.Boolean()


class GameSchema(Schema):
    game_id = fields.String()
    status = fields.String()
    players = fields.Integer()
    seats = fields.List(fields.Nested(SeatInfoSchema))
    options = fields.Dict()
    round = fields.Integer()
    version = fields.Integer()
    created_at = fields.String()
    finished_at = fields.String(allow_none=True)
    winners = fields.List(fields.Integer(), allow_none=True)
    end_reason = fields.String(allow_none=True)
    timeouts = fields.List(fields.Integer())
    abandoned = fields.List(fields.Integer())
    away = fields.List(fields.Integer())
    bot_decisions = fields.List(fields.Integer())
    resigned = fields.List(fields.Integer())
    next_deadline = fields.String(allow_none=True)
    bot_pace_seconds = fields.Float()
    challenge = fields.String(allow_none=True)
    links = LinksField()


class GamePageSchema(Schema):
    items = fields.List(fields.Nested(GameSchema))
    next_cursor = fields.String(allow_none=True)


class ViewSchema(Schema):
    game_id = fields.String()
    version = fields.Integer()
    at = fields.Integer()  # a replay step (?at=N): the event the view is at
    events = fields.Integer()  # ... and how many events the finished game's log holds
    view = fields.Raw()


class SeatViewSchema(ViewSchema):
    seat = fields.Integer()


class SeatClaimSchema(Schema):
    game_id = fields.String()
    seat = fields.Integer()
    token = fields.String()
    token_type = fields.String()
    links = LinksField()


class InviteSchema(Schema):
    game_id = fields.String()
    seat = fields.Integer()
    invite = fields.String()
    link = fields.String()
    claim = fields.String()


class MoveSchema(Schema):
    game_id = fields.String()
    seat = fields.Integer()
    move = fields.String()
    link = fields.String()
    claim = fields.String()
    expires_at = fields.String()


class FeedItemSchema(Schema):
    seq = fields.Integer()
    type = fields.String()
    actor = fields.String()
    ts = fields.String()
    command_id = fields.String()
    event = fields.Raw()


class FeedSchema(Schema):
    game_id = fields.String()
    viewer = fields.String()
    events = fields.List(fields.Nested(FeedItemSchema))
    next_after = fields.Integer()
    more = fields.Boolean()


class CommandResultSchema(Schema):
    game_id = fields.String()
    seat = fields.Integer()
    command_id = fields.String()
    version = fields.Integer()
    first_seq = fields.Integer()
    last_seq = fields.Integer()
    #: feed items exactly as ``events.games.projections.feed_item`` builds them (FeedItemSchema's fields);
    #: passed through as they are, on the hot path of every command
    events = fields.List(fields.Raw())


class VerdictSchema(Schema):
    ok = fields.Boolean()
    verdict = fields.String()
    consistent = fields.Boolean()
    complete = fields.Boolean()
    authentic = fields.Boolean(allow_none=True)
    authenticity = fields.String()
    origin = fields.String()
    events = fields.Integer()
    commands = fields.Integer()
    mode = fields.String()
    first_bad_event = fields.Integer(allow_none=True)
    reason = fields.String()
    summary = fields.Raw()


class SigningKeySchema(Schema):
    alg = fields.String()
    key_id = fields.String()
    public_key = fields.String()
    pem = fields.String()


class BotsSchema(Schema):
    bots = fields.List(fields.String())


class CatalogueSchema(Schema):
    phases = fields.List(fields.String())
    dice = fields.Raw()
    factions = fields.Raw()
    home_worlds = fields.Raw()
    tiles = fields.Raw()
    names = fields.Raw()
    decisions = fields.Raw()
    ambition = fields.Raw()


class ProblemTypeSchema(Schema):
    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    description = fields.String()


class IndexSchema(Schema):
    name = fields.String()
    links = LinksField()


class BotAccountSchema(Schema):
    account_id = fields.String()
    name = fields.String()
    description = fields.String()
    contact = fields.String()
    created_at = fields.String()
    revoked_at = fields.String(allow_none=True)
    active = fields.Boolean()
    links = LinksField()


class BotRegistrationSchema(BotAccountSchema):
    token = fields.String()
    token_type = fields.String()


class BotTokenSchema(Schema):
    account_id = fields.String()
    token = fields.String()
    token_type = fields.String()
    links = LinksField()


class LadderSchema(Schema):
    name = fields.String()
    players = fields.List(fields.Integer())
    concurrency = fields.Integer()
    duplicate = fields.Boolean()
    time_control = fields.Dict()
    provisional_sigma = fields.Float()
    options = fields.Dict()
    paused = fields.Boolean()
    open = fields.Boolean()
    entrants = fields.List(fields.Dict())
    running = fields.Integer()
    results = fields.Integer()
    links = LinksField()


class LadderListSchema(Schema):
    ladders = fields.List(fields.String())


class EntrantSchema(Schema):
    entrant = fields.String()
    bot = fields.String()
    account = fields.String()
    joined_at = fields.String()
    left_at = fields.String()


class MyLadderSchema(Schema):
    ladder = fields.String()
    entrant = fields.String()
    open = fields.Boolean()
    left_at = fields.String(allow_none=True)
    rating = fields.Float()
    standing = fields.Dict()
    links = LinksField()


class MyLaddersSchema(Schema):
    ladders = fields.List(fields.Nested(MyLadderSchema))


class LeaderboardSchema(Schema):
    ladder = fields.String()
    applied = fields.Integer()
    rows = fields.List(fields.Dict())


class HistorySchema(Schema):
    ladder = fields.String()
    entrant = fields.String()
    history = fields.List(fields.Dict())


class LadderGameSchema(Schema):
    game_id = fields.String()
    status = fields.String()
    entrants = fields.List(fields.String())
    round = fields.Integer()
    created_at = fields.String()
    finished_at = fields.String(allow_none=True)
    winners = fields.List(fields.Integer(), allow_none=True)
    totals = fields.List(fields.Float(), allow_none=True)
    links = LinksField()


class LadderGamesSchema(Schema):
    ladder = fields.String()
    games = fields.List(fields.Nested(LadderGameSchema))
    next_cursor = fields.String(allow_none=True)


class AccountGamesSchema(Schema):
    games = fields.List(fields.Dict())
    next_cursor = fields.String(allow_none=True)


class HeadToHeadSchema(Schema):
    ladder = fields.String()
    pairs = fields.List(fields.Dict())
