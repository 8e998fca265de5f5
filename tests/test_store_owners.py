"""Each kind of data stored in Redis has one owner module under ``events/store/``, which names its
keys and holds its scripts. This test reads (``ast``) every module of the packages outside
``events/store`` and fails on one that builds a key or runs a script:

* a key: a string made of a key prefix (a name ending in ``prefix``) and ``:...``, as an f-string,
  a concatenation, a ``str.format`` template (``"{}:..."``, ``"{prefix}:..."``) or ``":".join``;
  and a function named like a key (``key``, ``_k``, ``*_key``, ``*_keys``) that reads a key prefix
  and returns a string built around a ``:``;
* a script: a call of ``register_script``, ``eval``, ``evalsha``, ``eval_ro``, ``evalsha_ro``,
  ``fcall``, ``fcall_ro``, ``script_load`` or ``function_load`` on anything;
* a Redis command on stored data: a call of one of redis-py's data, script, function and pub/sub
  command methods (``redis.commands.core``: ``xread``, ``hget``, ``zadd``...) or of ``pipeline``,
  ``transaction`` or ``lock``, or of a server command that reads or drops stored data
  (``flushdb``, ``memory_usage``...), on a client (``client``, ``<anything>.client``,
  ``*_client``). Handing a client to an owner's constructor or function is wiring, not a command;
  the server's other commands (``INFO``, ``DBSIZE``, ``CLIENT LIST`` of ``rfg store status``) read
  no stored data.

Checked on a copy of the packages too, with each kind of violation planted, so that a check that
stopped finding one fails here."""

from __future__ import annotations

import ast
import inspect
import shutil
from pathlib import Path

import pytest
from redis.commands import core

from tests.test_import_layers import PACKAGES, ROOT

SCRIPT_CALLS = frozenset(
    {
        "register_script",
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "script_load",
        "function_load",
    }
)

#: redis-py's methods that run a command on stored data, those that batch or lock them, and the
#: server's commands that read or drop stored data
COMMANDS = (
    frozenset(
        name
        for cls in (
            core.DataAccessCommands,
            core.ScriptCommands,
            core.FunctionCommands,
            core.PubSubCommands,
        )
        for name, _ in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    )
    | {"pipeline", "transaction", "lock", "pubsub"}
    | {"flushdb", "flushall", "swapdb", "migrate", "memory_usage", "object", "debug_object"}
)


def _is_client(node: ast.AST) -> bool:
    """Whether ``node`` names a Redis client: ``client``, ``<anything>.client`` or ``*_client``."""
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    else:
        return False
    return name == "client" or name.endswith("_client")


