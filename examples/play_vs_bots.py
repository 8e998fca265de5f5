"""Play a whole game against three built-in bots through the REST API.

    make run                                    # in one terminal
    .venv/bin/python examples/play_vs_bots.py   # in another (URL as first argument, optional)

Seat 0 is "you"; here the heuristic policy answers each of your decisions, the way a client app
would ask its user. The bots' seats are played by the workers `make run` starts. The client is
the `rfg-client` distribution (clients/python; `pip install ./clients/python`): it answers each
decision by its `decision_id`, so the bots' moves never make an answer stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bots import get_bot
from engine.rng import Rng

try:
    from rfg_client import Client
except ImportError:  # a source checkout without `pip install ./clients/python`
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    from rfg_client import Client


def main(url: str = "http://127.0.0.1:8000") -> int:
    api = Client(url)
    game = api.create_game([{"kind": "human"}, {"kind": "bot", "bot": "heuristic"},
                            {"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "random"}])
    gid = game["game_id"]
    api.claim(gid, 0)
    me, rng = get_bot("heuristic"), Rng(1)
    print(f"game {gid}: you are seat 0")

    def decide(decision: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        print(f"round {view['round']:>2}  {decision['kind']:<12} (decision {decision['decision_id']})")
        return me.act(decision, view, rng)

    # each decision answered by its decision_id (a 409 is read again), waiting for the bots between
    result = api.play(gid, 0, decide)["result"]
    for s in result["scores"]:
        print(f"seat {s['seat']}: {s['total']} VP (chips {s['vp_chips']}, tiles {s['tiles']}, bonuses {[(b['name'], b['vp']) for b in s['bonus_cards']]})")
    print(f"winners: {result['winners']}; the log verifies: {api.verify(api.export(gid))['ok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
