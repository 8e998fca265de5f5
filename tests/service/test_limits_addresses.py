"""Whose the per-address limits are: an IPv4 address's own, an IPv6 network's of
``LIMIT_IPV6_PREFIX`` bits (64 by default: one client's /64 is one bucket, however many addresses
it uses), an IPv4-mapped IPv6 address its IPv4 address's; the setting is bounded and named when
wrong. Against the real Redis, limits on, the address as the server's peer or as a trusted proxy
forwards it, over the test client and over real sockets (a dual-stack server)."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from events.config import BadEnvironment, read
from service.config import resolve
from service.limits import address_group

from .conftest import ValidatingClient, make_app
from .test_limits import _too_many
from .test_limits import limited as _limited

pytestmark = pytest.mark.redis
limited = _limited  # the fixture: API clients on the real Redis, limits on


def at(addr: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": addr}, "validate": False}


@pytest.mark.parametrize(
    ("address", "prefix", "group"),
    [
        ("192.0.2.7", 64, "192.0.2.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", 64, "2001:db8:1:2::/64"),
        ("2001:DB8:1:2:0:0:0:1", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", 64, "2001:db8:1:3::/64"),
        ("2001:db8:1:2::1", 48, "2001:db8:1::/48"),
        ("2001:db8:1:2::1", 128, "2001:db8:1:2::1"),
        ("2001:db8:1:2::1", 32, "2001:db8::/32"),
        ("fe80::1%eth0", 64, "fe80::/64"),
        ("fe80::1%eth0", 128, "fe80::1"),
        ("::ffff:192.0.2.7", 64, "192.0.2.7"),
        ("::ffff:c000:207", 64, "192.0.2.7"),
        ("::1", 64, "::/64"),
        ("unknown", 64, "unknown"),
        ("", 64, "unknown"),
        ("x" * 5000, 64, "x" * 100),
    ],
)
def test_an_address_group(address: str, prefix: int, group: str) -> None:
    assert address_group(address, prefix) == group


def _spend(api: ValidatingClient, gid: str, addr: str, n: int) -> list[int]:
    return [api.get(f"/games/{gid}", **at(addr)).status_code for _ in range(n)]


def _game(api: ValidatingClient) -> str:
    r = api.post("/games", json={"seats": [{"kind": "human"}] * 2}, **at("198.51.100.1"))
    assert r.status_code == 201, r.get_json()
    gid: str = r.get_json()["game_id"]
    return gid


def test_the_addresses_of_one_ipv6_64_share_one_limit(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_PER_ADDRESS="10 per minute")
    gid = _game(api)
    # ten requests from ten addresses of one /64 spend its quota ...
    for i in range(10):
        assert _spend(api, gid, f"2001:db8:aa:1::{i + 1:x}", 1) == [200], i
    # ... so an eleventh address of it is refused, named by its network
    r = api.get(f"/games/{gid}", **at("2001:db8:aa:1:ffff:ffff:ffff:ffff"))
    p = _too_many(r, "per-address")
    assert "address 2001:db8:aa:1::/64 may make 10 per 1 minute" in p["detail"], p
    # another /64 (even the next one) has its own quota, as has an IPv4 address
    assert _spend(api, gid, "2001:db8:aa:2::1", 10) == [200] * 10
    assert _spend(api, gid, "2001:db8:aa:0:ffff::1", 1) == [200]
    assert _spend(api, gid, "192.0.2.9", 1) == [200]


def test_an_ipv4_mapped_address_is_its_ipv4_address(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_PER_ADDRESS="6 per minute")
    gid = _game(api)
    assert _spend(api, gid, "192.0.2.20", 3) == [200] * 3
    assert _spend(api, gid, "::ffff:192.0.2.20", 3) == [200] * 3
    r = api.get(f"/games/{gid}", **at("::ffff:192.0.2.20"))
    assert "address 192.0.2.20 may make" in _too_many(r, "per-address")["detail"]
    # IPv4 addresses count one by one, their neighbours are not held back
    assert _spend(api, gid, "192.0.2.21", 1) == [200]
    assert _spend(api, gid, "::ffff:192.0.2.22", 1) == [200]


def test_the_prefix_length_is_a_setting(limited: Callable[..., ValidatingClient]) -> None:
    single = limited(LIMIT_PER_ADDRESS="2 per minute", LIMIT_IPV6_PREFIX=128)
    gid = _game(single)
    for i in range(5):  # each address on its own
        assert _spend(single, gid, f"2001:db8:bb:1::{i + 1}", 2) == [200, 200], i
    wide = limited(LIMIT_PER_ADDRESS="2 per minute", LIMIT_IPV6_PREFIX=48)
    gid = _game(wide)
    assert _spend(wide, gid, "2001:db8:cc:1::1", 1) == [200]
    assert _spend(wide, gid, "2001:db8:cc:2::1", 1) == [200]
    r = wide.get(f"/games/{gid}", **at("2001:db8:cc:ffff::1"))
    assert "address 2001:db8:cc::/48 may make" in _too_many(r, "per-address")["detail"]
    assert _spend(wide, gid, "2001:db8:cd:1::1", 1) == [200]


def test_the_group_keys_the_open_games_and_the_streams_too(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(MAX_OPEN_GAMES_PER_ADDRESS=2)
    seats = {"seats": [{"kind": "human"}] * 2}
    got = [
        api.post("/games", json=seats, **at(f"2001:db8:dd:1::{i + 1}")).status_code
        for i in range(3)
    ]
    assert got == [201, 201, 429], got
    r = api.post("/games", json=seats, **at("2001:db8:dd:1::99"))
    assert r.get_json()["limit"] == "open-games"
    assert "address 2001:db8:dd:1::/64 has 2 unfinished games" in r.get_json()["detail"]
    assert api.post("/games", json=seats, **at("2001:db8:dd:2::1")).status_code == 201


def test_behind_a_proxy_the_forwarded_address_is_grouped(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_PER_ADDRESS="3 per minute", PROXY_HOPS=1)
    gid = _game(api)

    def via_proxy(addr: str) -> int:
        r = api.get(
            f"/games/{gid}",
            headers={"X-Forwarded-For": addr},
            environ_base={"REMOTE_ADDR": "10.0.0.1"},
            validate=False,
        )
        return int(r.status_code)

    assert [via_proxy(f"2001:db8:ee:1::{i + 1}") for i in range(4)] == [200, 200, 200, 429]
    assert via_proxy("2001:db8:ee:2::1") == 200
    assert [via_proxy("::ffff:203.0.113.5") for _ in range(3)] == [200] * 3
    assert via_proxy("203.0.113.5") == 429


@pytest.mark.parametrize("bad", ["31", "129", "-64", "64.0", "", "sixty-four", "٦٤"])
def test_the_prefix_setting_is_bounded(bad: str) -> None:
    if bad == "":  # unset: the default
        assert read({"RFG_LIMIT_IPV6_PREFIX": bad}).get("RFG_LIMIT_IPV6_PREFIX") == 64
        return
    with pytest.raises(BadEnvironment, match="RFG_LIMIT_IPV6_PREFIX.*from 32 to 128"):
        read({"RFG_LIMIT_IPV6_PREFIX": bad})
    with pytest.raises(ValueError, match="RFG_LIMIT_IPV6_PREFIX"):
        resolve({}, {"RFG_LIMIT_IPV6_PREFIX": bad})


def test_the_prefix_setting_given_to_the_app_is_bounded() -> None:
    assert resolve({}, {"RFG_LIMIT_IPV6_PREFIX": "56"})["LIMIT_IPV6_PREFIX"] == 56
    assert resolve({}, {})["LIMIT_IPV6_PREFIX"] == 64
    for bad in (0, 31, 129, "64", True, 64.0, None):
        with pytest.raises(ValueError, match=r"LIMIT_IPV6_PREFIX.*from 32 to 128"):
            resolve({"LIMIT_IPV6_PREFIX": bad}, {})
    with pytest.raises(ValueError, match="LIMIT_IPV6_PREFIX"):
        make_app("memory://prefix-check", LIMIT_IPV6_PREFIX=200)


def _serve(app: Flask, host: str) -> tuple[BaseWSGIServer, threading.Thread]:
    srv: BaseWSGIServer = make_server(host, 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    return srv, thread


def _get(host: str, port: int, path: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_over_real_sockets_ipv4_mapped_is_ipv4_and_ipv6_is_its_64(
    limited: Callable[..., ValidatingClient],
) -> None:
    """A dual-stack server sees an IPv4 client as ``::ffff:127.0.0.1``: it shares the quota of
    ``127.0.0.1`` as an IPv4-only server sees it; ``::1`` is ``::/64``, a quota of its own."""
    app = limited(LIMIT_PER_ADDRESS="4 per minute").application
    try:
        dual, dual_thread = _serve(app, "::")
    except OSError as exc:  # pragma: no cover - a host without IPv6
        pytest.skip(f"no IPv6 here: {exc}")
    v4, v4_thread = _serve(app, "127.0.0.1")
    try:
        got = [_get("127.0.0.1", dual.server_port, "/catalogue")[0] for _ in range(2)]
        got += [_get("127.0.0.1", v4.server_port, "/catalogue")[0] for _ in range(2)]
        assert got == [200] * 4
        status, problem = _get("127.0.0.1", dual.server_port, "/catalogue")
        assert status == 429 and "address 127.0.0.1 may make 4" in problem["detail"], problem
        assert _get("127.0.0.1", v4.server_port, "/catalogue")[0] == 429
        got = [_get("::1", dual.server_port, "/catalogue")[0] for _ in range(5)]
        assert got == [200] * 4 + [429]
        status, problem = _get("::1", dual.server_port, "/catalogue")
        assert status == 429 and "address ::/64 may make 4" in problem["detail"], problem
    finally:
        for srv, thread in ((dual, dual_thread), (v4, v4_thread)):
            srv.shutdown()
            thread.join(5)


@pytest.mark.parametrize(
    "forwarded",
    [
        "ü",
        "[::1]",
        "::ffff:zzz",
        "fe80::1%" + "x" * 3000,
        "1.2.3.4.5",
        "{address:x}}",
        "%",
        "a" * 5000,
    ],
)
def test_a_forwarded_address_that_is_no_ip_address_is_counted_as_it_is(
    limited: Callable[..., ValidatingClient], forwarded: str
) -> None:
    """What a proxy forwards is counted as sent (at most 100 characters), never a 500."""
    api = limited(LIMIT_PER_ADDRESS="2 per minute", PROXY_HOPS=1)

    def status() -> int:
        headers = {"X-Forwarded-For": forwarded}
        r = api.get(
            "/catalogue", headers=headers, environ_base={"REMOTE_ADDR": "10.0.0.1"}, validate=False
        )
        return int(r.status_code)

    assert [status() for _ in range(3)] == [200, 200, 429]
