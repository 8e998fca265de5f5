"""A bot account plays games from its own challenges, the way the TypeScript example bot does
(clients/typescript/examples/play-vs-bots.ts), with the Python client alone.

    make run                                                  # in one terminal
    .venv/bin/python examples/challenge_vs_bots.py [SERVER_URL] [BOT...]

SERVER_URL: the first argument, else ``$RFG_URL``, else http://127.0.0.1:8000; the opponents: the
built-in bots named (default one ``heuristic``). It registers a bot account once (or uses
``$RFG_BOT_TOKEN``: a bot registers once and keeps its token), then for each of ``$RFG_GAMES``
games (default 1): challenges the built-in bots (``POST /challenges``: the game starts at once),
follows its seat's stream and answers each turn signal by its ``decision_id``
(``Client.play``), and downloads the game's log (``GET /games/{id}/seats/{n}/log``). It prints
one JSON line per game: the game, its result, the answers counted by status, the log's kind and
length. With ``RFG_RECORD=<file>`` every exchange is written there as JSON Lines (the streams'
and the log's bodies included). It needs only the ``rfg-client`` sources; when nothing listens
at the URL it says so in one line (exit status 1).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

try:
    from rfg_client import Client, Unreachable, legal_choice
except ImportError:  # a source checkout without `pip install ./clients/python`
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    from rfg_client import Client, Unreachable, legal_choice


def play_one(api: Client, account_id: str, opponents: list[str], statuses: Counter[int]) -> dict:
    seats = [{"kind": "external", "account": account_id}]
    seats += [{"kind": "bot", "bot": bot} for bot in opponents]
    challenge = api.challenge(seats)
    gid = challenge["game_id"]
    if gid is None:
        raise SystemExit(f"the challenge is {challenge['status']}, without a game")
    seat = next(s["seat"] for s in api.game(gid)["seats"] if s.get("account") == account_id)
    decisions = Counter[str]()

    def decide(decision: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        decisions[decision["kind"]] += 1
        return legal_choice(decision, view)

    final = api.play(gid, seat, decide)
    _status, headers, raw = api.request(
        "GET", f"/games/{gid}/seats/{seat}/log", token=api.bot_token
    )
    return {
        "game_id": gid,
        "seat": seat,
        "account": account_id,
        "decisions": sum(decisions.values()),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "result": final.get("result"),
        "log_kind": {k.lower(): v for k, v in headers.items()}.get("log-kind"),
        "log_lines": len(raw.splitlines()),
    }


def main(argv: list[str]) -> int:
    statuses: Counter[int] = Counter()
    recorded: list[dict[str, Any]] = []

    def record(exchange: dict[str, Any]) -> None:
        statuses[exchange["status"]] += 1
        recorded.append(exchange)

    api = Client(argv[0] if argv else None, bot_token=os.environ.get("RFG_BOT_TOKEN"))
    api.record = record
    opponents = argv[1:] or ["heuristic"]
    try:
        if api.bot_token is None:
            name = f"py-example-{uuid.uuid4().hex[:8]}"
            api.register_bot(name, "legal random moves", "nobody@example.org")
        account_id = api.me()["account_id"]
        for _ in range(int(os.environ.get("RFG_GAMES", "1"))):
            report = play_one(api, account_id, opponents, statuses)
            print(json.dumps(report), flush=True)
            statuses.clear()
    except Unreachable as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        if os.environ.get("RFG_RECORD"):
            with open(os.environ["RFG_RECORD"], "w", encoding="utf-8") as out:
                out.writelines(json.dumps(x) + "\n" for x in recorded)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
