"""Ladders on the store: scheduling, results recorded once, live ratings equal rebuilt ones."""

from __future__ import annotations

import json

import fakeredis
import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from events.games.service import GameService
from events.store import RedisStore
from ladder.plot import history_svg
from ladder.service import LadderConfig, LadderError, Ladders, tables_equal


def drive(games: GameService, gid: str) -> None:
    """Play every built-in bot seat of a game to its end (what the workers do)."""
    rng = Rng(7)
    n = 0
    while True:
        state, version, _ = games.load(gid)
        if state.over:
            return
        seat = min(engine.pending(state))
        bot = get_bot(state.table["seats"][seat]["bot"])
        view = engine.observe(state, seat) if bot.needs_view else None
        games.submit(gid, seat, bot.act(engine.legal(state, seat), view, rng), f"t{n}", version)
        n += 1


@pytest.fixture
def ladders() -> Ladders:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return Ladders(client, GameService(RedisStore(client)))


def test_ladder_runs_and_ratings_rebuild(ladders: Ladders) -> None:
    ladders.create(LadderConfig("main", players=[2, 3], concurrency=3))
    for name, bot in (("heur", "heuristic"), ("rand1", "random"), ("rand2", "random")):
        ladders.add_entrant("main", name, bot=bot)
    finished = 0
    while finished < 18:
        for gid in ladders.schedule("main", rng_seed=f"s{finished}"):
            drive(ladders.games, gid)
        finished += ladders.record_finished("main")
    board = ladders.leaderboard("main")
    assert board[0]["entrant"] == "heur"
    assert all(r["games"] > 0 for r in board)
    assert tables_equal(ladders.rebuild_ratings("main"), ladders.live_table("main"))
    assert ladders.record_finished("main") == 0  # nothing recorded twice
    h2h = {(r["a"], r["b"]): r for r in ladders.head_to_head("main")}
    assert h2h[("heur", "rand1")]["win_rate"] > 0.5
    hist = ladders.history("main", "heur")
    assert len(hist) == board[0]["games"]
    svg = history_svg({e: ladders.history("main", e) for e in ladders.entrants("main")}, "main")
    assert svg.startswith("<svg") and svg.count("<polyline") == 3


def test_duplicate_sets_share_a_seed_and_rotate_seats(ladders: Ladders) -> None:
    ladders.create(LadderConfig("dup", players=[3], concurrency=1, duplicate=True))
    for name in ("a", "b", "c"):
        ladders.add_entrant("dup", name, bot="random")
    created = ladders.schedule("dup", rng_seed="x")
    assert len(created) == 3
    games = ladders.ladder_games("dup")
    seeds = {ladders.games.load(g)[0].seed for g in created}
    assert len(seeds) == 1
    for seat in range(3):
        assert {games[g]["seats"][seat] for g in created} == {"a", "b", "c"}


def test_duplicate_sets_keep_external_bots_out(ladders: Ladders) -> None:
    """An external program in two games of one deal would see its opponents' dice in the other."""
    ladders.create(LadderConfig("dup", players=[2], concurrency=2, duplicate=True))
    with pytest.raises(LadderError, match="without duplicate sets"):
        ladders.add_entrant("dup", "ext", account="0" * 16)
    assert "ext" not in ladders.entrants("dup")
    # an entrant stored before this rule (written straight to the store) is never seated
    ladders.store.add_entrant("dup", "old", json.dumps({"entrant": "old", "account": "1" * 16}))
    for name in ("a", "b"):
        ladders.add_entrant("dup", name, bot="random")
    created = ladders.schedule("dup", rng_seed="x")
    assert len(created) == 2
    seated = {e for g in created for e in ladders.ladder_games("dup")[g]["seats"]}
    assert seated == {"a", "b"}
    # a ladder without duplicate sets takes external bots as before
    ladders.create(LadderConfig("open", players=[2], concurrency=1))
    assert ladders.add_entrant("open", "ext", account="0" * 16)["account"] == "0" * 16


def test_bad_requests_say_what_to_do(ladders: Ladders) -> None:
    with pytest.raises(LadderError, match="no ladder named"):
        ladders.add_entrant("nope", "x", bot="random")
    ladders.create(LadderConfig("l", players=[4]))
    with pytest.raises(LadderError, match="exists already"):
        ladders.create(LadderConfig("l"))
    with pytest.raises(LadderError, match="unknown built-in bot"):
        ladders.add_entrant("l", "x", bot="alphago")
    ladders.add_entrant("l", "x", bot="random")
    with pytest.raises(LadderError, match="already an entrant"):
        ladders.add_entrant("l", "x", bot="random")
    with pytest.raises(LadderError, match="needs at least 4 entrants"):
        ladders.schedule("l")


