"""``Bot``: a bot account's program that runs forever from its token, and its command line.

    python -m rfg_client --token rfgb_... [--url URL] [--join LADDER]
                         [--challenge ACCOUNT [--challenges N] [--rated LADDER]]

Two streams, each resumed with ``Last-Event-ID`` (``Client.follow``), whatever the number of
games (a token may hold ``MAX_STREAMS_PER_TOKEN``, 4 by default, streams open at once):

* the account's events (``GET /bots/me/events``): a ``challenge`` is accepted or declined as
  ``accept_challenge`` says (``policy.py``); ``game-started`` and ``game-finished`` are logged
  and end the wait of a challenge the bot sent;
* its decisions across all its games (``GET /bots/me/decisions/stream``, in a thread of its
  own): each pending decision's seat view is read and its decision answered with
  ``legal_choice``, by its ``decision_id``, with one command id across retries (the server
  applies a command id once); a 409 needs nothing (the decision changed meanwhile).

At start-up it lists the account's active games (``GET /bots/me/games?status=active``): the
decisions stream sends what each still owes, so a bot restarted mid-game carries on where it
stopped. ``--join`` enters an open ladder (the scheduler then pairs it, rated), ``--challenge``
challenges another account ``--challenges`` times, one game after the other (``--rated``: on a
ladder both have joined). SIGINT or SIGTERM stops it: no new command is sent, the one under way
is answered, and it exits with status 0. Replace ``legal_choice`` and ``accept_challenge``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from rfg_client.client import ApiError, Client, Decide
from rfg_client.policy import accept_challenge, legal_choice

log = logging.getLogger("rfg_client.bot")

#: (a challenge resource) -> None to accept it, else the reason to decline it
Answer = Callable[[dict[str, Any]], str | None]
#: how long a challenge the bot sent may stay unanswered before it sends the next one
UNANSWERED = 150.0
#: a challenge refused (the other account not on the ladder yet...) is sent again this much later,
#: until it has been refused this many times in a row
REFUSED_PAUSE, REFUSALS = 10.0, 6


class _Sent:
    """A challenge the bot sent: answered (accepted or not), and its game over."""

    def __init__(self) -> None:
        self.answered = threading.Event()
        self.over = threading.Event()
        self.game_id: str | None = None


class Bot:
    """The account of ``api.bot_token``, playing with ``decide`` and answering challenges with
    ``answer``. ``run`` returns when ``stop`` is called (the command line calls it on SIGINT
    and SIGTERM)."""

    def __init__(
        self, api: Client, decide: Decide = legal_choice, answer: Answer = accept_challenge
    ) -> None:
        self.api = api
        self.decide = decide
        self.answer = answer
        self.stopping = threading.Event()
        self._answered: set[tuple[str, int, int]] = set()  # (game, seat, decision_id)
        self._sent: dict[str, _Sent] = {}
        self._lock = threading.Lock()
        self._answering = threading.Lock()  # held while a command is under way

    def run(
        self,
        *,
        join: str | None = None,
        opponent: str | None = None,
        challenges: int = 0,
        rated: str | None = None,
    ) -> None:
        me = self.api.me()
        log.info("%s (%s) at %s", me["name"], me["account_id"], self.api.base_url)
        if join is not None:
            self.join(join)
        active = self.api.my_games("active")  # a restarted bot resumes its games
        log.info("%d active games: %s", len(active), " ".join(g["game_id"] for g in active))
        threading.Thread(target=self._decisions, daemon=True).start()
        if opponent is not None and challenges > 0:
            args = (me["account_id"], opponent, challenges, rated)
            threading.Thread(target=self._challenge, args=args, daemon=True).start()
        for event in self.api.account_events():
            if self.stopping.is_set():
                return
            self.on_event(event)

    def stop(self, grace: float = 10.0) -> None:
        """No new command from now on; wait (at most ``grace`` seconds) for the one under way."""
        self.stopping.set()
        if self._answering.acquire(timeout=grace):
            self._answering.release()

    def join(self, ladder: str) -> None:
        """Enter an open ladder (an entrant already, as a restarted bot is: nothing changes)."""
        entrant = self.api.join_ladder(ladder)
        log.info("ladder %s: entrant %s", ladder, entrant.get("entrant"))

    # --- the account's events -------------------------------------------------------------
    def on_event(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "challenge":
            self.on_challenge(event)
        elif kind == "game-started":
            names = ", ".join(f"{p['name']} ({_rating(p['rating'])})" for p in event["players"])
            log.info("game %s started, seat %d: %s", event["game_id"], event["seat"], names)
        elif kind == "game-finished":
            result = event["result"]
            log.info(
                "game %s over: %s, winners %s",
                event["game_id"],
                result["reason"],
                result.get("winners"),
            )
            with self._lock:
                ours = [s for s in self._sent.values() if s.game_id == event["game_id"]]
            for sent in ours:
                sent.over.set()
        elif kind.startswith("challenge-"):  # accepted, declined, canceled
            log.info("challenge %s %s", event["challenge_id"], event["status"])
            with self._lock:
                mine = self._sent.get(event["challenge_id"])
            if mine is not None:
                mine.game_id = event.get("game_id")
                mine.answered.set()
                if mine.game_id is None:
                    mine.over.set()

    def on_challenge(self, challenge: dict[str, Any]) -> None:
        reason = self.answer(challenge)
        try:
            if reason is None:
                self.api.accept(challenge["challenge_id"])
            else:
                self.api.decline(challenge["challenge_id"], reason)
            log.info("challenge %s: %s", challenge["challenge_id"], reason or "accepted")
        except ApiError as exc:  # 404: no longer open (canceled, expired, answered before)
            log.info("challenge %s: %s", challenge["challenge_id"], exc)

    # --- decisions ----------------------------------------------------------------------
    def _decisions(self) -> None:
        """Answer every decision the account owes, in any of its games, until stopped."""
        for pending in self.api.decisions():
            if self.stopping.is_set():
                return
            try:
                self.answer_decision(pending)
            except (ApiError, OSError) as exc:  # an illegal command (422), the server away
                log.error("game %s, decision %s: %s", pending["game_id"], pending["kind"], exc)

    def answer_decision(self, pending: dict[str, Any]) -> None:
        """Read the seat view of a pending decision and answer it, unless answered already (a
        reconnect sends the decisions still pending again) or no longer owed."""
        game_id, seat, decision_id = pending["game_id"], pending["seat"], pending["decision_id"]
        if (game_id, seat, decision_id) in self._answered:
            return
        view = self.api.view(game_id, seat)["view"]
        decision = view.get("decision")
        if decision is None or decision["decision_id"] != decision_id:
            return  # played meanwhile (by the clock): the stream sends the one owed now
        with self._answering:
            if self.stopping.is_set():
                return
            try:
                self.api.submit(game_id, seat, self.decide(decision, view), decision_id=decision_id)
            except ApiError as exc:
                if exc.status != 409:  # 409: the decision changed; the stream sends the new one
                    raise
        if len(self._answered) > 10_000:
            self._answered.clear()
        self._answered.add((game_id, seat, decision_id))

    # --- challenges the bot sends ---------------------------------------------------------
    def _challenge(self, me: str, opponent: str, n: int, rated: str | None) -> None:
        """``n`` challenges to ``opponent``, each once the game of the one before is over."""
        refused = 0
        while n > 0 and not self.stopping.is_set():
            try:
                made = self.api.challenge_account(me, opponent, ladder=rated)
            except (ApiError, OSError) as exc:  # e.g. 422: not on the ladder (yet)
                refused += 1
                log.error("challenging %s: %s", opponent, exc)
                if refused >= REFUSALS:
                    return
                self.stopping.wait(REFUSED_PAUSE)
                continue
            n, refused = n - 1, 0
            sent = _Sent()
            with self._lock:
                self._sent[made["challenge_id"]] = sent
            log.info("challenged %s: %s", opponent, made["challenge_id"])
            if sent.answered.wait(UNANSWERED):
                sent.over.wait()


def _rating(rating: float | None) -> str:
    return "unrated" if rating is None else f"{rating:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rfg_client", description=__doc__.split("\n")[0])
    ap.add_argument("--url", help="the server (default $RFG_URL, else http://127.0.0.1:8000)")
    ap.add_argument(
        "--token",
        default=os.environ.get("RFG_BOT_TOKEN"),
        help="the bot token (default $RFG_BOT_TOKEN)",
    )
    ap.add_argument("--join", metavar="LADDER", help="join this open ladder")
    ap.add_argument("--challenge", metavar="ACCOUNT", help="challenge this bot account")
    ap.add_argument("--challenges", type=int, default=1, help="how many times (default 1)")
    ap.add_argument("--rated", metavar="LADDER", help="the challenges rated on this ladder")
    args = ap.parse_args(argv)
    if not args.token:
        ap.error("a bot token is needed: --token or $RFG_BOT_TOKEN")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    bot = Bot(Client(args.url, bot_token=args.token))

    def interrupt(signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, interrupt)
    try:
        bot.run(
            join=args.join, opponent=args.challenge, challenges=args.challenges, rated=args.rated
        )
    except KeyboardInterrupt as exc:
        log.info("stopping (%s)", exc or "SIGINT")
    except ApiError as exc:
        log.error("%s", exc)  # a 401: the token was revoked or rotated
        return 1
    finally:
        bot.stop()
    return 0
