"""The server runs on what the tests ran: every installed package that serves requests (gunicorn,
gevent and what they and the app stand on) is within ``pyproject.toml``'s range and is the very
version ``requirements.lock`` pins - a newer major installed by hand, or a range that admits
versions nobody tested, fails here rather than in production (gunicorn's and gevent's behaviour
under load - how a request head is read, how a greenlet yields - is what the hosting tests
measured)."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
#: the packages the API process serves with
SERVER = ("gunicorn", "gevent", "greenlet", "flask", "werkzeug", "redis", "hiredis")


def _ranges() -> dict[str, Requirement]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    reqs = [Requirement(d) for d in deps]
    return {r.name.lower(): r for r in reqs}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


@pytest.mark.parametrize("name", SERVER)
def test_the_installed_server_package_is_the_tested_one(name: str) -> None:
    pins = _pins()
    assert name in pins, f"{name} is not pinned in requirements.lock: run make upgrade"
    installed = version(name)
    assert Version(installed) == Version(pins[name]), (
        f"{name} {installed} is installed but the tests ran {pins[name]} (requirements.lock): "
        f"make install installs the tested version"
    )
    req = _ranges().get(name)
    if req is not None:  # a direct dependency: its range admits the pin
        assert req.specifier.contains(pins[name]), (
            f"pyproject.toml allows {name}{req.specifier}, which does not admit the pinned "
            f"{pins[name]}: make the range and the lock agree (make upgrade)"
        )


def test_the_serving_ranges_stop_at_the_next_major() -> None:
    """gunicorn and gevent: a release outside the tested major is refused at install time."""
    ranges = _ranges()
    for name in ("gunicorn", "gevent"):
        spec = ranges[name].specifier
        pinned = Version(_pins()[name])
        assert spec.contains(str(pinned))
        assert not spec.contains(f"{pinned.major + 1}.0"), f"{name}{spec} admits the next major"
        assert not spec.contains(f"{pinned.major - 1}.99"), f"{name}{spec} admits an older major"
