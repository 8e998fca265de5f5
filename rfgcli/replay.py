"""``rfg replay FILE``: verify an exported game log and print a summary.

Exit status 0 when the log verifies, 1 when some event is bad (the message names the first one),
2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from events.replay import verify_text


def add_parser(sub: Any) -> None:
    p = sub.add_parser("replay", help="verify an exported game log (JSON Lines)",
                       description="Re-apply an exported log: sequence numbers, hash chain, every chance "
                       "outcome against the revealed seed, each command's outcome, the final scores.")  # fmt: skip
    p.add_argument(
        "file", help="the log: the API's export or rfg simulate --export output ('-' for stdin)"
    )
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    except OSError as exc:
        print(f"rfg replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    verdict = verify_text(text)
    if args.json:
        print(json.dumps(verdict.to_dict(), sort_keys=True))
    elif verdict.ok:
        s = verdict.summary
        print(f"OK: {verdict.events} events ({verdict.mode}), {verdict.commands} commands re-run")
        print(
            f"  {s['players']} players, {s['rounds']} rounds, over: {s['over']}, end: {s['end_reason']}"
        )
        print(f"  scores {s['scores']}, winners {s['winners']}")
        print(f"  final state_hash {s['state_hash']}")
    else:
        where = f"event {verdict.bad_seq}" if verdict.bad_seq is not None else "the log"
        print(f"BAD: {where}: {verdict.reason}", file=sys.stderr)
    return 0 if verdict.ok else 1
