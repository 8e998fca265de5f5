"""``rfg scenario run FILE...``: run conformance scenario files and print pass/fail per file.

The file format is documented in docs/scenarios.md. Exit status: 0 when every file passes, 1 when
any fails, 2 when a file cannot be read or is not a valid scenario.

Files are untrusted input: at most ``MAX_BYTES``, nested at most ``scenario.MAX_DEPTH`` deep,
YAML without aliases or anchors (a few KB of nested aliases - "billion laughs" - expand to
gigabytes), and the scenario's shape is checked field by field (``scenario.validate``) before
the engine sees it; a game that runs on by itself stops after ``scenario.MAX_ROUNDS`` rounds.
Each broken file gives one ``ERROR <file>: <field>: <problem>`` line.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import yaml

from engine import scenario

from . import components


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scenario",
        help="run conformance scenario files",
        description="Conformance scenarios: a situation, commands, and the expected outcome.",
    )
    ssub = p.add_subparsers(dest="action", required=True)
    r = ssub.add_parser("run", help="run scenario files and print pass/fail per file")
    r.add_argument("files", nargs="+", metavar="FILE", help="scenario files (YAML or JSON)")
    r.add_argument(
        "--verbose", "-v", action="store_true", help="also print the events of each scenario"
    )
    components.add_argument(r, "the scenarios with 'ambition: true' play with")
    r.set_defaults(func=run)


MAX_BYTES = 1024 * 1024


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases (so no alias explosion) and with a depth limit
    (the composer recurses once per level)."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise scenario.ScenarioError(
                f"line {event.start_mark.line + 1}: YAML anchors and aliases (&name, *name) are "
                f"not allowed in scenario files; write the value out"
            )
        self.depth += 1
        if self.depth > scenario.MAX_DEPTH:
            raise scenario.ScenarioError(
                f"line {event.start_mark.line + 1}: nested more than {scenario.MAX_DEPTH} levels deep"
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def parse(text: str, *, json_syntax: bool = False) -> dict[str, Any]:
    """One scenario mapping from YAML (or JSON) text; ``ScenarioError`` says what is wrong."""
    try:
        if json_syntax:
            data = json.loads(text)
        else:
            data = yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except scenario.ScenarioError:
        raise
    except RecursionError:
        raise scenario.ScenarioError(f"nested more than {scenario.MAX_DEPTH} levels deep") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f"line {where.line + 1}: " if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise scenario.ScenarioError(
            f"{line}not valid YAML: {' '.join(str(problem).split())}"
        ) from None
    except ValueError as exc:  # json.JSONDecodeError, integers with too many digits
        problem = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise scenario.ScenarioError(
            f"not valid {'JSON' if json_syntax else 'YAML'}: {problem}"
        ) from None
    if not isinstance(data, dict):
        raise scenario.ScenarioError("the file must hold one scenario mapping (name:, seats:, ...)")
    return data


def load(path: str) -> dict[str, Any]:
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise scenario.ScenarioError(
            f"the file is larger than {MAX_BYTES // 1024} KiB; a scenario is a small file"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise scenario.ScenarioError(
            f"not UTF-8 text (byte {exc.start}); is this a scenario file?"
        ) from None
    return parse(text, json_syntax=path.endswith(".json"))


def run(args: argparse.Namespace) -> int:
    wrong = components.install(args.components)
    if wrong:
        print(f"ERROR {wrong}")
        return 2
    failed = broken = 0
    for path in args.files:
        try:
            spec = load(path)
            report = scenario.run(spec)
        except OSError as exc:
            broken += 1
            print(f"ERROR {path}: cannot read it: {exc.strerror or exc}")
            continue
        except scenario.ScenarioError as exc:
            broken += 1
            print(f"ERROR {path}: {' '.join(str(exc).split())}")
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
