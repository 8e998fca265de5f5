"""Views rendered when read: a command stores its events and the lobby summary; the public and
seat views are rendered by the first reader of a version and stored for the next, on every store
adapter. A reader always gets the view of the game's current version, whichever process wrote the
command; two processes (two ``GameService`` on one store) share what either rendered."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import engine
import events.games.service
from bots import get_bot
from engine.canonical import canonical_json
from engine.rng import Rng
from engine.state import GameState
from events.games.projections import render_views, summary, view_name
from events.games.service import GameService
from events.games.time_control import Clocks
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
    assert store.get_view(gid, view_name("public"))[0] == created  # the creation renders all
    rng = Rng(3)
    for n in range(6):
        _step(games, gid, n, rng)
    version = store.version(gid)
    assert version > created
    assert store.get_view(gid, "summary")[0] == version  # the lobby's list stays current
    assert store.get_view(gid, view_name("public"))[0] == created  # nobody read them meanwhile
    assert store.get_view(gid, view_name(1))[0] == created

    # the first reader gets the current version, rendered now, and leaves it for the next
    rebuilt = games.rebuild_views(gid)
    assert games.view(gid, "public") == (version, rebuilt[view_name("public")])
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
    assert store.get_view(gid, view_name("public")) == (
        store.version(gid),
        rebuilt[view_name("public")],
    )


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
    new = store.get_view(gid, view_name("public"))
    old = render_views(gid, old_state, "2026-01-01T00:00:00Z", None)
    assert store.put_views(gid, old_version, old) == []  # a slow reader's older render
    assert store.get_view(gid, view_name("public")) == new


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
    stored = store.get_view(gid, view_name("public"))
    final = json.loads(stored[1])
    assert final["step"] == "over" and stored[0] == store.version(gid)
    assert [p.get("name") for p in final["players"]] == ["Ada", "Grace"]


def _format_1(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
    *_args: Any,
    **_kwargs: Any,
) -> dict[str, str]:
    """The views as the first stored format held them: under ``public`` and ``seat:<n>``, the
    public view without what ``events.games.served`` adds, and a seat's view its own side, seat
    and decision alone (the reader spliced it into the public view)."""
    clocks = clocks if clocks is not None else Clocks.for_table(state.table, len(state.players))
    public = engine.observe(state, "public")
    views = {"public": canonical_json({**public, "clock": clocks.to_view()})}
    for p in state.players:
        own = engine.observe(state, p.seat)
        views[f"seat:{p.seat}"] = canonical_json(
            {"seat": p.seat, "player": own["players"][p.seat], "decision": own["decision"]}
        )
    views["summary"] = canonical_json(summary(game_id, state, created_at, finished_at, clocks))
    return views


@pytest.mark.parametrize("kept", ["live", "compacted", "archived"])
def test_views_stored_in_an_older_format_are_rendered_again(
    store_factory: Callable[..., RedisStore],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    kept: str,
) -> None:
    """A finished game whose views an earlier format stored (never rendered again: its version
    does not move) is served in the current shape, kept in its keys, compacted or archived."""
    store = store_factory(archive_dir=str(tmp_path))
    with monkeypatch.context() as m:
        m.setattr(events.games.service, "render_views", _format_1)
        old = GameService(store)
        gid, _ = old.create(2, seed=f"format-1-{kept}")
        play_out(old, gid, "heuristic")
    version = store.version(gid)
    assert store.get_view(gid, "seat:0")[0] == version  # the old format, at the last version
    if kept != "live":
        assert store.compact(gid) is not None
    if kept == "archived":
        assert store.archive(gid) is not None

    games = GameService(store)  # the current code, on the same store
    state, _, _ = games.load(gid)
    for viewer in ("public", 0, 1):
        pos, text = games.view(gid, viewer)
        view = json.loads(text)
        assert pos == version
        seat = None if viewer == "public" else viewer
        assert view == served(engine.observe(state, viewer), view["clock"], seat)
    # rendered once and stored for the next reader, under the current format's names
    assert store.get_view(gid, view_name(0)) == (version, games.view(gid, 0)[1])
