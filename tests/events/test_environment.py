"""The environment is read and checked in one place (``events.config``) and reaches the API,
the workers and the ``rfg`` command alike."""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path

import pytest

from events import config
from events.config import VARIABLES, BadEnvironment
from events.store import clients
from rfgcli.main import main
from service.config import DEFAULTS, FROM_ENV, resolve
from workers.settings import WorkerSettings, queue_url_from_env, store_url_from_env

ROOT = Path(__file__).resolve().parents[2]


def _refuses(var: config.Variable, raw: str) -> bool:
    try:
        var.parse(raw)
    except ValueError:
        return True
    return False


#: a value each checked variable refuses (text variables accept any non-empty value)
BAD = {name: "not-valid!" for name, var in VARIABLES.items() if _refuses(var, "not-valid!")}


def test_every_checked_variable_refuses_a_bad_value_naming_itself_and_what_it_accepts() -> None:
    assert len(BAD) >= 25  # URLs, switches, seconds, counts, rates, choices
    for name, raw in BAD.items():
        with pytest.raises(BadEnvironment) as err:
            config.read({name: raw})
        message = str(err.value)
        assert message.startswith(f"{name} is {raw!r}; set it to {VARIABLES[name].accepts}")
        assert message.endswith("or unset it")


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("RFG_REDIS_TIMEOUT", "0"),
        ("RFG_REDIS_TIMEOUT", "nan"),
        ("RFG_SSE_MAX_SECONDS", "-5"),
        ("RFG_PLAY_ON", "-0.1"),
        ("RFG_COMPACT_AFTER", "inf"),
        ("RFG_PROXY_HOPS", "-1"),
        ("RFG_MAX_STREAMS_PER_TOKEN", "2.5"),
        ("RFG_MAX_OPEN_GAMES_PER_ADDRESS", "\u0663"),  # an Arabic-Indic 3 is not a number here
        ("RFG_DISPATCH", "2"),
        ("RFG_BOT_REGISTRATION", "closed"),
        ("RFG_LIMIT_CLAIM", "lots"),
        ("RFG_LOG_FORMAT", "xml"),
        ("RFG_LOG_LEVEL", "loud"),
        ("REDIS_URL", "127.0.0.1:6379"),
        ("RFG_QUEUE_URL", "redis+cluster://10.0.0.1:7000"),
    ],
)
def test_values_out_of_range_are_refused(name: str, raw: str) -> None:
    with pytest.raises(BadEnvironment, match=f"^{name} is "):
        config.read({name: raw})


def test_accepted_values_are_parsed_and_empty_ones_are_unset() -> None:
    env = config.read(
        {
            "RFG_DISPATCH": " Yes ",
            "RFG_RATE_LIMITS": "off",
            "RFG_PLAY_ON": "0",
            "RFG_COMPACT_AFTER": "-1",
            "RFG_PROXY_HOPS": " 2 ",
            "RFG_BOT_REGISTRATION": "ADMIN",
            "RFG_LOG_LEVEL": "debug",
            "RFG_STORE_PREFIX": "",
            "RFG_QUEUE": "  ",
        }
    )
    assert env.get("RFG_DISPATCH") is True and env.get("RFG_RATE_LIMITS") is False
    assert (env.get("RFG_PLAY_ON"), env.get("RFG_COMPACT_AFTER")) == (0.0, -1.0)
    assert (env.get("RFG_PROXY_HOPS"), env.get("RFG_BOT_REGISTRATION")) == (2, "admin")
    assert env.get("RFG_LOG_LEVEL") == "DEBUG"
    assert (env.store_prefix, env.queue) == ("rfg", "rfg")  # empty: the defaults
    assert not env.is_set("RFG_STORE_PREFIX")


def test_a_bad_value_stops_the_api_and_the_workers_alike() -> None:
    readers = (
        lambda env: resolve({}, env),
        WorkerSettings.from_env,
        store_url_from_env,
        queue_url_from_env,
    )
    for name, raw in BAD.items():
        for read in readers:
            with pytest.raises(ValueError, match=f"^{name} is "):
                read({name: raw})


