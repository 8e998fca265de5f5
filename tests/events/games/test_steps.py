"""Replay steps (``GameService.view_at``, ``events.games.steps``): the view at event N is the first N events
folded and rendered, whether the game is over (its log and states kept, folded on from the
nearest) or under way (folded from its start, nothing kept), on every store adapter."""

from __future__ import annotations

import pytest

from events.games.projections import render_views, view_name
from events.games.service import GameService
from events.games.time_control import fold
from events.store import GameNotFound, RedisStore
from tests.events.games.test_games import play_out


def _from_scratch(store: RedisStore, gid: str, at: int, viewer: int | str) -> str:
    envs = store.read(gid, limit=at)
    state, clocks = fold(None, None, envs)
    views = render_views(gid, state, envs[0].ts, envs[-1].ts if state.over else None, clocks)
    return views[view_name(viewer)]


def test_steps_of_a_game_under_way_and_over_are_its_prefixes_folded(store: RedisStore) -> None:
    games = GameService(store)
    gid, created = games.create(2, seed="steps-1")
    assert games.view_at(gid, created, "public") == _from_scratch(store, gid, created, "public")
    assert not games.steps._logs  # a game under way: nothing kept
    play_out(games, gid)
    total = store.version(gid)
    for at in (total, 1, total // 3, total // 3 + 1, 2 * total // 3, 65, 64, 63, total - 1):
        for viewer in ("public", 0, 1):
            assert games.view_at(gid, at, viewer) == _from_scratch(store, gid, at, viewer), at
    assert list(games.steps._logs) == [gid] and games.steps._logs[gid].marks
    for bad in (0, total + 1):
        with pytest.raises(ValueError, match=f"from 1 to {total}"):
            games.view_at(gid, bad, "public")
    with pytest.raises(GameNotFound):
        games.view_at(gid, 1, 2)  # no such seat
    with pytest.raises(GameNotFound):
        games.view_at("nosuchgame", 1, "public")
