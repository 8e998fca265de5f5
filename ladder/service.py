"""Ladders: configuration, entrants, scheduled games, results and the ratings projection.

A ladder's configuration, entrants, games, results and live ratings are stored by
``events.store.ladders`` (one Redis Cluster slot per ladder, so a result is recorded in one
transaction). Each game with an external seat is also added to its account's games and active
games (what the API's decisions stream of that bot account watches).

A ladder game is an ordinary game whose table names the entrant of each seat; built-in bots are
played by the workers, external bots through the API with their bot token.

Entrants are added by the admin (any name), or join an ``open`` ladder themselves: a bot account
joins as the entrant ``acct.<account id>`` (``ACCOUNT_ENTRANT``; the prefix ``acct.`` is kept for
them, so they never meet an admin's name). An entrant that leaves is marked ``left_at`` in its
spec: no longer paired, its results and rating kept; joining again clears the mark (the same
entrant, the same rating). A rated challenge's game (``add_challenge_game``) joins the ladder's
games and is recorded like a scheduled one, without counting against ``concurrency``. The games of a
duplicate set (one seed, every rotation of the seats) are held (``events.games.seeds``) before they are
created: none reveals the seed before the last of them has ended. Results are recorded
once per game (the ``:recorded`` set guards it atomically), in finishing order, and the live
ratings fold each new result; ``rebuild_ratings`` refolds every result from the games' own event
logs, and must equal the live table. A game that ended without a result (aborted) records none.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bots.base import bot_names
from engine.rng import Rng
from events.errors import GameNotFound
from events.games.service import GameService
from events.store.accounts import BotAccountStore
from events.store.ladders import LadderStore

from .pairing import choose_table, seatings
from .ratings import DEFAULT_PROVISIONAL_SIGMA, Entry, RatingTable, Result
from .stats import head_to_head

#: how games end that count for nothing on a ladder (``engine.leaving``: an aborted game)
UNRATED = ("aborted",)

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
RECENT = 50  # results that count as "recent meetings" for pairing
#: the entrant id of a bot account that joins a ladder itself (16 hex digits: 21 characters)
ACCOUNT_ENTRANT = "acct.{account}"
ACCOUNT_PREFIX = "acct."


class LadderError(ValueError):
    """A bad ladder request; the message says what to change."""


class UnknownLadder(LadderError):
    """No ladder of that name (never made, or deleted)."""


class LadderClosed(LadderError):
    """A bot account asked to join a ladder its host has not opened."""


class NotEntrant(LadderError):
    """The account has no entry (or no current one) on the ladder."""


def current(spec: dict[str, Any]) -> bool:
    """Whether an entrant is still in the ladder (it has not left)."""
    return not spec.get("left_at")


@dataclass
class LadderConfig:
    name: str
    players: list[int] = field(default_factory=lambda: [4])
    concurrency: int = 4
    duplicate: bool = False
    time_control: dict[str, Any] = field(default_factory=dict)
    provisional_sigma: float = DEFAULT_PROVISIONAL_SIGMA
    options: dict[str, Any] = field(default_factory=dict)
    #: a paused ladder starts no game; its running games finish and are still recorded
    paused: bool = False
    #: bot accounts may join (and leave) it themselves, with their bot token
    open: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# A duplicate set deals one seed to every rotation of the table at once: an external program
# seated in two games of a set would read in one the dice its opponents roll in the other.
# Built-in bots see only their own game's view. (Spectators: the set's seed is held back until
# its last game ends, and each game publishes its own commitment; ``events.games.seeds``.)
DUPLICATE_EXTERNAL = (
    "ladder {name!r} plays duplicate sets (one deal in every seating at once), where an external "
    "bot could read its opponents' dice in another game of the set; enter external bots in a "
    "ladder created without duplicate sets"
)


OPEN_DUPLICATE = (
    "ladder {name!r} plays duplicate sets, which take no external bot: it cannot be open to bot "
    "accounts joining; open a ladder created without duplicate sets"
)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise LadderError(
            f"ladder and entrant names are 1-64 letters, digits, '_', '.' or '-'; not {name!r}"
        )


class Ladders:
    def __init__(self, client: Any, games: GameService, prefix: str = "rfg") -> None:
        self.client = client
        self.games = games
        self.prefix = prefix
        self.store = LadderStore(client, prefix)
        self.accounts = BotAccountStore(client, prefix)

    # --- configuration -------------------------------------------------------------------
    def create(self, cfg: LadderConfig) -> LadderConfig:
        _check_name(cfg.name)
        if not cfg.players or any(not isinstance(n, int) or not 2 <= n <= 5 for n in cfg.players):
            raise LadderError("players must list player counts from 2 to 5, e.g. [4] or [2, 3, 4]")
        if not 1 <= cfg.concurrency <= 1000:
            raise LadderError("concurrency (games kept running) must be 1-1000")
        if cfg.open and cfg.duplicate:
            raise LadderError(OPEN_DUPLICATE.format(name=cfg.name))
        if not self.store.create(cfg.name, json.dumps(cfg.to_dict())):
            raise LadderError(f"ladder {cfg.name!r} exists already")
        return cfg

    def config(self, name: str) -> LadderConfig:
        raw = self.store.config(name)
        if raw is None:
            raise UnknownLadder(f"no ladder named {name!r}; create it first")
        return LadderConfig(**json.loads(raw))

    def update(
        self,
        name: str,
        *,
        paused: bool | None = None,
        concurrency: int | None = None,
        open: bool | None = None,
    ) -> LadderConfig:
        """Pause or resume a ladder, change how many games it keeps running, open or close it to
        bot accounts joining themselves (closing it keeps the accounts that joined)."""
        if concurrency is not None and not 1 <= concurrency <= 1000:
            raise LadderError("concurrency (games kept running) must be 1-1000")
        changed: list[LadderConfig] = []

        def change(raw: str | None) -> str:
            if raw is None:
                raise UnknownLadder(f"no ladder named {name!r}; create it first")
            cfg = LadderConfig(**json.loads(raw))
            if paused is not None:
                cfg.paused = paused
            if concurrency is not None:
                cfg.concurrency = concurrency
            if open is not None:
                if open and cfg.duplicate:
                    raise LadderError(OPEN_DUPLICATE.format(name=name))
                cfg.open = open
            changed[:] = [cfg]
            return json.dumps(cfg.to_dict())

        self.store.change_config(name, change)
        return changed[0]

    def names(self) -> list[str]:
        return self.store.names()

    def delete(self, name: str) -> int:
        """Delete a ladder: its configuration, entrants, results and ratings. Its running games
        are left to finish as ordinary games (no longer recorded). Returns how many were running.

        Call it while holding the workers' scheduling lock (``workers.ladders.scheduling_lock``)
        so that no scheduler is starting a game of this ladder at the same moment."""
        self.config(name)  # LadderError if there is no such ladder
        running = len(self.running(name))
        self.store.delete(name)
        return running

    def add_entrant(
        self, name: str, entrant: str, bot: str | None = None, account: str | None = None
    ) -> dict[str, Any]:
        """A built-in bot (``bot``) or an external bot account (``account``) joins the ladder."""
        self.config(name)
        _check_name(entrant)
        if entrant.startswith(ACCOUNT_PREFIX):
            raise LadderError(
                f"entrant names starting with {ACCOUNT_PREFIX!r} are those of bot accounts that "
                "joined themselves (POST /bots/me/ladders); choose another name"
            )
        if (bot is None) == (account is None):
            raise LadderError(
                "an entrant is either a built-in bot (bot=...) or an external bot account (account=...)"
            )
        if bot is not None and bot not in bot_names():
            raise LadderError(f"unknown built-in bot {bot!r}; built-in bots: {bot_names()}")
        if account is not None and self.config(name).duplicate:
            raise LadderError(DUPLICATE_EXTERNAL.format(name=name))
        if account is not None and (there := self.current_entrant(name, account)) is not None:
            raise LadderError(
                f"bot account {account!r} is an entrant of {name!r} already, as {there!r} "
                "(one account plays one entrant: it would be seated against itself)"
            )
        spec = {"entrant": entrant, "bot": bot} if bot else {"entrant": entrant, "account": account}
        if not self.store.add_entrant(name, entrant, json.dumps(spec)):
            raise LadderError(f"{entrant!r} is already an entrant of {name!r}")
        return spec

    def entrants(self, name: str) -> dict[str, dict[str, Any]]:
        """Every entrant of the ladder, those that left too (``current`` tells)."""
        return {k: json.loads(v) for k, v in self.store.entrants(name).items()}

    def entries_of(self, name: str, account: str) -> dict[str, dict[str, Any]]:
        """The entrants of ``account`` on the ladder (left or not): the one it joined as, and any
        the admin added for it."""
        return {e: s for e, s in self.entrants(name).items() if s.get("account") == account}

    def join(self, name: str, account: str, now: str) -> tuple[dict[str, Any], bool]:
        """The bot account enters the open ladder ``name``: (its entrant, whether it is new to
        the ladder's current entrants). An account that left comes back as the entrant it was
        (the one it joined as, else the first the admin entered it as), rating kept; one already
        in is answered its entrant. ``LadderClosed`` for a ladder not open, ``LadderError`` for
        a duplicate-set ladder or an unknown one."""
        cfg = self.config(name)
        if not cfg.open:
            raise LadderClosed(
                f"ladder {name!r} is not open to bot accounts joining themselves; its host "
                "opens it (PATCH /ladders/{ladder} with open: true) or enters you"
            )
        if cfg.duplicate:
            raise LadderError(DUPLICATE_EXTERNAL.format(name=name))
        mine = self.entries_of(name, account)
        if any(current(s) for s in mine.values()):
            return next(s for e, s in sorted(mine.items()) if current(s)), False
        entrant = ACCOUNT_ENTRANT.format(account=account)
        if mine:  # back as the entrant it joined as (else the admin's): one entrant an account
            back = entrant if entrant in mine else min(mine)
            spec = mine[back]
            spec.pop("left_at", None)
            self.store.set_entrant(name, back, json.dumps(spec))
            return spec, True
        spec = {"entrant": entrant, "account": account, "joined_at": now}
        if self.store.add_entrant(name, entrant, json.dumps(spec)):
            return spec, True
        there = self.entrants(name).get(entrant)  # a join racing this one wrote it first
        if there is not None and there.get("account") == account:
            return there, False
        raise LadderError(f"entrant {entrant!r} of {name!r} is not account {account!r}")

    def leave(self, name: str, account: str, now: str) -> list[str]:
        """The account leaves the ladder (every entrant it is there as): paired no more, its
        results and rating kept, its running games played on and recorded. Returns the entrants
        that left; ``NotEntrant`` when it has no current entry."""
        self.config(name)
        mine = {e: s for e, s in self.entries_of(name, account).items() if current(s)}
        if not mine:
            raise NotEntrant(f"bot account {account!r} is not an entrant of ladder {name!r}")
        for e, spec in sorted(mine.items()):
            spec["left_at"] = now
            self.store.set_entrant(name, e, json.dumps(spec))
        return sorted(mine)

    def current_entrant(self, name: str, account: str) -> str | None:
        """The entrant the account plays as on the ladder now (the first by name), or None."""
        mine = sorted(e for e, s in self.entries_of(name, account).items() if current(s))
        return mine[0] if mine else None

    def current_bots(self, name: str, bot: str) -> list[str]:
        """The ladder's current entrants that are the built-in bot ``bot``, by name."""
        return sorted(
            e for e, s in self.entrants(name).items() if current(s) and s.get("bot") == bot
        )

    def standings_of(self, account: str) -> list[dict[str, Any]]:
        """Every ladder entry of the account (left ones too), with its row of the ladder's
        leaderboard (``leaderboard``: the source of a rating)."""
        out = []
        for name in self.names():
            try:
                mine = self.entries_of(name, account)
                if not mine:
                    continue
                cfg = self.config(name)
                rows = {r["entrant"]: r for r in self.leaderboard(name)}
            except LadderError:  # deleted meanwhile
                continue
            for e, spec in sorted(mine.items()):
                out.append(
                    {
                        "ladder": name,
                        "entrant": e,
                        "open": cfg.open,
                        "left_at": spec.get("left_at"),
                        "standing": rows[e],
                    }
                )
        return out

    # --- games ---------------------------------------------------------------------------
    def ladder_games(self, name: str) -> dict[str, dict[str, Any]]:
        return {k: json.loads(v) for k, v in self.store.games(name).items()}

    def games_page(
        self, name: str, *, status: str | None = None, limit: int = 20, before: int | None = None
    ) -> tuple[list[dict[str, Any]], int | None]:
        """A page of the ladder's games, for people to watch or replay: the games under way first
        (all of them: at most ``concurrency`` a set), then the finished ones, newest result first,
        ``limit`` at a time. ``before`` (the cursor, a result number) continues after the page
        that handed it back; ``status`` keeps only ``active`` or ``finished`` games. Returns
        (games, the next page's cursor or None). Each game: its id, status, entrants by seat,
        round, creation and end times, winners (seats), and the result's totals once recorded.
        """
        items: list[dict[str, Any]] = []
        if before is None and status != "finished":
            for gid, info in self.ladder_games(name).items():
                if info["status"] == "active":
                    items += self._listed(gid, info["seats"], None)
            items.sort(key=lambda g: g["created_at"], reverse=True)
            if status == "active":
                items = [g for g in items if g["status"] == "active"]
        if status == "active":
            return items, None
        total = self.store.result_count(name)
        end = total if before is None else max(0, min(before, total))
        start = max(0, end - limit)
        rows = self.store.results(name, start, end - 1) if end > start else []
        for raw in reversed(rows):
            d = json.loads(raw)
            items += self._listed(d["game_id"], list(d["entrants"]), list(d["totals"]))
        return items, (start if start > 0 else None)

    def _listed(
        self, gid: str, entrants: list[str], totals: list[float] | None
    ) -> list[dict[str, Any]]:
        """One game of the list (none if its game is gone: expired or deleted)."""
        try:
            summary = json.loads(self.games.view(gid, "summary")[1])
        except GameNotFound:
            return []
        return [
            {
                "game_id": gid,
                "status": summary["status"],
                "entrants": entrants,
                "round": summary["round"],
                "created_at": summary["created_at"],
                "finished_at": summary.get("finished_at"),
                "winners": summary.get("winners"),
                "totals": totals,
            }
        ]

    def running(self, name: str, scheduled: bool = False) -> list[str]:
        """The ladder's games under way (``scheduled``: only those the scheduler started, not
        rated challenges')."""
        return [
            g
            for g, info in self.ladder_games(name).items()
            if info["status"] == "active" and not (scheduled and info.get("challenge"))
        ]

    def add_challenge_game(self, name: str, game_id: str, entrants: list[str], cid: str) -> None:
        """A rated challenge's game (``entrants`` by seat) joins the ladder's games: recorded
        when it ends (``record_finished``) as a scheduled one is."""
        info = {"seats": entrants, "seed_set": None, "status": "active", "challenge": cid}
        self.store.set_game(name, game_id, json.dumps(info))

    def seat_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        if spec.get("bot"):
            return {"kind": "bot", "bot": spec["bot"], "entrant": spec["entrant"]}
        return {"kind": "external", "account": spec["account"], "entrant": spec["entrant"]}

    def schedule(
        self, name: str, rng_seed: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Start games until ``concurrency`` are running, but at most ``limit`` games (a duplicate
        set cut short by it stays incomplete); returns the new game ids."""
        cfg = self.config(name)
        entrants = {e: spec for e, spec in self.entrants(name).items() if current(spec)}
        self.record_finished(name)
        free = cfg.concurrency - len(self.running(name, scheduled=True))
        if limit is not None:
            free = min(free, limit)
        if free <= 0 or cfg.paused:
            return []
        if cfg.duplicate:  # defence in depth: entrants stored before add_entrant refused them
            entrants = {e: spec for e, spec in entrants.items() if spec.get("bot")}
        table = self.live_table(name)
        ratings = {e: table.entries[e].rating if e in table.entries else 0.0 for e in entrants}
        played = {e: table.entries[e].games if e in table.entries else 0 for e in entrants}
        for g in self.running(name):  # count running games so newcomers spread out
            for e in self.ladder_games(name)[g]["seats"]:
                played[e] = played.get(e, 0) + 1
        meetings: Counter[tuple[str, str]] = Counter()
        for res in self.results(name)[-RECENT:]:
            for i, a in enumerate(res.entrants):
                for b in res.entrants[i + 1 :]:
                    meetings[tuple(sorted((a, b)))] += 1  # type: ignore[index]
        rng = Rng.from_seed(rng_seed or secrets.token_hex(8))
        counts = [n for n in cfg.players if n <= len(entrants)]
        if not counts:
            raise LadderError(
                f"ladder {name!r} needs at least {min(cfg.players)} entrants; it has {len(entrants)}"
            )
        created: list[str] = []
        while free > 0 and (limit is None or len(created) < limit):
            n = rng.choice(counts)
            table_entrants = choose_table(sorted(entrants), n, ratings, played, meetings, rng)
            seed = secrets.token_hex(16)
            orders = seatings(table_entrants, cfg.duplicate, rng)
            if limit is not None:
                orders = orders[: limit - len(created)]
            gids = [secrets.token_hex(6) for _ in orders]
            if cfg.duplicate:  # the first game of the set to end must not reveal the others' seed
                self.games.holds.hold(gids)
            for order, gid in zip(orders, gids, strict=True):
                seats = [self.seat_spec(entrants[e]) for e in order]
                tbl = {"seats": seats, "ladder": name, "time_control": cfg.time_control}
                self.games.create(n, dict(cfg.options), seed=seed, table=tbl, game_id=gid)
                info = {
                    "seats": order,
                    "seed_set": seed if cfg.duplicate else None,
                    "status": "active",
                }
                self.store.set_game(name, gid, json.dumps(info))
                for seat in seats:
                    if seat["kind"] == "external":
                        self.accounts.seated(seat["account"], gid)
                created.append(gid)
                for e in order:
                    played[e] = played.get(e, 0) + 1
            for i, a in enumerate(table_entrants):
                for b in table_entrants[i + 1 :]:
                    meetings[tuple(sorted((a, b)))] += 1  # type: ignore[index]
            free -= n if cfg.duplicate else 1
        return created

    # --- results and ratings ---------------------------------------------------------------
    def record_finished(self, name: str) -> int:
        """Record the result of every finished ladder game not yet recorded; returns how many.
        A game that ended without a result (``UNRATED``: aborted) is marked so and recorded
        nowhere: no result, no rating change, never a meeting of its entrants.
        A duplicate set found ended meanwhile is released (``events.games.seeds``): its games' seeds
        and full logs are revealed."""
        n = 0
        for gid, info in self.ladder_games(name).items():
            if info["status"] != "active":
                continue
            state, _, _ = self.games.load(gid)
            if not state.over:
                continue
            if state.end_reason in UNRATED:  # called off: no result, the game is only over
                self.store.set_game(name, gid, json.dumps({**info, "status": state.end_reason}))
                if info.get("seed_set"):
                    self.games.holds.running(gid)
                continue
            if self.record(name, gid, info["seats"], state.scores):
                n += 1
                if info.get("seed_set"):
                    self.games.holds.running(gid)
        return n

    def record(
        self, name: str, game_id: str, entrants: list[str], scores: list[dict[str, Any]]
    ) -> bool:
        """Append one result and fold it into the live ratings, exactly once per game."""
        result = Result.from_game(game_id, entrants, scores)
        provisional_sigma = self.config(name).provisional_sigma

        def fold(ratings: str | None) -> tuple[str, str, str]:
            table = self._table_from(ratings, provisional_sigma)
            table.apply(result)
            info = {"seats": entrants, "status": "finished"}
            return json.dumps(result.__dict__), json.dumps(_dump(table)), json.dumps(info)

        return self.store.record(name, game_id, fold)

    def results(self, name: str) -> list[Result]:
        out = []
        for raw in self.store.results(name):
            d = json.loads(raw)
            out.append(
                Result(
                    d["game_id"], tuple(d["entrants"]), tuple(d["totals"]), tuple(d["tiebreaks"])
                )
            )
        return out

    def _table_from(self, raw: str | None, provisional_sigma: float) -> RatingTable:
        table = RatingTable(provisional_sigma)
        if raw:
            d = json.loads(raw)
            table.applied = d["applied"]
            for e in d["entries"]:
                table.entries[e["entrant"]] = Entry(
                    e["entrant"], e["mu"], e["sigma"], e["games"], e["wins"], e["history"]
                )
        return table

    def live_table(self, name: str) -> RatingTable:
        return self._table_from(self.store.ratings(name), self.config(name).provisional_sigma)

    def rebuild_ratings(self, name: str) -> RatingTable:
        """Refold every result from the games' own logs, in the recorded finishing order."""
        table = RatingTable(self.config(name).provisional_sigma)
        games = self.ladder_games(name)
        for res in self.results(name):
            state, _, _ = self.games.load(res.game_id)
            if not state.over:
                raise LadderError(f"game {res.game_id} has a result but its log does not end")
            table.apply(Result.from_game(res.game_id, games[res.game_id]["seats"], state.scores))
        return table

    def leaderboard(self, name: str) -> list[dict[str, Any]]:
        table = self.live_table(name)
        rows = table.leaderboard()
        listed = {r["entrant"] for r in rows}
        for e in sorted(self.entrants(name)):
            if e not in listed:
                rows.append(Entry(e).to_dict(table.provisional_sigma) | {"position": None})
        return rows

    def seat_ratings(self, name: str, seats: list[dict[str, Any]]) -> list[float | None]:
        """The rating on ladder ``name`` of each seat's entrant, as its leaderboard shows it (the
        conservative ``mu - 3 sigma``): the seat's ``entrant``, else the entrant of its
        ``account``. None for a seat that is neither, and for every seat when there is no such
        ladder (one read of the entrants and one of the ratings for them all)."""
        raw = self.store.config(name)
        if raw is None:
            return [None for _ in seats]
        cfg = LadderConfig(**json.loads(raw))
        entrants = self.entrants(name)
        by_account: dict[str, str] = {}  # (its current entrant first, as ``current_entrant``)
        for e, spec in sorted(entrants.items(), key=lambda kv: (not current(kv[1]), kv[0])):
            if spec.get("account"):
                by_account.setdefault(spec["account"], e)
        table = self._table_from(self.store.ratings(name), cfg.provisional_sigma)
        out: list[float | None] = []
        for seat in seats:
            entrant = seat.get("entrant") or by_account.get(str(seat.get("account")))
            if entrant in table.entries:
                out.append(table.entries[entrant].to_dict(cfg.provisional_sigma)["rating"])
            elif entrant in entrants:
                out.append(Entry(entrant).to_dict(cfg.provisional_sigma)["rating"])
            else:
                out.append(None)
        return out

    def history(self, name: str, entrant: str) -> list[dict[str, Any]]:
        table = self.live_table(name)
        if entrant not in self.entrants(name):
            raise LadderError(f"{entrant!r} is not an entrant of {name!r}")
        return table.entries[entrant].history if entrant in table.entries else []

    def head_to_head(self, name: str) -> list[dict[str, Any]]:
        return head_to_head(self.results(name))


def _dump(table: RatingTable) -> dict[str, Any]:
    return {
        "applied": table.applied,
        "entries": [
            {
                "entrant": e.entrant,
                "mu": e.mu,
                "sigma": e.sigma,
                "games": e.games,
                "wins": e.wins,
                "history": e.history,
            }
            for e in sorted(table.entries.values(), key=lambda e: e.entrant)
        ],
    }


def tables_equal(a: RatingTable, b: RatingTable) -> bool:
    return _dump(a) == _dump(b)
