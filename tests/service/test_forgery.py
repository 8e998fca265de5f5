"""Forged logs are refused, with the reason, by both verifiers: ``rfg replay --key`` (the real
command) and ``POST /replays/verify``. Each case was accepted before logs were signed and replay
was strict: a fabricated game with another winner, a log cut at a command boundary, a changed
actor / game id / timestamps, two batches swapped, and in a bare engine log an illegal move, a
wrong ``PhaseEnded``, a deleted event, a cut mid-command and fields of the wrong type."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

import events.store
from bots import arena
from events.envelope import GENESIS_HASH, Envelope
from events.games.service import GameService
from events.verify.signing import load_signer
from tests.service.conftest import new_game, play_http

RFG = os.path.join(os.path.dirname(sys.executable), "rfg")
Rows = list[dict[str, Any]]


def _rows(text: str) -> Rows:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _text(rows: Rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _reseal(rows: Rows) -> Rows:
    """What a forger does after editing: renumber and re-hash the whole chain (keeping any
    signature line as it was)."""
    out, link = [], GENESIS_HASH
    for i, r in enumerate(x for x in rows if "signature" not in x):
        env = Envelope.from_dict({**r, "seq": i + 1, "prev_hash": link, "hash": ""}).sealed()
        out.append(env.to_dict())
        link = env.hash
    return out + [r for r in rows if "signature" in r]


def _batches(rows: Rows) -> list[tuple[int, int]]:
    """(start, end) row indexes of each command batch after the creation batch."""
    starts = [i for i, r in enumerate(rows) if r.get("type") == "CommandSubmitted"]
    body_end = len([r for r in rows if "signature" not in r])
    return [(s, (starts[k + 1] if k + 1 < len(starts) else body_end)) for k, s in enumerate(starts)]


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A finished 2-player game exported by the API, the server's key, and the app's client."""
    from service import create_app

    data = tmp_path_factory.mktemp("server")
    url = f"memory://forgery-{os.getpid()}"
    app = create_app(
        {
            "STORE_URL": url,
            "ADMIN_TOKEN": "admin-secret-for-tests",
            "TESTING": True,
            "DATA_DIR": str(data),
            "RATE_LIMITS": False,
        }
    )
    api = app.test_client()
    gid, tokens = new_game(api, 2)
    play_http(api, gid, tokens, seed=3)
    text = api.get(f"/games/{gid}/log").get_data(as_text=True)
    key = api.get("/signing-key").get_json()["public_key"]
    assert key == load_signer({"RFG_DATA_DIR": str(data)}).public_info()["public_key"]
    return {"api": api, "gid": gid, "text": text, "key": key, "url": url}


