"""``rfg replay FILE [--key PUB]``: verify an exported game log; ``rfg signing-key``: print the
public key this machine's server signs its exports with.

``rfg replay`` exits 0 when the log is consistent, complete and (given ``--key``) authentic; 1 when
it is not (the message names the verdict, the first bad event and why); 2 when the file or the key
cannot be read or the file is not a log at all (binary, not JSON Lines, nested too deep, a line
over 1 MiB, a key given twice in one object): one line on stderr, never a traceback. The log is read as a stream, so its size does not matter to memory.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from events.verify.replay import verify_stream
from events.verify.signing import SigningKeyError, load_public_key, load_signer

from . import components


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="verify an exported game log (JSON Lines)",
        description="Re-run an exported log: types, sequence numbers, hash chain, "
        "every command against the rules and every chance outcome against the "
        "revealed seed, completeness, and (with --key) the server's signature.",
    )
    p.add_argument(
        "file", help="the log: the API's export or rfg simulate --export output ('-' for stdin)"
    )
    p.add_argument(
        "--key",
        metavar="PUB",
        help="the server's public key (base64 as served at GET /signing-key or printed "
        "by rfg signing-key, PEM, or a file holding either): also check that the "
        "server signed this very log",
    )
    components.add_argument(p, "an Ambition game was played with")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(func=run)
    k = sub.add_parser(
        "signing-key",
        help="print the public key that signs this server's exports",
        description="Print the public half of the key the API signs exports with "
        "(RFG_SIGNING_KEY, RFG_SIGNING_KEY_FILE, or signing-key.pem in the data directory, "
        "created on first use: $RFG_DATA_DIR, a checkout's run/, else the per-user data "
        "directory - the same wherever rfg is run from).",
    )
    k.add_argument("--json", action="store_true", help="print alg, key_id, public_key and pem")
    k.set_defaults(func=signing_key)


def _chunks(f: Any) -> Any:
    while True:
        chunk = f.read(1 << 16)
        if not chunk:
            return
        yield chunk


def run(args: argparse.Namespace) -> int:
    wrong = components.install(args.components)
    if wrong:
        print(f"rfg replay: --components: {wrong}", file=sys.stderr)
        return 2
    key = None
    if args.key:
        try:
            key = load_public_key(args.key)
        except SigningKeyError as exc:
            print(f"rfg replay: --key: {exc}", file=sys.stderr)
            return 2
    try:
        f = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"rfg replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        with f:
            verdict = verify_stream(_chunks(f), key)
    except OSError as exc:
        print(f"rfg replay: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(verdict.to_dict(), sort_keys=True))
    elif verdict.ok:
        s = verdict.summary
        print(
            f"OK: {verdict.events} events ({verdict.mode}), {verdict.commands} commands re-run; "
            f"consistent and complete"
        )
        print(
            f"  {s['players']} players, rules v{s['rules']}, {s['rounds']} rounds, "
            f"end: {s['end_reason']}"
        )
        print(f"  scores {s['scores']}, winners {s['winners']}")
        print(f"  final state_hash {s['state_hash']}")
        print(f"  authentic: {_authentic(verdict.authentic)} ({verdict.authenticity})")
    else:
        where = f"event {verdict.bad_seq}" if verdict.bad_seq is not None else "the log"
        print(f"BAD ({verdict.verdict}): {where}: {verdict.reason}", file=sys.stderr)
        if not args.components and "Ambition" in (verdict.reason or ""):
            print(
                "  an Ambition game: give the component file it was played with "
                "(rfg replay --components FILE, or RFG_AMBITION_COMPONENTS=FILE)",
                file=sys.stderr,
            )
        if verdict.verdict != "not-authentic" and verdict.authentic is not None:
            print(
                f"  authentic: {_authentic(verdict.authentic)} ({verdict.authenticity})",
                file=sys.stderr,
            )
    if verdict.ok:
        return 0
    return 2 if verdict.verdict == "malformed" else 1


def _authentic(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "not checked"}[value]


def signing_key(args: argparse.Namespace) -> int:
    try:
        info = load_signer().public_info()
    except SigningKeyError as exc:
        print(f"rfg signing-key: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(info, sort_keys=True))
    else:
        print(info["public_key"])
    return 0