def _is_prefix(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id.lower().endswith("prefix")
    if isinstance(node, ast.Attribute):
        return node.attr.lower().endswith("prefix")
    return False


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _key_string(node: ast.AST) -> str | None:
    """What kind of prefixed key ``node`` builds, or None."""
    if isinstance(node, ast.JoinedStr):
        for a, b in zip(node.values, node.values[1:], strict=False):
            if isinstance(a, ast.FormattedValue) and _is_prefix(a.value):
                if (_text(b) or "").startswith(":"):
                    return "an f-string key"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        if _is_prefix(node.left) and (_text(node.right) or "").startswith(":"):
            return "a concatenated key"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        template = _text(node.func.value)
        if node.func.attr == "format" and template is not None:
            if template.startswith("{}:") or "prefix}:" in template:
                return "a str.format key"
        if node.func.attr == "join" and template == ":" and node.args:
            parts = node.args[0]
            if (
                isinstance(parts, (ast.List, ast.Tuple))
                and parts.elts
                and _is_prefix(parts.elts[0])
            ):
                return "a joined key"
    return None


def _names_a_key(name: str) -> bool:
    return name in ("key", "keys", "_key", "_keys", "_k") or name.endswith(("_key", "_keys"))


def _returns_prefixed_string(fn: ast.AST) -> bool:
    """Whether ``fn`` returns a string built around a ``:`` (not a ``": "`` of prose) and reads a
    key prefix (a name ending in ``prefix``) somewhere."""
    if not any(_is_prefix(node) for node in ast.walk(fn)):
        return False
    for node in ast.walk(fn):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.JoinedStr):
            parts = [_text(v) or "" for v in value.values]
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            parts = [_text(value.left) or "", _text(value.right) or ""]
        else:
            continue
        if any(":" in p for p in parts) and not any(": " in p for p in parts):
            return True
    return False


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []  # (line, what)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _names_a_key(node.name) and _returns_prefixed_string(node):
            self.found.append((node.lineno, f"a key function {node.name}()"))
        self.generic_visit(node)

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def generic_visit(self, node: ast.AST) -> None:
        what = _key_string(node)
        if what is not None:
            self.found.append((getattr(node, "lineno", 0), what))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SCRIPT_CALLS
        ):
            self.found.append((node.lineno, f"a script call .{node.func.attr}()"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in COMMANDS
            and _is_client(node.func.value)
        ):
            self.found.append((node.lineno, f"a Redis command .{node.func.attr}() on a client"))
        super().generic_visit(node)


def violations(tree: Path) -> list[str]:
    """``<module>:<line>: <what>`` for each key built, script run or Redis command called on a
    client outside ``events/store``."""
    out: list[str] = []
    for package in PACKAGES:
        for path in sorted((tree / package).rglob("*.py")):
            module = path.relative_to(tree).as_posix()
            if module.startswith("events/store/"):
                continue
            finder = _Finder()
            finder.visit(ast.parse(path.read_text(), filename=module))
            out += [f"{module}:{line}: {what}" for line, what in finder.found]
    return out


def test_no_module_outside_the_owners_builds_a_key_runs_a_script_or_a_command() -> None:
    found = violations(ROOT)
    assert found == [], (
        "keys, scripts and the commands on stored data belong to their owner module in "
        "events/store (add a method there and call it):\n" + "\n".join(found)
    )


PLANTED = [
    ("service/app.py", 'def _latest(prefix, gid):\n    return f"{prefix}:latest:{gid}"\n'),
    ("workers/sweep.py", 'def _seen(self):\n    return self.prefix + ":seen"\n'),
    (
        "ladder/stats.py",
        'def _board(prefix, name):\n    return "{}:board:{}".format(prefix, name)\n',
    ),
    (
        "rfgcli/store.py",
        'def _probe(store_prefix):\n    return ":".join([store_prefix, "probe"])\n',
    ),
    (
        "events/games/service.py",
        'def _cache_key(self, gid):\n    p = self.prefix\n    return f"{p}:cache:{gid}"\n',
    ),
    ("workers/dispatch.py", 'def _unlock(client):\n    client.eval("return 1", 0)\n'),
    ("service/decisions.py", 'def _load(client):\n    return client.register_script("return 1")\n'),
    ("events/verify/replay.py", 'def _call(client):\n    return client.fcall("f", 0)\n'),
    ("service/limits.py", 'def _window_key(self, owner):\n    return f"{self.prefix}:w:{owner}"\n'),
    ("workers/turns.py", 'def _keeper_key(key_prefix, gid):\n    return key_prefix + ":" + gid\n'),
    (
        "service/fanout.py",
        "def _read(self, after):\n    return self.client.xread(after, block=1)\n",
    ),
    (
        "service/decisions.py",
        "def _versions(accounts, meta):\n    pipe = accounts.client.pipeline()\n"
        "    pipe.hget(meta, 'version')\n    return pipe.execute()\n",
    ),
    (
        "rfgcli/ladder.py",
        "def _names(store_client, board):\n    return store_client.zrevrange(board, 0, -1)\n",
    ),
    (
        "workers/sweep.py",
        "def _due(client, agenda):\n    return client.zrangebyscore(agenda, 0, 1)\n",
    ),
]


@pytest.mark.parametrize(("module", "planted"), PLANTED)
def test_a_planted_key_script_or_command_is_found(
    tmp_path: Path, module: str, planted: str
) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    assert violations(tmp_path) == []
    path = tmp_path / module
    before = len(path.read_text().splitlines())
    path.write_text(path.read_text() + "\n\n" + planted)
    found = violations(tmp_path)
    assert found and all(v.startswith(f"{module}:") for v in found), found
    assert all(int(v.split(":")[1]) > before for v in found), found
