"""Play a whole game against three built-in bots through the REST API.

    make run                                    # in one terminal
    .venv/bin/python examples/play_vs_bots.py   # in another: the server's URL as first argument,
                                                # else $RFG_URL, else http://127.0.0.1:8000

Seat 0 is "you"; here the client's own legal-choice policy (``rfg_client.legal_choice``) answers
each of your decisions, the way a client app would ask its user. The bots' seats are played by
the workers `make run` starts. It needs only the `rfg-client` distribution (clients/python;
`pip install ./clients/python`), none of the server's packages: ``Client.play`` follows the
seat's event stream and answers each turn signal by its ``decision_id``, so the bots' moves never
make an answer stale. When nothing listens at the URL it says so in one line (exit status 1).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    from rfg_client import Client, Unreachable, legal_choice
except ImportError:  # a source checkout without `pip install ./clients/python`
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    from rfg_client import Client, Unreachable, legal_choice


def play(api: Client) -> int:
    game = api.create_game(
        [
            {"kind": "human"},
            {"kind": "bot", "bot": "heuristic"},
            {"kind": "bot", "bot": "random"},
            {"kind": "bot", "bot": "random"},
        ]
    )
    gid = game["game_id"]
    api.claim(gid, 0)
    print(f"game {gid} at {api.base_url}: you are seat 0")

    def decide(decision: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        print(
            f"round {view['round']:>2}  {decision['kind']:<12} (decision {decision['decision_id']})"
        )
        return legal_choice(decision, view)

    result = api.play(gid, 0, decide)["result"]
    for s in result["scores"]:
        print(
            f"seat {s['seat']}: {s['total']} VP (chips {s['vp_chips']}, tiles {s['tiles']}, bonuses {[(b['name'], b['vp']) for b in s['bonus_cards']]})"
        )
    print(f"winners: {result['winners']}; the log verifies: {api.verify(api.export(gid))['ok']}")
    return 0


def main(argv: list[str]) -> int:
    api = Client(argv[0] if argv else None)  # None: $RFG_URL, else http://127.0.0.1:8000
    try:
        return play(api)
    except Unreachable as exc:
        print(exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
