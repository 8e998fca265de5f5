"""Games: creation (seats, options, Location), reading (summary, public view, ETag / 304), the
list with its filters and keyset pagination, and the reference endpoints (catalogue, bots, index,
the OpenAPI document, health)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import yaml
from flask import Flask

from bots.base import bot_names
from engine.catalogue import CARDS, TILES, is_ambition_card
from service import catalogue as catalogue_module

from .conftest import SPEC_PATH, ValidatingClient, new_game


def test_create_a_game_with_humans_and_bots(api: ValidatingClient) -> None:
    body = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "heuristic"}, {"kind": "human"}],
        "options": {"first_game": True, "expansions": []},
    }
    r = api.post("/games", json=body)
    assert r.status_code == 201
    game = r.get_json()
    assert r.headers["Location"] == f"/games/{game['game_id']}"
    assert game["players"] == 3 and game["status"] == "active" and game["options"]["first_game"]
    assert game["seats"] == [
        {"seat": 0, "kind": "human", "claimed": False},
        {"seat": 1, "kind": "bot", "bot": "heuristic", "claimed": True},
        {"seat": 2, "kind": "human", "claimed": False},
    ]
    assert api.get(r.headers["Location"]).get_json() == game
    view = api.get(game["links"]["view"]).get_json()
    assert view["game_id"] == game["game_id"] and len(view["view"]["players"]) == 3
    # first game: nobody owes a start-tiles decision
    assert "start_tiles" not in view["view"]["pending"].values()


def test_views_carry_the_version_as_etag_and_answer_304(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2)
    r = api.get(f"/games/{gid}/view")
    tag = r.headers["ETag"]
    assert tag == f'"{r.get_json()["version"]}"'
    assert api.get(f"/games/{gid}/view", headers={"If-None-Match": tag}).status_code == 304
    assert api.get(f"/games/{gid}/view", headers={"If-None-Match": '"999"'}).status_code == 200
    r = api.get(
        f"/games/{gid}/seats/0/view",
        headers={"Authorization": f"Bearer {tokens[0]}", "If-None-Match": tag},
    )
    assert r.status_code == 304 and r.headers["ETag"] == tag


def _create(api: ValidatingClient, players: int) -> str:
    r = api.post("/games", json={"seats": [{"kind": "human"}] * players})
    gid: str = r.get_json()["game_id"]
    return gid


def test_list_filter_and_paginate(app: Flask, api: ValidatingClient) -> None:
    made = [_create(api, 2 + i % 3) for i in range(9)]  # players 2,3,4,2,3,4,...
    page = api.get("/games?limit=4").get_json()
    assert [g["game_id"] for g in page["items"]] == made[::-1][:4]
    seen = []
    extra = 0
    cursor = None
    while True:
        url = "/games?limit=4" + (f"&cursor={cursor}" if cursor else "")
        r = api.get(url)
        data = r.get_json()
        seen += [g["game_id"] for g in data["items"]]
        cursor = data["next_cursor"]
        if cursor is None:
            assert "Link" not in r.headers
            break
        assert r.headers["Link"].endswith('rel="next"') and "cursor=" in r.headers["Link"]
        _create(api, 5)  # games created while paging do not shift the pages
        extra += 1
    assert seen == made[::-1]

    threes = api.get("/games?players=3&limit=100").get_json()["items"]
    assert [g["game_id"] for g in threes] == [g for i, g in enumerate(made) if i % 3 == 1][::-1]
    # the player filter pages too
    first = api.get("/games?players=4&limit=2").get_json()
    rest = api.get(f"/games?players=4&limit=2&cursor={first['next_cursor']}").get_json()
    assert [g["game_id"] for g in first["items"] + rest["items"]] == [made[8], made[5], made[2]]
    assert rest["next_cursor"] is None

    assert api.get("/games?status=finished").get_json()["items"] == []
    assert len(api.get("/games?status=active&limit=100").get_json()["items"]) == 9 + extra
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert api.get("/games", query_string={"created_after": future}).get_json()["items"] == []
    past = api.get("/games", query_string={"created_before": future, "limit": 100}).get_json()
    assert len(past["items"]) == 9 + extra


def test_finished_games_are_listed_as_finished(api: ValidatingClient) -> None:
    from .conftest import play_http

    api.sample = 20
    gid, tokens = new_game(api, players=2, seed="list-finished")
    play_http(api, gid, tokens, seed=3)
    _create(api, 2)
    items = api.get("/games?status=finished").get_json()["items"]
    assert [g["game_id"] for g in items] == [gid] and items[0]["winners"]


def test_catalogue_lists_every_tile_card_and_die(api: ValidatingClient) -> None:
    r = api.get("/catalogue")
    cat = r.get_json()
    assert [t["tile"] for t in cat["tiles"]] == sorted(TILES)
    keys = {t["development"]["card"] for t in cat["tiles"]} | {
        t["world"]["card"] for t in cat["tiles"]
    }
    keys |= {c["card"] for f in cat["factions"] for c in f["cards"]} | {
        h["card"] for h in cat["home_worlds"]
    }
    assert keys == set(CARDS)
    assert sum(d["count"] for d in cat["dice"]) == 111
    assert cat["dice"][0]["first_id"] == 0 and cat["dice"][-1]["last_id"] == 110
    assert api.get("/catalogue", headers={"If-None-Match": r.headers["ETag"]}).status_code == 304


def test_the_catalogue_names_every_phase_face_good_and_decision(api: ValidatingClient) -> None:
    """The words clients show, served once: a name for every phase and die face, every good, and a
    title and help for every decision kind the API documents."""
    cat = api.get("/catalogue").get_json()
    names = cat["names"]
    assert list(names["phases"]) == cat["phases"]
    faces = {f for d in cat["dice"] for f in d["faces"]}
    assert faces <= set(names["faces"]) and set(names["faces"]) == set(cat["phases"]) | {"wild"}
    worlds = {c["color"] for t in cat["tiles"] for c in [t["world"]]} - {"gray"}
    assert set(names["goods"]) == worlds
    spec = yaml.safe_load(SPEC_PATH.read_text())
    kinds = spec["components"]["schemas"]["DecisionKind"]["enum"]
    assert set(cat["decisions"]) == set(kinds)
    for kind, words in cat["decisions"].items():
        assert words["title"].strip() and len(words["help"]) > 40, kind


def test_the_catalogue_says_ambition_is_unavailable_without_a_component_file() -> None:
    assert catalogue_module._ambition(None) == {"available": False}


def test_the_catalogue_offers_ambition_once_its_components_are_installed(
    api: ValidatingClient, ambition: Any
) -> None:
    """With a component file installed the lobby can offer Ambition: the file's name, every
    Ambition die by id with its faces (the Leader and Entrepreneur dice among them) and the
    objective tiles in words, when they are checked and what they give."""
    cat = api.get("/catalogue").get_json()
    amb = cat["ambition"]
    assert amb["available"] and amb["components"] == ambition.name
    by_color = {d["color"]: d for d in amb["dice"]}
    assert by_color["black"]["name"] == "Leader" and len(by_color["black"]["ids"]) == 5
    assert by_color["orange"]["name"] == "Entrepreneur" and len(by_color["orange"]["ids"]) == 9
    assert by_color["black"]["faces"] == list(ambition.dice["black"].faces)
    ids = [i for d in amb["dice"] for i in d["ids"]]
    assert len(ids) == len(set(ids)) and min(ids) == 111 and max(ids) == 111 + 38 - 1
    objectives = {o["id"]: o for o in amb["objectives"]}
    assert set(objectives) == {o.id for o in ambition.objectives}
    assert objectives[1]["text"] == "4 worlds in your tableau"
    assert objectives[1]["when"] == "At the end of Settle" and objectives[1]["talents"] == 2
    assert (
        objectives[2]["text"]
        == "2 Genes or Alien Technology worlds of cost 2 or more in your tableau"
    )
    # dice by the names the dice have (a Leader die is the component file's black die)
    assert objectives[7]["text"] == "4 Home or Leader dice in your Citizenry"
    assert objectives[13]["when"] == "After Reveal"
    assert " and " in objectives[14]["text"]
    # Ambition's tiles are listed with the base game's, so clients can name every card
    assert {t["tile"] for t in cat["tiles"]} == set(TILES) and max(TILES) > 55


def test_every_catalogue_card_has_a_one_line_power_and_its_phases(api: ValidatingClient) -> None:
    """What a tableau row shows: one line for every card, and phase icons that match its powers
    (a phase-end effect's phase; none for worlds, Reassign and immediate developments)."""
    cat = api.get("/catalogue").get_json()
    cards = [c for t in cat["tiles"] for c in (t["development"], t["world"])]
    cards += [c for f in cat["factions"] for c in f["cards"]] + cat["home_worlds"]
    assert len(cards) == len(CARDS)
    for c in cards:
        assert c["summary"].strip() and "\n" not in c["summary"], c
        if is_ambition_card(c["card"]):
            continue  # (Ambition's, when a test of this process installed them)
        assert c["phases"] == [p for p in cat["phases"] if p in c["phases"]], c
        effects = CARDS[c["card"]].effects
        named = {e["phase"] for e in effects if "phase" in e}
        assert named <= set(c["phases"]), c
        if c["kind"] == "world" or c["development_kind"] in ("reassign", "immediate"):
            assert c["phases"] == [], c
        else:
            assert c["phases"], c
    piracy = next(c for c in cards if c["card"] == "F1d")
    assert piracy["phases"] == ["ship"] and "Military" in piracy["summary"]


def test_reference_endpoints(api: ValidatingClient) -> None:
    assert api.get("/bots").get_json() == {"bots": bot_names()}
    index = api.get("/").get_json()
    for url in index["links"].values():
        if url != "/replays/verify":
            assert api.get(url).status_code == 200, url
    r = api.get("/openapi.yaml")
    assert r.mimetype == "application/yaml" and r.get_data(as_text=True).startswith("openapi: 3.1")
    assert api.get("/healthz").get_json() == {"status": "ok"}
    assert api.get("/readyz").get_json() == {"status": "ready"}


def test_a_timed_game_shows_its_deadlines(api: ValidatingClient) -> None:
    body = {
        "seats": [{"kind": "human"}, {"kind": "human"}],
        "time_control": {"per_decision": 30, "bank": 120, "increment": 5},
        "abandon_after": 2,
    }
    r = api.post("/games", json=body)
    assert r.status_code == 201, r.get_json()
    game = r.get_json()
    assert game["next_deadline"] and game["timeouts"] == [0, 0]
    gid = game["game_id"]
    token = api.post(f"/games/{gid}/seats/0/claim").get_json()["token"]
    clock = api.get(
        f"/games/{gid}/seats/0/view", headers={"Authorization": f"Bearer {token}"}
    ).get_json()["view"]["clock"]
    assert (
        clock["abandon_after"] == 2 and clock["seats"][0]["deadline"] and clock["seats"][0]["timed"]
    )
    assert api.get(f"/games/{gid}/view").get_json()["view"]["clock"] == clock
    bad = dict(body, time_control={"bank_max": 5})
    r = api.post("/games", json=bad, validate=False)  # the spec refuses it too (anyOf)
    assert r.status_code == 422 and "no time" in r.get_json()["detail"]
    r = api.post("/games", json=dict(body, time_control={"per_decision": "30"}), validate=False)
    assert r.status_code == 422 and "time_control.per_decision" in r.get_json()["errors"]


def test_bot_turns_are_handed_to_the_workers_queue() -> None:
    """With DISPATCH_TURNS (RFG_DISPATCH=1) the API enqueues a bot seat's turn for the RQ workers
    as soon as the bot owes a decision; without it (the default), nothing is enqueued (the
    workers' sweep finds it)."""
    import uuid

    from rq import Queue

    from .conftest import make_app

    for dispatch, expected in ((True, 1), (False, 0)):
        app = make_app(f"memory://{uuid.uuid4().hex}", DISPATCH_TURNS=dispatch)
        r = app.test_client().post(
            "/games", json={"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}
        )
        assert r.status_code == 201
        b = app.extensions["rfg"]
        queue = Queue(b.store.prefix, connection=b.client)
        assert queue.count == expected, (dispatch, queue.job_ids)
