"""``rfg scenario run FILE...``: run conformance scenario files and print pass/fail per file.

The file format is documented in docs/scenarios.md. Exit status: 0 when every file passes, 1 when
any fails, 2 when a file cannot be read or is not a valid scenario.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import yaml

from engine import scenario


def add_parser(sub: Any) -> None:
    p = sub.add_parser("scenario", help="run conformance scenario files",
                       description="Conformance scenarios: a situation, commands, and the expected outcome.")  # fmt: skip
    ssub = p.add_subparsers(dest="action", required=True)
    r = ssub.add_parser("run", help="run scenario files and print pass/fail per file")
    r.add_argument("files", nargs="+", metavar="FILE", help="scenario files (YAML or JSON)")
    r.add_argument(
        "--verbose", "-v", action="store_true", help="also print the events of each scenario"
    )
    r.set_defaults(func=run)


def load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise scenario.ScenarioError("the file must hold one scenario mapping")
    return data


def run(args: argparse.Namespace) -> int:
    failed = broken = 0
    for path in args.files:
        try:
            spec = load(path)
            report = scenario.run(spec)
        except (OSError, yaml.YAMLError, json.JSONDecodeError, scenario.ScenarioError) as exc:
            broken += 1
            print(f"ERROR {path}: {exc}")
            continue
        except Exception as exc:  # an engine bug: report it against the file and go on
            broken += 1
            print(f"ERROR {path}: the engine failed: {type(exc).__name__}: {exc}")
            continue
        name = spec.get("name", "")
        if report["ok"]:
            print(f"pass  {path}  {name}")
        else:
            failed += 1
            print(f"FAIL  {path}  {name}")
            for d in report["diffs"]:
                print(f"        {d}")
        if args.verbose:
            for e in report["events"]:
                print(f"        | {json.dumps(e, sort_keys=True)}")
    total = len(args.files)
    print(
        f"\n{total - failed - broken} passed, {failed} failed"
        + (f", {broken} broken" if broken else "")
    )
    if broken:
        return 2
    return 1 if failed else 0
