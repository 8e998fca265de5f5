"""``rfg ladder``: create ladders, add entrants, run the scheduler, print the leaderboard, plot.

The store is the one the server uses (``--url``, default ``$RFG_STORE_URL``, ``$REDIS_URL`` or the
embedded store):
the CLI talks to it directly, so it needs no admin token. ``run`` starts exactly N games (never more,
whatever the ladder's concurrency) and waits until they have finished, with a progress line on
stderr; built-in bots are played by the workers (``rfg worker``), or in this process with
``--inline``. ``pause`` stops the workers from starting new games of a ladder (running games
finish and are recorded), ``resume`` lets them start games again, ``open`` lets bot accounts
join and leave it with their own token (``close``: no more joining, those in stay), ``delete``
removes the ladder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import engine
from bots import get_bot
from engine.rng import Rng


def add_parser(sub: Any) -> None:
    p = sub.add_parser("ladder", help="bot-vs-bot ladders: create, add entrants, run, leaderboard")
    p.add_argument(
        "--url",
        default=None,
        help="store URL (default $RFG_STORE_URL, $REDIS_URL or the embedded store)",
    )
    p.add_argument(
        "--prefix",
        default=None,
        help="store key prefix, as the API and workers use (default $RFG_STORE_PREFIX or 'rfg')",
    )
    ls = p.add_subparsers(dest="action", required=True)
    c = ls.add_parser("create", help="create a ladder")
    c.add_argument("name")
    c.add_argument(
        "--players", type=int, action="append", help="player count (repeat for a mix; default 4)"
    )
    c.add_argument("--concurrency", type=int, default=4, help="games kept running (default 4)")
    c.add_argument("--duplicate", action="store_true", help="play each deal once per seat rotation")
    c.add_argument(
        "--seconds-per-decision", type=float, default=None, help="time control for external bots"
    )
    a = ls.add_parser("add", help="add an entrant: a built-in bot or an external bot account")
    a.add_argument("name")
    a.add_argument("entrant")
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument("--bot", help="built-in bot name (random, heuristic)")
    g.add_argument("--account", help="external bot account id (registered through the API)")
    r = ls.add_parser("run", help="start exactly N games of the ladder and wait until they finish")
    r.add_argument("name")
    r.add_argument("--games", type=_positive, default=20, help="games to play (default 20)")
    r.add_argument(
        "--inline",
        action="store_true",
        help="play built-in bots in this process (no worker needed)",
    )
    r.add_argument("--poll", type=float, default=0.2, help="seconds between scheduler passes")
    b = ls.add_parser("leaderboard", help="print the leaderboard")
    b.add_argument("name")
    b.add_argument("--json", action="store_true")
    h = ls.add_parser("h2h", help="print the head-to-head table")
    h.add_argument("name")
    pl = ls.add_parser("plot", help="write the rating history as SVG")
    pl.add_argument("name")
    pl.add_argument("--out", default="-", help="file (default stdout)")
    ls.add_parser("list", help="list ladders")
    pa = ls.add_parser("pause", help="start no new game (running games finish and are recorded)")
    pa.add_argument("name")
    re_ = ls.add_parser("resume", help="let the workers start the ladder's games again")
    re_.add_argument("name")
    op = ls.add_parser("open", help="let bot accounts join it themselves (POST /bots/me/ladders)")
    op.add_argument("name")
    cl = ls.add_parser("close", help="no more joining by bot accounts (those in stay)")
    cl.add_argument("name")
    de = ls.add_parser(
        "delete", help="delete a ladder, its results and ratings (running games finish unrecorded)"
    )
    de.add_argument("name")
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"give 1 or more, not {n}")
    return n


def _ladders(url: str | None, prefix: str = "rfg") -> Any:
    import events.store
    from events.games.service import GameService
    from events.store.accounts import SeatTokenStore
    from ladder.service import Ladders

    client = events.store.connect(url)
    store = events.store.RedisStore(client, prefix=prefix)
    return Ladders(client, GameService(store, names=SeatTokenStore(store).names), prefix=prefix)


def play_inline(ladders: Any, gid: str) -> None:
    """Play the built-in bot seats of one game until no built-in bot owes a decision.

    Workers may be playing the same game (``make run`` is up): each decision is played under the
    command id a worker gives it (``bot:<seat>:<decision_id>``, the bot's randomness derived from it),
    so whichever of the two stores it first, the game is the same and the other's attempt is a
    duplicate; a game that moved on meanwhile (``ConcurrencyConflict``) is read again."""
    from events.store import ConcurrencyConflict

    games = ladders.games
    while True:
        state, version, clocks = games.load_clocks(gid)
        if state.over:
            return
        seats = [
            s for s in sorted(engine.pending(state)) if state.table["seats"][s].get("kind") == "bot"
        ]
        if not seats:
            return
        seat = seats[0]
        bot = get_bot(state.table["seats"][seat]["bot"])
        decision = engine.legal(state, seat)
        decision_id = clocks.seats[seat].decision_id
        if decision is None or decision_id is None:
            return
        view = engine.observe(state, seat) if bot.needs_view else None
        command_id = f"bot:{seat}:{decision_id}"  # the workers' id for this decision
        # the bot's randomness is secret like the dice: derived from the game's seed
        cmd = bot.act(decision, view, Rng.for_bot(state.seed, command_id))
        try:
            games.submit(gid, seat, cmd, command_id, version, actor=f"bot:{bot.name}")
        except ConcurrencyConflict:
            continue  # a worker played meanwhile: read the game again


def run(args: argparse.Namespace) -> int:
    from events import config
    from ladder.service import LadderError

    try:
        env = config.read()
    except ValueError as exc:
        print(f"rfg ladder: {exc}", file=sys.stderr)
        return 2
    url = args.url if args.url is not None else env.store_url
    try:
        ladders = _ladders(url, args.prefix or env.store_prefix)
        return int(ACTIONS[args.action](ladders, args) or 0)
    except (LadderError, TimeoutError) as exc:
        print(f"rfg ladder: {exc}", file=sys.stderr)
        return 2


def _create(ladders: Any, args: argparse.Namespace) -> None:
    from ladder.service import LadderConfig

    tc = {"per_decision": args.seconds_per_decision} if args.seconds_per_decision else {}
    cfg = ladders.create(
        LadderConfig(
            args.name,
            players=args.players or [4],
            concurrency=args.concurrency,
            duplicate=args.duplicate,
            time_control=tc,
        )
    )
    print(json.dumps(cfg.to_dict(), sort_keys=True))


def _add(ladders: Any, args: argparse.Namespace) -> None:
    print(
        json.dumps(ladders.add_entrant(args.name, args.entrant, bot=args.bot, account=args.account))
    )


def _list(ladders: Any, args: argparse.Namespace) -> None:
    for n in ladders.names():
        print(n)


def _pause_or_resume(ladders: Any, args: argparse.Namespace) -> None:
    cfg = ladders.update(args.name, paused=args.action == "pause")
    running = len(ladders.running(args.name))
    state = "paused: no new game starts" if cfg.paused else "resumed: the workers start its games"
    print(f"ladder {args.name} {state} ({running} running)")


def _open_or_close(ladders: Any, args: argparse.Namespace) -> None:
    cfg = ladders.update(args.name, open=args.action == "open")
    state = (
        "open: bot accounts join it with POST /bots/me/ladders"
        if cfg.open
        else "closed: bot accounts no longer join it (those in stay)"
    )
    print(f"ladder {args.name} {state}")


def _delete(ladders: Any, args: argparse.Namespace) -> None:
    from workers.ladders import scheduling_lock

    with scheduling_lock(ladders.client, ladders.prefix):
        running = ladders.delete(args.name)
    print(
        f"ladder {args.name} deleted"
        + (f"; its {running} running game(s) finish as ordinary games" if running else "")
    )


def _leaderboard(ladders: Any, args: argparse.Namespace) -> None:
    rows = ladders.leaderboard(args.name)
    if args.json:
        print(json.dumps(rows, sort_keys=True))
        return
    print(f"{'#':>3} {'entrant':<20} {'rating':>8} {'mu':>7} {'sigma':>6} {'games':>6} {'win%':>6}")
    for r in rows:
        flag = " (provisional)" if r["provisional"] else ""
        pos = r["position"] if r["position"] is not None else "-"
        print(
            f"{pos:>3} {r['entrant']:<20} {r['rating']:>8.2f} {r['mu']:>7.2f} {r['sigma']:>6.2f} "
            f"{r['games']:>6} {100 * r['win_rate']:>5.1f}%{flag}"
        )


def _h2h(ladders: Any, args: argparse.Namespace) -> None:
    for r in ladders.head_to_head(args.name):
        lo, hi = r["ci95"]
        print(
            f"{r['a']:<16} vs {r['b']:<16} {r['games']:>5} games  {100 * r['win_rate']:5.1f}% "
            f"[{100 * lo:.1f}%, {100 * hi:.1f}%]"
        )


def _plot(ladders: Any, args: argparse.Namespace) -> None:
    from ladder.plot import history_svg

    hist = {e: ladders.history(args.name, e) for e in ladders.entrants(args.name)}
    svg = history_svg(hist, f"ladder {args.name}: conservative rating (mu - 3 sigma)")
    if args.out == "-":
        sys.stdout.write(svg + "\n")
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(svg + "\n")


def _run(ladders: Any, args: argparse.Namespace) -> int:
    """Start exactly ``args.games`` games (at most ``concurrency`` at a time) and wait for them."""
    from ladder.service import LadderError

    if ladders.config(args.name).paused:
        raise LadderError(
            f"ladder {args.name!r} is paused; run 'rfg ladder resume {args.name}' first"
        )
    target = args.games
    mine: set[str] = set()
    done = 0
    started = time.perf_counter()
    while done < target:
        if len(mine) < target:
            mine.update(ladders.schedule(args.name, limit=target - len(mine)))
        if args.inline:
            for gid in ladders.running(args.name):
                play_inline(ladders, gid)
        else:
            time.sleep(args.poll)
        ladders.record_finished(args.name)
        games = ladders.ladder_games(args.name)
        done = sum(1 for g in mine if games.get(g, {}).get("status") == "finished")
        if len(mine) < target and ladders.config(args.name).paused:
            raise LadderError(
                f"ladder {args.name!r} was paused after {len(mine)} of {target} "
                f"games started; {done} finished"
            )
        rate = done / max(time.perf_counter() - started, 1e-9) * 3600
        top = ladders.leaderboard(args.name)[:1]
        lead = (
            f"  leader {top[0]['entrant']} {top[0]['rating']:.2f}"
            if top and top[0]["games"]
            else ""
        )
        sys.stderr.write(f"\r{done}/{target} games finished  {rate:,.0f} games/h{lead}   ")
        sys.stderr.flush()
    sys.stderr.write("\n")
    return 0


#: ``rfg ladder <action>`` -> what it does (a non-zero result is the exit status)
ACTIONS: dict[str, Any] = {
    "create": _create,
    "add": _add,
    "list": _list,
    "run": _run,
    "pause": _pause_or_resume,
    "resume": _pause_or_resume,
    "open": _open_or_close,
    "close": _open_or_close,
    "delete": _delete,
    "leaderboard": _leaderboard,
    "h2h": _h2h,
    "plot": _plot,
}