def _both(
    signed: dict[str, Any], text: str
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    r = signed["api"].post(
        "/replays/verify", data=text.encode("utf-8"), content_type="application/x-ndjson"
    )
    assert r.status_code == 200, r.get_json()
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(text)
    try:
        cli = subprocess.run(
            [RFG, "replay", "--key", signed["key"], f.name],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.unlink(f.name)
    return r.get_json(), cli


def _refused(signed: dict[str, Any], text: str, verdict: str, words: str) -> dict[str, Any]:
    """Both verifiers refuse: ``verdict`` is the verdict, or several separated by '|' (with
    ``words`` then '|'-separated in the same order)."""
    api_verdict, cli = _both(signed, text)
    options = dict(zip(verdict.split("|"), words.split("|"), strict=True))
    got = api_verdict["verdict"]
    assert not api_verdict["ok"] and got in options, api_verdict
    words = options[got]
    assert words in api_verdict["reason"], api_verdict["reason"]
    assert cli.returncode == 1 and f"BAD ({got})" in cli.stderr and words in cli.stderr, cli.stderr
    assert "Traceback" not in cli.stderr
    return api_verdict


def test_the_genuine_export_is_consistent_complete_and_authentic(signed: dict[str, Any]) -> None:
    api_verdict, cli = _both(signed, signed["text"])
    assert api_verdict["ok"] and api_verdict["authentic"] is True and api_verdict["complete"]
    assert api_verdict["origin"] == "this-server"
    assert cli.returncode == 0 and "authentic: yes" in cli.stdout


def _fabricate(signed: dict[str, Any]) -> Rows:
    """A consistent game under the same id and seed in which the genuine winner loses."""
    import engine
    from bots.base import get_bot
    from engine.rng import Rng

    rows = _rows(signed["text"])
    created = rows[0]["payload"]
    genuine = rows[-2]["payload"]["winners"]
    bot = get_bot("random")
    for attempt in range(60):
        games = GameService(
            events.store.RedisStore(events.store.connect(f"memory://fake-{attempt}-{os.getpid()}"))
        )
        gid, _ = games.create(
            2,
            created["options"],
            seed=created["seed"],
            table=created["table"],
            game_id=signed["gid"],
        )
        rng, n = Rng.from_seed(f"forger-{attempt}"), 0
        while True:
            state, version, _ = games.load(gid)
            if state.over:
                break
            seat = min(engine.pending(state))
            games.submit(
                gid,
                seat,
                bot.act(engine.legal(state, seat), None, rng),
                f"f{n}",
                version,
                actor=f"seat:{seat}",
            )
            n += 1
        if state.winners != genuine:
            fake = _rows("\n".join(games.export(gid, "server")))
            return fake + [r for r in rows if "signature" in r]  # with the genuine signature
    raise AssertionError("no game with another winner in 60 tries")


def test_fabricated_winner_is_refused(signed: dict[str, Any]) -> None:
    fake = _fabricate(signed)
    v = _refused(signed, _text(fake), "not-authentic", "not this log's")
    assert v["consistent"] and v["complete"] and v["authentic"] is False
    assert v["origin"] == "other"  # a signature, but not this server's over this log
    unsigned = _refused(signed, _text(fake[:-1]), "not-authentic", "no signature")
    assert unsigned["authentic"] is False and unsigned["origin"] == "unsigned"


def test_a_log_cut_at_a_command_boundary_is_incomplete(signed: dict[str, Any]) -> None:
    rows = _rows(signed["text"])
    start, _ = _batches(rows)[-3]
    cut = rows[:start] + rows[-1:]
    v = _refused(signed, _text(cut), "incomplete", "the game is not over")
    assert v["first_bad_event"] == start + 1


def _edit(rows: Rows, fn: Callable[[Rows], None]) -> Rows:
    out = copy.deepcopy(rows)
    fn(out)
    return _reseal(out)


def test_a_changed_actor_is_refused(signed: dict[str, Any]) -> None:
    def actor(rows: Rows) -> None:
        s, e = _batches(rows)[5]
        seat = rows[s]["payload"]["seat"]
        for r in rows[s:e]:
            r["actor"] = f"seat:{1 - seat}"

    _refused(
        signed,
        _text(_edit(_rows(signed["text"]), actor)),
        "inconsistent",
        "submitted a command of seat",
    )

    def actor_as_bot(rows: Rows) -> None:
        s, e = _batches(rows)[5]
        for r in rows[s:e]:
            r["actor"] = "bot:heuristic"

    _refused(
        signed, _text(_edit(_rows(signed["text"]), actor_as_bot)), "not-authentic", "not this log's"
    )


def test_a_changed_game_id_is_refused(signed: dict[str, Any]) -> None:
    def game(rows: Rows) -> None:
        for r in rows:
            if "signature" not in r:
                r["game_id"] = "0123456789ab"

    # rules 4 and later: GameCreated names its game (the commitment binds it), so the log is
    # inconsistent before the signature is read; older logs: the signature names another game
    _refused(
        signed,
        _text(_edit(_rows(signed["text"]), game)),
        "inconsistent|not-authentic",
        "names game|signature is for game",
    )


def test_changed_timestamps_are_refused(signed: dict[str, Any]) -> None:
    def later(rows: Rows) -> None:
        for r in rows:
            if "signature" not in r:
                t = datetime.fromisoformat(r["ts"]) + timedelta(hours=1)
                r["ts"] = t.isoformat(timespec="microseconds").replace("+00:00", "Z")

    _refused(signed, _text(_edit(_rows(signed["text"]), later)), "not-authentic", "not this log's")


def test_swapped_batches_are_refused(signed: dict[str, Any]) -> None:
    def swap(rows: Rows) -> None:
        batches = _batches(rows)
        for (s1, e1), (s2, e2) in zip(batches, batches[1:], strict=False):
            # two commands of different seats, each causing only its own event: both orders legal
            if (
                rows[s1]["payload"]["seat"] != rows[s2]["payload"]["seat"]
                and s1 > 10
                and e1 - s1 == 2
                and e2 - s2 == 2
            ):
                rows[s1:e2] = rows[s2:e2] + rows[s1:e1]
                ts = rows[s1]["ts"]
                for r in rows[s1:e2]:
                    r["ts"] = ts  # the forger also fixes the clock
                return
        raise AssertionError("no two batches of different seats in a row")

    v = _refused(
        signed, _text(_edit(_rows(signed["text"]), swap)), "not-authentic", "not this log's"
    )
    assert v["consistent"]  # both orders are legal: only the signature tells them apart


@pytest.fixture(scope="module")
def bare() -> Rows:
    rec = arena.play_game("forgery-bare", 3, ["random"])
    assert rec.finished
    return [json.loads(json.dumps(e)) for e in rec.events]


def _bare_refused(
    signed: dict[str, Any], rows: Rows, verdict: str, words: str, bad: int | None
) -> None:
    v = _refused(signed, _text(rows), verdict, words)
    assert v["first_bad_event"] == bad, v


def test_a_bare_log_is_consistent_and_complete_but_never_ok_on_the_server(
    signed: dict[str, Any], bare: Rows
) -> None:
    """Anyone can write a bare log for any seed: the server says it is a legal, finished game
    and not one it played (it used to answer ``ok: true``, and the viewer showed it verified);
    ``rfg replay``, which checks a person's own logs, accepts it."""
    api_verdict, cli = _both(signed, _text(bare))
    assert not api_verdict["ok"] and api_verdict["verdict"] == "not-authentic", api_verdict
    assert api_verdict["consistent"] and api_verdict["complete"] and api_verdict["commands"] > 100
    assert api_verdict["authentic"] is False and api_verdict["origin"] == "unsigned"
    assert "not signed" in api_verdict["reason"] and "rfg simulate" in api_verdict["authenticity"]
    assert cli.returncode == 0, cli.stderr
    # cut short, it is incomplete before it is anything else: where it comes from is not asked
    cut = _both(signed, _text(bare[:-5]))[0]
    assert cut["verdict"] == "incomplete" and cut["origin"] == "unknown", cut


def test_bare_log_illegal_assignment_is_refused(signed: dict[str, Any], bare: Rows) -> None:
    rows = copy.deepcopy(bare)
    i = next(k for k, e in enumerate(rows) if e["type"] == "AssignmentSealed" and not e.get("used"))
    seat = rows[i]["seat"]
    cols = rows[i]["columns"]
    src = next(ph for ph in ("produce", "develop", "settle", "explore") if cols.get(ph))
    cols["ship"] = cols.get("ship", []) + [cols[src].pop()]  # a die moved without a Dictate
    assert rows[i]["seat"] == seat
    _bare_refused(signed, rows, "inconsistent", "different event", i + 1)
    # the command itself made illegal: a die the seat does not have
    rows = copy.deepcopy(bare)
    j = next(
        k
        for k, e in enumerate(rows)
        if e["type"] == "CommandSubmitted" and e["command"]["kind"] == "assign"
    )
    rows[j]["command"]["select"] = {"die": 9999, "phase": "ship"}
    _bare_refused(signed, rows, "inconsistent", "refused by the rules", j + 1)


def test_bare_log_wrong_phase_ended_is_refused(signed: dict[str, Any], bare: Rows) -> None:
    rows = copy.deepcopy(bare)
    i = next(k for k, e in enumerate(rows) if e["type"] == "PhaseEnded")
    rows[i]["phase"] = "ship" if rows[i]["phase"] != "ship" else "explore"
    _bare_refused(signed, rows, "inconsistent", "different event", i + 1)


def test_bare_log_deleted_event_and_cuts_are_incomplete(signed: dict[str, Any], bare: Rows) -> None:
    i = next(k for k, e in enumerate(bare) if e["type"] == "DiceRolled" and k > 200)
    _bare_refused(
        signed, bare[:i] + bare[i + 1 :], "incomplete", f"event {i + 1} is missing", i + 1
    )
    s = next(k for k in range(300, len(bare)) if bare[k]["type"] == "CommandSubmitted")
    e = next(k for k in range(s + 1, len(bare)) if bare[k]["type"] == "CommandSubmitted")
    if e - s > 2:
        _bare_refused(signed, bare[: s + 2], "incomplete", "ends inside the batch", s + 3)
    _bare_refused(signed, bare[:s], "incomplete", "the game is not over", s + 1)


def test_field_types_are_checked(signed: dict[str, Any]) -> None:
    rows = _rows(signed["text"])
    for value, words in (
        (True, "field seq must be an integer, not a boolean"),
        ("1", "field seq must be an integer, not a string"),
    ):
        bad = copy.deepcopy(rows)
        bad[0]["seq"] = value
        _refused(signed, _text(bad), "inconsistent", words)
