"""Views rendered when read: a command stores its events and the lobby summary; the public and
seat views are rendered by the first reader of a version and stored for the next, on every store
adapter. A reader always gets the view of the game's current version, whichever process wrote the
command; two processes (two ``GameService`` on one store) share what either rendered."""

from __future__ import annotations

import json

import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from events.games.projections import render_views
from events.games.service import GameService
from events.store import GameNotFound, RedisStore
from tests.events.games.test_games import play_out, served


def _step(games: GameService, gid: str, n: int, rng: Rng) -> None:
    """One random-bot command of whichever seat owes a decision."""
    state, version, _ = games.load(gid)
    seat = next(p.seat for p in state.players if engine.legal(state, p.seat) is not None)
    cmd = get_bot("random").act(engine.legal(state, seat), engine.observe(state, seat), rng)
    games.submit(gid, seat, cmd, f"c{n}", expected_version=version)


def test_a_command_writes_the_summary_and_leaves_the_views_to_their_readers(
    store: RedisStore,
) -> None:
    games = GameService(store)
    gid, created = games.create(2, seed="lazy-1")
    assert store.get_view(gid, "public")[0] == created  # the creation renders every view
    rng = Rng(3)
    for n in range(6):
        _step(games, gid, n, rng)
    version = store.version(gid)
    assert version > created
    assert store.get_view(gid, "summary")[0] == version  # the lobby's list stays current
    assert store.get_view(gid, "public")[0] == created  # nobody read the views meanwhile
    assert store.get_view(gid, "seat:1")[0] == created

    # the first reader gets the current version, rendered now, and leaves it for the next
    rebuilt = games.rebuild_views(gid)
    assert games.view(gid, "public") == (version, rebuilt["public"])
    stored = {name: store.get_view(gid, name) for name in rebuilt}
    assert stored == {name: (version, text) for name, text in rebuilt.items()}
    pos, whole = games.view(gid, 1)
    state, _, _ = games.load(gid)
    assert pos == version
    assert json.loads(whole) == served(engine.observe(state, 1), json.loads(whole)["clock"], 1)


def test_a_reader_in_another_process_sees_the_command_of_this_one(store: RedisStore) -> None:
    writer, reader = GameService(store), GameService(store)  # two processes' caches on one store
    gid, _ = writer.create(3, seed="lazy-2")
    rng = Rng(5)
    for n in range(12):
        _step(writer, gid, n, rng)
        version = store.version(gid)
        pos, text = reader.view(gid, n % 3)  # renders from its own cache, caught up
        assert pos == version
        state, _, _ = writer.load(gid)
        view = json.loads(text)
        assert view == served(engine.observe(state, n % 3), view["clock"], n % 3)
        assert reader.view(gid, "public")[0] == version
    # what the reader rendered is what a rebuild from the whole stream renders
    rebuilt = writer.rebuild_views(gid)
    assert store.get_view(gid, "public") == (store.version(gid), rebuilt["public"])


def test_a_finished_game_stores_its_final_views_with_the_last_command(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(2, seed="lazy-3")
    play_out(games, gid, "heuristic")
    version = store.version(gid)
    state, _, _ = games.load(gid)
    assert state.over
    rebuilt = games.rebuild_views(gid)
    for name, text in rebuilt.items():  # stored by the append, before anybody read them
        assert store.get_view(gid, name) == (version, text), name


def test_an_older_render_never_replaces_a_newer_view(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(2, seed="lazy-4")
    rng = Rng(7)
    _step(games, gid, 0, rng)
    old_state, old_version, _ = games.load(gid)
    _step(games, gid, 1, rng)
    games.view(gid, "public")  # stored at the new version
    new = store.get_view(gid, "public")
    old = render_views(gid, old_state, "2026-01-01T00:00:00Z", None)
    assert store.put_views(gid, old_version, old) == []  # a slow reader's older render
    assert store.get_view(gid, "public") == new


def test_a_seat_the_game_lacks_is_not_found(store: RedisStore) -> None:
    games = GameService(store)
    gid, _ = games.create(2, seed="lazy-5")
    with pytest.raises(GameNotFound):
        games.view(gid, 7)
    with pytest.raises(GameNotFound):
        games.view("nosuchgame", "public")


def test_the_views_show_the_seats_names_the_reader_gives(store: RedisStore) -> None:
    """Names are rendered into the views: read when a version is rendered (and when ``render``
    renders it again, as a claim with a name does), and in the views the last move stores."""
    names: dict[int, str] = {}
    games = GameService(store, names=lambda _gid: names)
    gid, _ = games.create(2, seed="names-1")
    _step(games, gid, 0, Rng(9))
    names[0] = "Ada"
    view = json.loads(games.view(gid, 1)[1])
    assert [p.get("name") for p in view["players"]] == ["Ada", None]
    names[1] = "Grace"
    assert "Grace" not in games.view(gid, 0)[1]  # this version's views are stored already
    games.render(gid)
    view = json.loads(games.view(gid, 0)[1])
    assert [p.get("name") for p in view["players"]] == ["Ada", "Grace"]
    play_out(games, gid)
    final = json.loads(store.get_view(gid, "public")[1])
    assert final["step"] == "over" and store.get_view(gid, "public")[0] == store.version(gid)
    assert [p.get("name") for p in final["players"]] == ["Ada", "Grace"]