def test_a_duplicate_set_is_held_until_its_last_game_ends(ladders: Ladders) -> None:
    """Each game of a set is held before it exists; recording the last result releases the set
    (``events.games.seeds``): a spectator of the first game to end cannot read the others' seed."""
    ladders.create(LadderConfig("dup", players=[2], concurrency=2, duplicate=True))
    for name in ("a", "b"):
        ladders.add_entrant("dup", name, bot="random")
    first, second = ladders.schedule("dup", rng_seed="x")
    holds = ladders.games.holds
    for gid in (first, second):
        assert holds.held.members(gid) == sorted([first, second])
    commitments = {
        json.loads(ladders.games.view(g, "public")[1])["seed_commitment"] for g in (first, second)
    }
    assert len(commitments) == 2  # one seed, two unrelated commitments
    drive(ladders.games, first)
    assert ladders.record_finished("dup") == 1
    assert "seed" not in json.loads(ladders.games.view(first, "public")[1])
    drive(ladders.games, second)
    assert ladders.record_finished("dup") == 1
    assert holds.held.members(first) is None and holds.held.members(second) is None
    seeds = {json.loads(ladders.games.view(g, "public")[1])["seed"] for g in (first, second)}
    assert len(seeds) == 1


def test_a_set_cut_short_holds_only_its_games_and_single_games_are_not_held(
    ladders: Ladders,
) -> None:
    ladders.create(LadderConfig("dup", players=[3], concurrency=3, duplicate=True))
    ladders.create(LadderConfig("one", players=[2], concurrency=1))
    for name in ("a", "b", "c"):
        ladders.add_entrant("dup", name, bot="random")
        ladders.add_entrant("one", name, bot="random")
    cut = ladders.schedule("dup", rng_seed="x", limit=2)
    assert len(cut) == 2
    assert all(ladders.games.holds.held.members(g) == sorted(cut) for g in cut)
    (single,) = ladders.schedule("one", rng_seed="x")
    assert ladders.games.holds.held.members(single) is None


def test_an_account_is_one_current_entrant_of_a_ladder(
    ladders: Ladders, monkeypatch: pytest.MonkeyPatch
) -> None:
    ladders.create(LadderConfig("o", players=[2], open=True))
    account = "0123456789abcdef"
    spec, new = ladders.join("o", account, "t0")
    assert new and spec["entrant"] == f"acct.{account}"
    # the admin cannot enter it again under another name: it would meet itself
    with pytest.raises(LadderError, match="already, as 'acct.0123456789abcdef'"):
        ladders.add_entrant("o", "again", account=account)
    # a join that read the entrants before a racing join of the same account wrote them
    monkeypatch.setattr(ladders, "entries_of", lambda name, acct: {})
    assert ladders.join("o", account, "t1") == (spec, False)
    monkeypatch.undo()
    # gone, it may be entered by the admin under another name; it leaves both, and joins back
    # as the one it joined as: never two current entrants
    ladders.leave("o", account, "t2")
    assert ladders.current_entrant("o", account) is None
    ladders.add_entrant("o", "named", account=account)
    assert ladders.current_entrant("o", account) == "named"
    assert ladders.leave("o", account, "t3") == ["named"]
    assert ladders.join("o", account, "t4") == (spec, True)
    current = [e for e, s in ladders.entries_of("o", account).items() if "left_at" not in s]
    assert current == [f"acct.{account}"]


def test_an_aborted_game_records_no_result_and_frees_its_place(ladders: Ladders) -> None:
    """An aborted game counts for nothing: no result, no rating, not counted as a meeting;
    the ladder marks it so and no longer counts it as running."""
    ladders.create(LadderConfig("abort", players=[2], concurrency=1))
    for name in ("a", "b"):
        ladders.add_entrant("abort", name, bot="random")
    (gid,) = ladders.schedule("abort", rng_seed="s")
    ladders.games.submit(gid, 1, {"kind": "abort"}, "abort", actor="seat:1")
    assert ladders.games.load(gid)[0].end_reason == "aborted"
    assert ladders.record_finished("abort") == 0
    assert ladders.results("abort") == []
    assert all(r["games"] == 0 for r in ladders.leaderboard("abort"))
    assert ladders.ladder_games("abort")[gid]["status"] == "aborted"
    assert ladders.running("abort") == []
    assert ladders.record_finished("abort") == 0  # and never later
    assert tables_equal(ladders.rebuild_ratings("abort"), ladders.live_table("abort"))
    (again,) = ladders.schedule("abort", rng_seed="t")  # its place is free for another game
    drive(ladders.games, again)
    assert ladders.record_finished("abort") == 1
    assert [r.game_id for r in ladders.results("abort")] == [again]


def test_joining_or_leaving_a_ladder_that_is_gone_says_so(ladders: Ladders) -> None:
    from ladder.service import UnknownLadder

    for call in (ladders.join, ladders.leave):
        with pytest.raises(UnknownLadder, match="no ladder named 'gone'"):
            call("gone", "0123456789abcdef", "t0")
    assert ladders.standings_of("0123456789abcdef") == []
