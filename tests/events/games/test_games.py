"""The game service on every store adapter: play, read-your-writes, idempotency, conflicts,
projection rebuilds, secrecy of stored views and feeds, export and replay verification."""

from __future__ import annotations

import json
import threading

import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from events.games.projections import render_views, view_name
from events.games.service import Change, GameService
from events.store import ConcurrencyConflict, RedisStore, verify_chain
from events.verify.replay import verify_text
from tests.engine.secrecy import check_event, check_view

PEOPLE = {"seats": [{"kind": "human"}, {"kind": "human"}]}


def play_out(
    games: GameService, gid: str, bot: str = "random", seed: int = 1, limit: int = 5000
) -> int:
    b = get_bot(bot)
    rng = Rng(seed)
    n = 0
    while n < limit:
        state, version, _ = games.load(gid)
        if state.over:
            return n
        seat = min(engine.pending(state))
        view = engine.observe(state, seat) if b.needs_view else None
        cmd = b.act(engine.legal(state, seat), view, rng)
        games.submit(gid, seat, cmd, f"cmd-{n}", expected_version=version)
        n += 1
    raise AssertionError("the game did not finish")


def test_a_game_plays_to_the_end_and_rebuilt_views_are_identical(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(3, seed="svc-1")
    play_out(games, gid, "heuristic")
    state, version, _ = games.load(gid)
    assert state.over and store.version(gid) == version
    rebuilt = games.rebuild_views(gid)
    for name, text in rebuilt.items():
        pos, stored = store.get_view(gid, name) or (None, None)
        assert pos == version
        assert stored == text, f"rebuilt {name} differs from the live projection"
    for seat in range(3):  # and a seat's whole view is its observe, served
        whole = json.loads(games.view(gid, seat)[1])
        assert whole == served(engine.observe(state, seat), whole["clock"], seat)
    summary = json.loads(games.view(gid, "summary")[1])
    assert summary["status"] == "finished" and summary["winners"] == state.winners
    assert [g.status for g in store.list_games() if g.game_id == gid] == ["finished"]


def test_read_your_writes(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="svc-2")
    state, _, _ = games.load(gid)
    d = engine.legal(state, 0)
    out = games.submit(
        gid,
        0,
        {"kind": "start_tiles", "development": d["options"][0]["development"]},
        "c1",
        version,
    )
    pos, text = games.view(gid, 0)
    assert pos == out.version == version + len(out.envelopes)
    assert json.loads(text)["players"][0]["pending"] is None


def test_a_version_no_worker_owes_anything_is_stored_unattended(store: RedisStore) -> None:
    """Without a worker listening too: the append records it and the listeners hear it."""
    games = GameService(store)
    heard: list[Change] = []
    games.subscribe(heard.append)
    clock = {"per_decision": 30}
    for table, quiet in ((PEOPLE, True), ({**PEOPLE, "time_control": clock}, False)):
        gid, version = games.create(2, seed="svc-quiet", table=table)
        state, _, _ = games.load(gid)
        d = engine.legal(state, 0)
        cmd = {"kind": "start_tiles", "development": d["options"][0]["development"]}
        out = games.submit(gid, 0, cmd, "c1", version)
        assert heard[-1].version == out.version and heard[-1].unattended is quiet
        stored = store.client.hget(store.keys(gid)[1], "unattended")
        assert (stored is not None and int(stored) == out.version) is quiet


def test_same_command_id_twice_appends_once(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="svc-3")
    state, _, _ = games.load(gid)
    cmd = {
        "kind": "start_tiles",
        "development": engine.legal(state, 1)["options"][1]["development"],
    }
    first = games.submit(gid, 1, cmd, "same", version)
    again = games.submit(gid, 1, cmd, "same", version)
    assert again.result.duplicate and again.result.first_seq == first.result.first_seq
    assert store.version(gid) == first.version
    assert [e.seq for e in again.envelopes] == [e.seq for e in first.envelopes]


def test_same_command_id_concurrently_appends_once(store_factory) -> None:
    store = store_factory()
    gid, version = GameService(store).create(2, seed="svc-4")
    state, _, _ = GameService(store).load(gid)
    cmd = {
        "kind": "start_tiles",
        "development": engine.legal(state, 0)["options"][0]["development"],
    }
    results = []

    def go() -> None:
        try:
            results.append(GameService(store).submit(gid, 0, cmd, "race", version).result)
        except ConcurrencyConflict:
            results.append("conflict")

    threads = [threading.Thread(target=go) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.version(gid) == version + 2  # the command record and its one event
    firsts = {r.first_seq for r in results if r != "conflict"}
    assert firsts == {version + 1}


def test_stale_version_is_refused_and_nothing_appended(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="svc-5")
    state, _, _ = games.load(gid)
    d0 = engine.legal(state, 0)["options"][0]["development"]
    games.submit(gid, 0, {"kind": "start_tiles", "development": d0}, "a", version)
    d1 = engine.legal(state, 1)["options"][0]["development"]
    with pytest.raises(ConcurrencyConflict) as exc:
        games.submit(gid, 1, {"kind": "start_tiles", "development": d1}, "b", version)
    assert exc.value.actual == version + 2
    assert store.version(gid) == version + 2


def test_processes_with_stale_caches_play_one_game_correctly(store: RedisStore) -> None:
    """Two API processes (two ``GameService``, each with its own cache) take turns at random: every
    command lands once, at the version its client saw, and the log verifies like a one-process
    game's. With ``expected_version`` a cache that is behind catches up first; without it the
    append finds out, and the command is decided again on the current state."""
    import random

    a, b = GameService(store), GameService(store)
    gid, _ = a.create(3, seed="svc-stale")
    pick = random.Random(5)
    bot, rng = get_bot("random"), Rng(5)
    n = 0
    while True:
        state, version, _ = GameService(store).load(gid)  # what a client reads
        if state.over:
            break
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        games = pick.choice((a, b))
        out = games.submit(gid, seat, cmd, f"c{n}", expected_version=version if n % 3 else None)
        assert out.result.first_seq == version + 1 and not out.result.duplicate
        if n % 7 == 0:  # a retry through the other process gets the first answer
            again = (b if games is a else a).submit(gid, seat, cmd, f"c{n}", version)
            assert again.result.duplicate and again.result.first_seq == version + 1
        n += 1
    assert verify_text("\n".join(a.export(gid, "server"))).ok


def test_stale_client_through_a_stale_cache_gets_the_current_version(store: RedisStore) -> None:
    a, b = GameService(store), GameService(store)
    gid, version = a.create(2, seed="svc-stale-2")
    state, _, _ = b.load(gid)  # b caches the game at `version`
    d0 = engine.legal(state, 0)["options"][0]["development"]
    d1 = engine.legal(state, 1)["options"][0]["development"]
    a.submit(gid, 0, {"kind": "start_tiles", "development": d0}, "a", version)
    # seat 1 decided on `version` too; b's cache agrees with it, the store does not
    with pytest.raises(ConcurrencyConflict) as exc:
        b.submit(gid, 1, {"kind": "start_tiles", "development": d1}, "b", version)
    assert exc.value.expected == version and exc.value.actual == version + 2
    # without a version the command applies to the current game
    out = b.submit(gid, 1, {"kind": "start_tiles", "development": d1}, "b2")
    assert out.result.first_seq == version + 3 and store.version(gid) == out.version


def test_a_command_illegal_on_a_stale_cache_is_decided_on_the_current_state(
    store: RedisStore,
) -> None:
    a, b = GameService(store), GameService(store)
    gid, version = a.create(2, seed="svc-stale-3")
    state, _, _ = b.load(gid)
    for seat in (0, 1):
        d = engine.legal(state, seat)["options"][0]["development"]
        a.submit(gid, seat, {"kind": "start_tiles", "development": d}, f"s{seat}")
    now, v, _ = a.load(gid)
    seat = min(engine.pending(now))
    cmd = get_bot("random").act(engine.legal(now, seat), None, Rng(1))
    # b still holds the start-tiles state, where this command is not legal
    out = b.submit(gid, seat, cmd, "late")
    assert out.result.first_seq == v + 1 and not out.result.duplicate
    # and a command that is illegal on the current state too is refused, nothing stored
    with pytest.raises(engine.IllegalCommand):
        a.submit(gid, seat, {"kind": "start_tiles", "development": 999}, "bad")
    assert store.version(gid) == out.version


def test_illegal_command_appends_nothing(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="svc-6")
    with pytest.raises(engine.IllegalCommand, match="start tiles"):
        games.submit(gid, 0, {"kind": "start_tiles", "development": 999}, "bad", version)
    assert store.version(gid) == version
    assert store.command_result(gid, "bad") is None


def test_stored_views_and_feeds_leak_nothing(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(3, seed="svc-7")
    b, rng = get_bot("random"), Rng(3)
    for n in range(120):
        state, version, _ = games.load(gid)
        if state.over:
            break
        for viewer in ("public", 0, 1, 2):
            check_view(state, viewer, json.loads(games.view(gid, viewer)[1]))
        seat = min(engine.pending(state))
        out = games.submit(gid, seat, b.act(engine.legal(state, seat), None, rng), f"s{n}", version)
        after, _, _ = games.load(gid)
        for viewer in ("public", 0, 1, 2):
            for item in games.feed(gid, viewer, after=out.result.first_seq - 1):
                check_event(after, viewer, item["event"])


def test_export_of_a_finished_game_verifies_and_tampering_is_named(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(2, seed="svc-8")
    play_out(games, gid, "heuristic")
    lines = games.export(gid, "public")
    verdict = verify_text("\n".join(lines))
    assert verdict.ok, verdict.reason
    assert verdict.summary["winners"] == games.load(gid)[0].winners
    rows = [json.loads(line) for line in lines]
    k = next(
        i
        for i, r in enumerate(rows)
        if r["type"] == "GoodShipped" or r["type"] == "ExplorerStocked"
    )
    rows[k]["payload"]["credits"] = rows[k]["payload"].get("credits", 0) + 1
    bad = verify_text("\n".join(json.dumps(r) for r in rows))
    assert not bad.ok and bad.bad_seq == rows[k]["seq"]


def test_a_log_played_under_an_older_rules_version_still_verifies(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game recorded under rules version 1 (its GameCreated has no ``rules``) re-runs under
    version 1, though the same seed and bot play differently under the current rules (seed
    "rv7": a tile complete at the start of Develop is resolved without asking under version 1)."""
    import functools

    games = GameService(store)
    with monkeypatch.context() as m:
        m.setattr(engine, "create", functools.partial(engine.create, rules=1))
        old_gid, _ = games.create(2, seed="rv7")
    new_gid, _ = games.create(2, seed="rv7")
    for gid in (old_gid, new_gid):
        play_out(games, gid, "random")
    old, new = games.export(old_gid, "public"), games.export(new_gid, "public")
    assert "rules" not in json.loads(old[0])["payload"]
    assert json.loads(new[0])["payload"]["rules"] >= 2
    assert len(old) != len(new)  # the rules differ on this seed
    for lines in (old, new):
        verdict = verify_text("\n".join(lines))
        assert verdict.ok, verdict.reason


def test_live_export_is_the_viewers_redacted_feed(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(3, seed="svc-9")
    lines = [json.loads(x) for x in games.export(gid, 1)]
    assert all("event" in x and "hash" not in x for x in lines)
    created = lines[0]["event"]
    assert "seed" not in created and created["seed_commitment"]
    assert not verify_text("\n".join(json.dumps(x) for x in lines)).ok


def served(view: dict, clock: dict, seat: int | None = None) -> dict:
    """``engine.observe``'s view with the clock and what the API serves besides."""
    from events.games.served import named_bonuses, served_decision, served_side

    out = {**view, "clock": clock, "players": [served_side(p, None) for p in view["players"]]}
    if isinstance(out.get("result"), dict):
        out["result"] = named_bonuses(out["result"])
    if seat is not None and out["decision"] is not None:
        out["decision"] = served_decision(out["decision"], clock["seats"][seat]["decision_id"])
    return out


def test_a_seat_view_is_the_seats_observeserved() -> None:
    """The stored views are exactly each viewer's ``observe`` with the clock, the running scores,
    the decision's id and help, at every step."""
    from bots.arena import play_game

    seen = [0]

    def check(state: engine.GameState, _event: dict, seen: list = seen) -> None:
        views = render_views("g", state, "2026-01-01T00:00:00Z", None)
        public = json.loads(views[view_name("public")])
        clock = public["clock"]
        assert public == served(engine.observe(state, "public"), clock)
        for p in state.players:
            view = json.loads(views[view_name(p.seat)])
            assert view == served(engine.observe(state, p.seat), clock, p.seat)
            if view["decision"] is not None:
                assert view["decision"]["decision_id"] is not None
                assert view["decision"]["help"]
        seen[0] += 1

    play_game("seat-view", 3, on_event=check)
    assert seen[0] > 100


def test_views_render_from_state_alone() -> None:
    state, _ = engine.new_game("render", 2)
    a = render_views("g", state, "2026-01-01T00:00:00Z", None)
    b = render_views("g", state.copy(), "2026-01-01T00:00:00Z", None)
    assert a == b and set(a) == {"public@2", "seat:0@2", "seat:1@2", "summary"}


def test_views_rendered_with_a_memo_are_the_views_rendered_afresh() -> None:
    """The memo lets a seat whose state did not change keep its rendered sides; the state here
    is folded in place (the same objects change), which must never let a stale side through."""
    from bots.arena import play_game
    from events.games.projections import ViewMemo

    for players in (2, 4):
        memo = ViewMemo()
        rendered = [0]

        def check(
            state: engine.GameState,
            _event: dict,
            memo: ViewMemo = memo,
            rendered: list = rendered,
        ) -> None:
            fresh = render_views("g", state, "2026-01-01T00:00:00Z", None)
            assert render_views("g", state, "2026-01-01T00:00:00Z", None, None, memo) == fresh
            rendered[0] += 1

        play_game(f"memo:{players}", players, on_event=check)
        assert rendered[0] > 100 and len(memo.sides) == players


def test_a_cache_ahead_of_a_store_that_lost_its_tail_starts_over(store: RedisStore) -> None:
    """After a failover without ``?wait=`` the store may lose the last commands (tests/cluster/
    test_failover.py): a process that cached them must not fold later events onto them."""
    a, b = GameService(store), GameService(store)
    gid, _ = a.create(2, seed="svc-lost-tail")
    bot, rng = get_bot("random"), Rng(3)
    n = 0

    def play(games: GameService, moves: int) -> None:
        nonlocal n
        for _ in range(moves):
            state, version, _ = games.load(gid)
            seat = min(engine.pending(state))
            games.submit(gid, seat, bot.act(engine.legal(state, seat), None, rng), f"c{n}", version)
            n += 1

    play(a, 6)
    kept = store.version(gid)
    play(a, 4)  # a caches these; then the store "loses" them, as a promoted replica would
    lost = store.read(gid, after=kept)
    stream, meta, cmds, _views = store.keys(gid)
    survivors = store.read(gid)[:kept]
    store.client.delete(stream)  # the stream as the promoted replica has it: the first `kept`
    for e in survivors:
        store.client.xadd(stream, {"e": e.to_json()}, id=f"{e.seq}-0")
    for e in lost:
        store.client.hdel(cmds, e.command_id)
    store.client.hset(meta, mapping={"version": kept, "hash": survivors[-1].hash})
    play(b, 8)  # another process goes on from the surviving history, past a's cached version
    assert store.version(gid) > kept + 4
    assert a.load(gid)[0] == b.load(gid)[0] == GameService(store).load(gid)[0]
    play(a, 2)  # and a plays on it, on the history that is stored
    verify_chain(store.read(gid))
    assert a.load(gid)[0] == GameService(store).load(gid)[0]
