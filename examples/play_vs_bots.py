"""Play a whole game against three built-in bots through the REST API.

    make run                                    # in one terminal
    .venv/bin/python examples/play_vs_bots.py   # in another (URL as first argument, optional)

Seat 0 is "you"; here the heuristic policy answers each of your decisions, the way a client app
would ask its user. The bots' seats are played by the workers `make run` starts.
"""

from __future__ import annotations

import sys
import time

from bots import get_bot
from engine.rng import Rng
from service.client import ApiError, Client


def main(url: str = "http://127.0.0.1:8000") -> int:
    api = Client(url)
    game = api.create_game([{"kind": "human"}, {"kind": "bot", "bot": "heuristic"},
                            {"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "random"}])  # fmt: skip
    gid = game["game_id"]
    api.claim(gid, 0)
    me, rng = get_bot("heuristic"), Rng(1)
    print(f"game {gid}: you are seat 0")
    while True:
        seat = api.view(gid, seat=0)
        view = seat["view"]
        if view.get("result"):
            break
        decision = view.get("decision")
        if decision is None:  # waiting for the bots
            time.sleep(0.05)
            continue
        command = me.act(decision, view, rng)
        try:
            out = api.submit(gid, 0, command, expected_version=seat["version"])
        except ApiError as exc:
            if exc.status == 409:  # a bot moved meanwhile (play is simultaneous): look again
                continue
            raise
        print(f"round {view['round']:>2}  {decision['kind']:<12} -> version {out['version']}")
    result = api.view(gid)["view"]["result"]
    for s in result["scores"]:
        print(f"seat {s['seat']}: {s['total']} VP (chips {s['vp_chips']}, tiles {s['tiles']}, bonuses {s['bonuses']})")
    print(f"winners: {result['winners']}; the log verifies: {api.verify(api.export(gid))['ok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