def test_the_store_variables_reach_the_api_and_the_workers() -> None:
    env = {
        "REDIS_URL": "redis://127.0.0.1:6379/3",
        "RFG_QUEUE_URL": "redis://10.0.0.9:6379/0",
        "RFG_STORE_PREFIX": "house",
    }
    api = resolve({}, env)
    workers = WorkerSettings.from_env(env)
    assert api["STORE_URL"] == store_url_from_env(env) == "redis://127.0.0.1:6379/3"
    assert api["QUEUE_URL"] == queue_url_from_env(env) == "redis://10.0.0.9:6379/0"
    assert api["STORE_PREFIX"] == workers.prefix == workers.queue == "house"
    # RFG_STORE_URL wins over REDIS_URL, for both
    env["RFG_STORE_URL"] = "unix:///tmp/rfg.sock"
    assert resolve({}, env)["STORE_URL"] == store_url_from_env(env) == "unix:///tmp/rfg.sock"
    assert clients.commands({"RFG_REDIS_TIMEOUT": "1.5"}).socket_timeout == 1.5


def test_each_api_variable_reaches_its_setting_and_the_defaults_are_the_documented_ones() -> None:
    good = {
        "RFG_QUEUE_URL": "redis://q:6379/0",
        "RFG_STORE_PREFIX": "p",
        "RFG_ADMIN_TOKEN": "t0ken",
        "RFG_DISPATCH": "1",
        "RFG_BOT_REGISTRATION": "admin",
        "RFG_SSE_MAX_SECONDS": "12.5",
        "RFG_RATE_LIMITS": "0",
        "RFG_LIMIT_IPV6_PREFIX": "56",
    }
    for key, name in FROM_ENV.items():
        raw = good.get(name) or ("7 per hour" if key.startswith("LIMIT_") else "7")
        # admin-only registration needs an admin token
        also = {"RFG_ADMIN_TOKEN": "t0ken"} if name == "RFG_BOT_REGISTRATION" else {}
        got = resolve({}, {name: raw, **also})[key]
        assert got == VARIABLES[name].parse(raw), name
        assert got != DEFAULTS[key], name  # the value above differs from the default
        assert resolve({}, {})[key] == DEFAULTS[key] == VARIABLES[name].default, name


def test_each_worker_variable_reaches_the_worker_settings_with_the_same_defaults() -> None:
    settings = WorkerSettings.from_env(
        {"RFG_QUEUE": "bots", "RFG_PLAY_ON": "0.5", "RFG_COMPACT_AFTER": "-1"}
    )
    assert (settings.queue, settings.play_on, settings.compact_after) == ("bots", 0.5, -1.0)
    plain = WorkerSettings()
    assert WorkerSettings.from_env({}) == plain
    assert plain.prefix == VARIABLES["RFG_STORE_PREFIX"].default
    assert plain.play_on == VARIABLES["RFG_PLAY_ON"].default
    assert plain.compact_after == VARIABLES["RFG_COMPACT_AFTER"].default
    assert config.COMMAND_TIMEOUT == VARIABLES["RFG_REDIS_TIMEOUT"].default


def test_the_rfg_command_refuses_a_bad_value_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RFG_PLAY_ON", "soon")
    for argv in (["ladder", "list"], ["store", "status"], ["worker", "--burst"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert re.fullmatch(rf"rfg {argv[0]}: RFG_PLAY_ON is 'soon'; set it to .*\n", err), err


def test_the_rfg_command_uses_the_store_url_and_prefix_of_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rfgcli.ladder import _ladders

    url, prefix = f"memory://env-{uuid.uuid4().hex}", "envtest"
    from ladder.service import LadderConfig

    _ladders(url, prefix).create(LadderConfig("envladder", players=[2]))
    monkeypatch.delenv("RFG_STORE_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.setenv("RFG_STORE_PREFIX", prefix)
    assert main(["ladder", "list"]) == 0
    assert capsys.readouterr().out == "envladder\n"
    monkeypatch.setenv("RFG_STORE_PREFIX", "other")
    assert main(["ladder", "list"]) == 0
    assert capsys.readouterr().out == ""


def test_readme_links_the_variables_and_the_config_modules_read_none_themselves() -> None:
    """Every variable is in the generated docs/configuration.md (tests/rfgcli/test_configdoc.py)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "events/config.py" in readme and "docs/configuration.md" in readme
    readers = [
        ROOT / "service" / "config.py",
        ROOT / "workers" / "settings.py",
        *sorted((ROOT / "rfgcli").glob("*.py")),
    ]
    for path in readers:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "environ":
                # rfg run hands its whole environment to the processes it starts, unread
                assert path.name == "run.py", f"{path} reads os.environ itself"
