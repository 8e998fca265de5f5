"""Duplicate sets stay fair to spectators: a spectator who reads every public answer about a
running duplicate set (one seed dealt to every seating, the games played at once) cannot learn
the seed, nor pair the set's games by their commitments, while any game of the set still runs -
even when one of them has ended long before the others. Once the last has ended, every game
reveals the seed, its commitment opens, and its full signed log verifies (``POST
/replays/verify`` and ``rfg replay --key``).

Before seeds were held back and commitments bound the game id, the first game to end showed its
seed in its public view and log, and the set's games published one commitment: the attacker below
then re-dealt a running sibling's setup from that seed, i.e. it held the generator of every die
still to come there."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import engine
from bots import get_bot
from engine import rng as rngmod
from engine.phases.setup import RULES_VERSION
from engine.rng import Rng
from events.verify.replay import verify_text
from events.verify.signing import load_public_key
from ladder.service import Ladders
from rfgcli.main import main as rfg
from service.backend import backend
from tests.security.attacker import deal, generators, public_setup, public_start_tiles, strings
from tests.service.conftest import ADMIN, bearer

PLAYERS = 3


def _play(games: Any, gid: str, until_round: int | None = None) -> None:
    """The random bot in every seat, in process, to the end (or to ``until_round``)."""
    bot, rng, n = get_bot("random"), Rng.from_seed(f"play:{gid}"), 0
    while True:
        state, _, _ = games.load(gid)
        if state.over or (until_round is not None and state.round >= until_round):
            return
        seat, decision = min(
            (s, d) for s in engine.pending(state) if (d := engine.legal(state, s)) is not None
        )
        cmd = bot.act(decision, None, rng)
        games.submit(gid, seat, cmd, f"c{n}", actor="bot:random")
        n += 1


def _read_everything(api: Any, ladder: str, gids: list[str]) -> list[Any]:
    """What a spectator can read about the set: lobby, ladder, and per game its summary, view,
    feed, live stream and log export (the stream only once: it stays open a second)."""
    shown: list[Any] = [api.get("/games?limit=100").get_json()]
    for path in ("", "/leaderboard", "/head-to-head"):
        shown.append(api.get(f"/ladders/{ladder}{path}").get_json())
    for i, gid in enumerate(gids):
        shown += [
            api.get(f"/games/{gid}").get_json(),
            api.get(f"/games/{gid}/view").get_json(),
            api.get(f"/games/{gid}/events?limit=1000").get_json(),
        ]
        shown += [json.loads(line) for line in _log(api, gid)[1]]
        if i == 0:
            shown.append(api.get(f"/games/{gid}/events/stream").get_data(as_text=True).split())
    return shown


def _log(api: Any, gid: str) -> tuple[str, list[str]]:
    r = api.get(f"/games/{gid}/log")
    assert r.status_code == 200
    return r.headers["Log-Kind"], r.get_data(as_text=True).splitlines()


def _sha256(*parts: str) -> str:
    return hashlib.sha256(b"\x00".join(p.encode() for p in parts)).hexdigest()


def _opens(candidate: str, commitment: str, gids: list[str]) -> bool:
    """Whether ``candidate``, as a seed, gives ``commitment`` in a form ever published: rules 1-2
    sha256(seed), rules 3 sha256("rfg/commit" 0 seed), rules 4 and later the same bound to a game id."""
    forms = {_sha256(candidate), _sha256("rfg/commit", candidate)}
    forms |= {_sha256("rfg/commit", candidate, g) for g in gids}
    return commitment in forms


def _attack(
    shown: list[Any], views: dict[str, dict[str, Any]], tiles: dict[str, list[list[int]]]
) -> list[str]:
    """The running games whose seed some public string is: it re-deals their setup (so it gives
    their generator), or it opens their commitment. A re-deal is of everything the setup dealt
    that is public: factions, home worlds and start tiles (``tiles``, from each game's events);
    factions and home worlds alone are 18 bits, which one of a few thousand candidates matches
    by chance in a few percent of runs."""
    candidates = {s for doc in shown for s in strings(doc)}
    broken = []
    for gid, view in views.items():
        if view["step"] == "over":
            continue
        seen = (public_setup(view), tiles[gid])
        for c in candidates:
            dealt = any(deal(Rng(state), len(seen[0])) == seen for state in generators(c))
            if dealt or _opens(c, view["seed_commitment"], list(views)):
                broken.append(gid)
                break
    return broken


def _start_tiles(api: Any, gid: str) -> list[list[int]]:
    feed = api.get(f"/games/{gid}/events?limit=1000").get_json()
    assert not feed["more"]
    tiles = public_start_tiles(feed["events"], PLAYERS)
    assert tiles is not None, f"game {gid}: the start tiles are not public yet"
    return tiles


def test_a_spectator_learns_nothing_of_a_duplicate_set_until_it_has_ended(
    api: Any, app: Any, tmp_path: Path
) -> None:
    admin = bearer(ADMIN)
    body = {"name": "dup", "players": [PLAYERS], "concurrency": PLAYERS, "duplicate": True}
    assert api.post("/ladders", json=body, headers=admin).status_code == 201
    for name in ("a", "b", "c"):
        r = api.post(
            "/ladders/dup/entrants", json={"entrant": name, "bot": "random"}, headers=admin
        )
        assert r.status_code == 201
    with app.app_context():
        b = backend()
        games = b.games
        gids = Ladders(b.client, games, prefix=b.store.prefix).schedule("dup", rng_seed="x")
        assert len(gids) == PLAYERS
        seed = games.load(gids[0])[0].seed  # the oracle (the server's own state), not the attacker
        assert {games.load(g)[0].seed for g in gids} == {seed}
        # one game of the set ends while the others are at round 6 and at their first round
        _play(games, gids[0])
        _play(games, gids[1], until_round=6)
        _play(games, gids[2], until_round=1)

    shown = _read_everything(api, "dup", gids)
    views = {g: api.get(f"/games/{g}/view").get_json()["view"] for g in gids}
    assert views[gids[0]]["step"] == "over" and views[gids[1]]["step"] != "over"
    tiles = {g: _start_tiles(api, g) for g in gids[1:]}
    # (the control: the set's seed re-deals what each running game shows of its setup)
    for g in gids[1:]:
        dealt = deal(Rng(rngmod.start_state(seed, views[g]["rules"])), PLAYERS)
        assert dealt == (public_setup(views[g]), tiles[g])
    assert _attack([[seed]], views, tiles) == gids[1:]
    # the attack: no public string re-deals a running game or opens its commitment
    assert _attack(shown, views, tiles) == [], "a public string gives the seed of a running game"
    texts = [json.dumps(doc) for doc in shown]
    assert not any(seed in t for t in texts), "the seed is readable before the set has ended"
    # ... nor do the commitments pair the games of the set
    commitments = {views[g]["seed_commitment"] for g in gids}
    assert len(commitments) == PLAYERS, "the games of a set publish one commitment"

    # the finished game says why its seed is not there, and serves no ETag to keep that view
    r = api.get(f"/games/{gids[0]}/view")
    assert r.get_json()["view"]["seed_withheld"] == "duplicate-set" and "ETag" not in r.headers
    kind, lines = _log(api, gids[0])
    assert kind == "withheld"
    first = json.loads(lines[0])["seed_withheld"]
    assert first["reason"] == "duplicate-set" and first["game_id"] == gids[0]
    assert not any('"signature"' in line or '"hash"' in line for line in lines)
    verdict = api.post(
        "/replays/verify", data="\n".join(lines), content_type="application/x-ndjson"
    ).get_json()
    assert verdict["verdict"] == "unverifiable" and "duplicate set" in verdict["reason"]

    with app.app_context():
        for g in gids[1:]:
            _play(backend().games, g)

    # the set has ended: every game reveals the seed its own commitment binds, every log verifies
    key = api.get("/signing-key").get_json()["public_key"]
    for gid in gids:
        view = api.get(f"/games/{gid}/view").get_json()["view"]
        assert view["seed"] == seed and "seed_withheld" not in view
        assert view["seed_commitment"] == _sha256("rfg/commit", seed, gid)
        assert view["rules"] == RULES_VERSION
        kind, lines = _log(api, gid)
        assert kind == "full"
        text = "\n".join(lines) + "\n"
        verdict = api.post(
            "/replays/verify", data=text, content_type="application/x-ndjson"
        ).get_json()
        assert verdict["ok"] and verdict["authentic"], verdict
        assert verify_text(text, load_public_key(key)).ok
        path = tmp_path / f"{gid}.jsonl"
        path.write_text(text)
        assert rfg(["replay", "--key", key, str(path)]) == 0
    with app.app_context():  # the set is released: nothing left of its hold
        b = backend()
        assert not [k for k in b.client.scan_iter(f"{b.store.prefix}:seedhold:*")]
