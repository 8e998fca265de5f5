"""``rfg`` entry point: one sub-command per module (simulate, ...)."""

from __future__ import annotations

import argparse
import sys

from events.config import BadEnvironment

from . import simulate


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rfg", description="Roll for the Galaxy game server tools"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    simulate.add_parser(sub)
    for name in ("replay", "scenario", "worker", "ladder", "store", "run"):
        mod = _optional(name)
        if mod is not None:
            mod.add_parser(sub)
    return parser


def _optional(name: str):  # type: ignore[no-untyped-def]
    import importlib

    try:
        return importlib.import_module(f"rfgcli.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"rfgcli.{name}":
            return None
        raise


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BadEnvironment as exc:
        print(f"rfg {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
