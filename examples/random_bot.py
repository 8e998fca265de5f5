"""An external ladder bot in plain Python (standard library only): uniformly random legal moves.

    python examples/random_bot.py --register --name my-bot --contact me@example.org   # once
    python examples/random_bot.py --token rfgb_...                                    # then play

The server's URL: ``--url``, else the ``RFG_URL`` environment variable, else
http://127.0.0.1:8000; when nothing listens there it says so in one line (exit status 1).

It uses only the HTTP API: it follows its account's decisions stream
(``GET /bots/me/decisions/stream``, reconnecting with ``Last-Event-ID``), and for each pending
decision reads the seat view (``links.view``) and answers ``view.decision`` with random legal
choices (``POST links.commands`` with the decision's ``decision_id``). An operator enters the account in a
ladder (``POST /ladders/{ladder}/entrants`` with ``{"entrant": ..., "account": ...}``); the
workers then seat it in ladder games. A challenge addressed to the account (``event: challenge``
on the same stream: another bot account, or a player in the browser who chose "A bot account"
for a seat and typed this account's id) is accepted at once (``POST links.accept``), so the game
starts and its decisions arrive like any other; ``--decline-challenges`` declines them instead.
It imports nothing from this project.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

PHASES = ("explore", "develop", "settle", "produce", "ship")


class HttpError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class Api:
    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> Any:
        h = {"Accept": "application/json", **(headers or {})}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = raw.decode("utf-8", "replace")
            raise HttpError(exc.code, problem) from None
        return json.loads(raw) if raw else None

    def get(self, path: str) -> Any:
        return self._request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self._request("POST", path, body)

    def stream(self, path: str, last_event_id: str | None) -> Iterator[tuple[str, str, str | None]]:
        """(event, data, id) of one SSE connection, until the server closes it."""
        h = {"Accept": "text/event-stream", "Authorization": f"Bearer {self.token}"}
        if last_event_id:
            h["Last-Event-ID"] = last_event_id
        req = urllib.request.Request(self.url + path, headers=h)
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            raise HttpError(exc.code, exc.read().decode("utf-8", "replace")) from None
        with resp:
            event: str = "message"
            ident: str | None = None
            data: list[str] = []
            for raw in resp:
                line = raw.decode("utf-8").rstrip("\r\n")
                if not line:
                    if data:
                        yield event, "\n".join(data), ident
                    event, ident, data = "message", None, []
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "event":
                        event = value
                    elif name == "data":
                        data.append(value)
                    elif name == "id":
                        ident = value


# --- random legal choices: one function per decision kind ----------------------------------------
def _chance(rng: random.Random, a: int, b: int) -> bool:
    return rng.randrange(b) < a


def start_tiles(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"kind": "start_tiles", "development": rng.choice(d["options"])["development"]}


def assign(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    col = {x["die"]: x["column"] for x in d["dice"]}
    wild = []
    for die in d["wild_dice"]:
        to = rng.choice(PHASES)
        wild.append({"die": die, "to": to})
        col[die] = to
    selector = rng.choice(sorted(col))
    # optional powers (Dictate, Reassign) are left unused: always legal, keeps this short
    return {
        "kind": "assign",
        "select": {"die": selector, "phase": rng.choice(PHASES)},
        "wild": wild,
    }


def explore(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    if not d["explorers"]:
        return {"kind": "explore", "task": "finish"}
    explorer = rng.choice(d["explorers"])["die"]
    if _chance(rng, 1, 2):
        return {"kind": "explore", "task": "stock", "explorer": explorer}
    abandon = [t for t in d["abandonable"] if _chance(rng, 1, 6)]
    return {"kind": "explore", "task": "scout", "explorer": explorer, "abandon": abandon}


def place_tiles(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    tiles = [x["tile"] for x in d["tiles"]]
    rng.shuffle(tiles)
    out = []
    for t in tiles:
        x: dict[str, Any] = {"tile": t, "as": rng.choice(d["sides"])}
        if d.get("on_top") and _chance(rng, 1, 2):
            x["on_top"] = True
        out.append(x)
    return {"kind": "place_tiles", "placements": out}


def abandon_one(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"kind": "abandon_one", "tile": rng.choice(d["tiles"])}


def construct(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    order = [w["die"] for w in d["workers"]]
    rng.shuffle(order)
    pool = list(d["removable"])
    remove = []
    for _ in d["removals"]:
        die = rng.choice(pool)
        pool.remove(die)
        remove.append(die)
    # follow the completions as the server will: each takes the next 'cost' dice of the stack
    seq = list(d["dice_on_stack"]) + order
    returns: list[list[int]] = []
    r = 0
    for c in d["completions"]:
        if len(seq) < c["cost"]:
            break
        used, seq = seq[: c["cost"]], seq[c["cost"] :]
        die = remove[r] if c["removal"] else None
        r += 1 if c["removal"] else 0
        if die in seq:
            seq.remove(die)
        cands = [x for x in used if x != die]
        n = rng.randrange(min(c["returns_max"], len(cands)) + 1) if c["returns_max"] else 0
        picks = []
        for _ in range(n):
            x = rng.choice(cands)
            cands.remove(x)
            picks.append(x)
        returns.append(picks)
    cmd: dict[str, Any] = {"kind": d["kind"], "order": order, "remove": remove}
    if any(returns):
        cmd["returns"] = returns
    return cmd


def produce(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    producers = [x["die"] for x in d["producers"]]
    rng.shuffle(producers)
    slots = [w["world"] for w in d["worlds"] for _ in range(w["room"])]
    rng.shuffle(slots)
    return {
        "kind": "produce",
        "goods": [{"die": producers[i], "world": slots[i]} for i in range(d["count"])],
    }


def ship(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    shippers = [x["die"] for x in d["shippers"]]
    goods = [x["die"] for x in d["goods"]]
    rng.shuffle(shippers)
    rng.shuffle(goods)
    tasks = [
        {"shipper": shippers[i], "good": goods[i], "action": rng.choice(d["actions"])}
        for i in range(d["count"])
    ]
    return {"kind": "ship", "tasks": tasks}


def manage(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    citizens = [x["die"] for x in d["citizenry"]]
    rng.shuffle(citizens)
    recruit = sorted(citizens[: d["recruit_count"]])
    recall = [x["die"] for x in d["recallable"] if _chance(rng, 1, 4)]
    if d["cup"] == 0 and not recruit and not recall and d["recallable"]:
        recall = [rng.choice(d["recallable"])["die"]]
    return {"kind": "manage", "recruit": recruit, "recall": sorted(recall)}


CHOOSERS = {
    "start_tiles": start_tiles,
    "assign": assign,
    "explore": explore,
    "place_tiles": place_tiles,
    "abandon_one": abandon_one,
    "develop": construct,
    "settle": construct,
    "produce": produce,
    "ship": ship,
    "manage": manage,
}


def choose(decision: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return CHOOSERS[decision["kind"]](decision, rng)


# --- the bot loop --------------------------------------------------------------------------------
class RandomBot:
    def __init__(
        self,
        api: Api,
        seed: int | None = None,
        log: Any = sys.stderr,
        accept_challenges: bool = True,
    ) -> None:
        self.api = api
        self.rng = random.Random(seed)
        self.log = log
        self.accept_challenges = accept_challenges
        self.played = 0
        self.rejected = 0

    def challenged(self, c: dict[str, Any]) -> None:
        """A challenge addressed to this account: accepted (or declined); outcomes are ignored."""
        links = c.get("links") or {}
        if c.get("status") != "open" or "accept" not in links:
            return
        how = "accept" if self.accept_challenges else "decline"
        try:
            answer = self.api.post(links[how], {})
        except HttpError as exc:  # canceled or expired meanwhile: nothing to do
            print(f"challenge {c.get('challenge_id')}: {exc}", file=self.log, flush=True)
            return
        print(
            f"challenge {c.get('challenge_id')}: {answer['status']}"
            + (f", game {answer['game_id']}" if answer.get("game_id") else ""),
            file=self.log,
            flush=True,
        )

    def answer(self, view_path: str, commands_path: str) -> None:
        """Answer the seat's current decision, if it owes one (re-reading after a 409)."""
        for _ in range(5):
            seat = self.api.get(view_path)
            decision = seat["view"].get("decision")
            if not decision:
                return
            command = choose(decision, self.rng)
            # answered by decision_id: applied while the seat still owes this decision, whatever
            # the other seats did meanwhile (an expected_version would be refused each time
            # another seat acts first: a 409 and a read again)
            body: dict[str, Any] = {"command_id": uuid.uuid4().hex, "command": command}
            if decision.get("decision_id") is not None:
                body["decision_id"] = decision["decision_id"]
            else:
                body["expected_version"] = seat["version"]
            try:
                self.api.post(commands_path, body)
                self.played += 1
                return
            except HttpError as exc:
                if exc.status == 409:  # the game moved on (another seat acted): look again
                    continue
                if exc.status == 422:
                    self.rejected += 1
                    print(f"rejected {command}: {exc.body}", file=self.log, flush=True)
                    return
                raise

    def run(self, stop: threading.Event | None = None) -> None:
        """Follow the decisions stream until ``stop`` is set (or the token is revoked)."""
        stop = stop or threading.Event()
        last: str | None = None
        while not stop.is_set():
            try:
                for event, data, ident in self.api.stream("/bots/me/decisions/stream", last):
                    if stop.is_set():
                        return
                    if event == "challenge":
                        self.challenged(json.loads(data))
                        continue
                    if event != "decision":
                        continue
                    last = ident or last
                    d = json.loads(data)
                    self.answer(d["links"]["view"], d["links"]["commands"])
            except HttpError as exc:
                if exc.status in (401, 403):
                    print(f"stopping: {exc}", file=self.log, flush=True)
                    return
                print(f"error: {exc}; reconnecting", file=self.log, flush=True)
                stop.wait(1.0)
            except (OSError, ValueError) as exc:  # connection dropped: reconnect
                print(f"connection: {exc}; reconnecting", file=self.log, flush=True)
                stop.wait(0.5)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--url",
        default=os.environ.get("RFG_URL") or "http://127.0.0.1:8000",
        help="the server (default: $RFG_URL, else http://127.0.0.1:8000)",
    )
    p.add_argument("--token", help="the bot token (or register one with --register)")
    p.add_argument(
        "--register", action="store_true", help="register a bot account, print its id and token"
    )
    p.add_argument("--name", default="random-example")
    p.add_argument("--contact", default="nobody@example.org")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument(
        "--seconds", type=float, default=None, help="stop after this long (default: run forever)"
    )
    p.add_argument(
        "--decline-challenges",
        action="store_true",
        help="decline the challenges addressed to the account (default: accept them)",
    )
    args = p.parse_args(argv)
    try:
        Api(args.url).get("/healthz")
    except urllib.error.URLError as exc:  # refused, unknown host (an HTTP error is an answer)
        print(
            f"nothing listens at {args.url} ({exc.reason}): start the server (make run) or "
            "give its URL (--url, or RFG_URL)",
            file=sys.stderr,
        )
        return 1
    if args.register:
        out = Api(args.url).post(
            "/bots/accounts",
            {
                "name": args.name,
                "contact": args.contact,
                "description": "uniformly random legal moves",
            },
        )
        print(json.dumps({"account_id": out["account_id"], "token": out["token"]}))
        return 0
    if not args.token:
        p.error("--token is required (or --register)")
    bot = RandomBot(
        Api(args.url, args.token), seed=args.seed, accept_challenges=not args.decline_challenges
    )
    stop = threading.Event()
    if args.seconds is not None:
        threading.Timer(args.seconds, stop.set).start()
    try:
        bot.run(stop)
    except KeyboardInterrupt:
        pass
    print(json.dumps({"played": bot.played, "rejected": bot.rejected}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
