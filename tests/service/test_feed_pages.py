"""The feed pages streams of one process share (``service.sse.FeedPages``): a page is read,
redacted and framed once for every stream at the same place with the same eyes, each seat's
apart from the public one, and read again once the game moved."""

from __future__ import annotations

from typing import Any

from service.sse import PAGE, FeedPages, GameFeed


class _Games:
    """The feed of one game, counting its reads: item ``seq`` n as the viewer sees it."""

    def __init__(self, last: int) -> None:
        self.last, self.reads = last, 0

    def feed(self, game_id: str, viewer: Any, *, after: int, limit: int) -> list[dict[str, Any]]:
        self.reads += 1
        end = min(self.last, after + limit)
        return [
            {"seq": n, "type": "DiceRolled", "event": {"seen_by": str(viewer)}}
            for n in range(after + 1, end + 1)
        ]


class _Fanout:
    def __init__(self) -> None:
        self.gen = 1

    def generation(self, key: str) -> int:
        return self.gen


class _Store:
    def keys(self, game_id: str) -> tuple[str, ...]:
        return (f"game:{game_id}",)


def _feed(pages: FeedPages, viewer: Any, after: int = 0) -> GameFeed:
    store: Any = _Store()
    return GameFeed(pages, store, "g1", viewer, after, finished=False, version=after)


def test_spectators_at_one_place_share_one_read_and_one_text() -> None:
    games, fanout = _Games(3), _Fanout()
    pages = FeedPages(games, fanout)  # type: ignore[arg-type]
    sent = [_feed(pages, "public").ready() for _ in range(50)]
    assert games.reads == 1
    assert all(s == sent[0] for s in sent) and len(sent[0]) == 1  # the page in one write
    assert all(s[0] is sent[0][0] for s in sent)  # the same text, framed once
    text = sent[0][0]
    assert [line for line in text.splitlines() if line.startswith("id: ")] == [
        "id: 1",
        "id: 2",
        "id: 3",
    ]


def test_each_seat_has_pages_of_its_own_and_shares_them_among_its_streams() -> None:
    games, fanout = _Games(2), _Fanout()
    pages = FeedPages(games, fanout)  # type: ignore[arg-type]
    public = _feed(pages, "public").ready()[0]
    seat0 = [_feed(pages, 0).ready()[0] for _ in range(4)]
    seat1 = _feed(pages, 1).ready()[0]
    assert games.reads == 3  # public, seat 0 once for its four streams, seat 1
    assert all(t is seat0[0] for t in seat0)
    assert '"seen_by":"0"' in seat0[0] and '"seen_by":"0"' not in seat1 + public
    assert '"seen_by":"1"' in seat1 and '"seen_by":"public"' in public


def test_a_page_is_read_again_once_the_game_moved() -> None:
    games, fanout = _Games(2), _Fanout()
    pages = FeedPages(games, fanout)  # type: ignore[arg-type]
    first = _feed(pages, "public")
    assert "id: 2" in first.ready()[0]
    assert first.ready() == []  # caught up: an empty page, kept while the game stays
    reads = games.reads
    assert first.ready() == [] and games.reads == reads
    games.last, fanout.gen = 4, 2
    again = first.ready()[0]
    assert "id: 3" in again and "id: 4" in again and "id: 2" not in again


def test_a_full_page_is_followed_at_once() -> None:
    games, fanout = _Games(PAGE + 5), _Fanout()
    feed = _feed(FeedPages(games, fanout), "public")  # type: ignore[arg-type]
    assert feed.ready() and feed.more()
    rest = feed.ready()[0]
    assert f"id: {PAGE + 1}\n" in rest and f"id: {PAGE + 5}\n" in rest and not feed.more()


def test_a_turn_signal_waits_for_the_events_a_kept_page_is_behind() -> None:
    # a seat stream caught up at seq 3 keeps its (empty) page; the game then moves to seq 5 and
    # the seat owes a decision, but the process's reader has not seen the append yet: the kept
    # page is still served. The decision read from the newer view must wait for events 4-5.
    games, fanout = _Games(3), _Fanout()
    pages = FeedPages(games, fanout)  # type: ignore[arg-type]
    view: dict[str, int] = {"version": 3}  # no decision owed

    def turn() -> tuple[int, int, bytes] | None:
        if "decision" not in view:
            return None
        return view["decision"], view["version"], b'{"decision_id":7}'

    first = GameFeed(pages, _Store(), "g1", 0, 0, finished=False, version=0, turn=turn)  # type: ignore[arg-type]
    assert first.ready() and first.ready() == []  # caught up at 3; the empty page after 3 kept
    games.last = 5  # appended, and the seat owes decision 7; the reader's generation lags
    view.update(version=5, decision=7)
    late = GameFeed(pages, _Store(), "g1", 0, 3, finished=False, version=3, turn=turn)  # type: ignore[arg-type]
    assert late.ready() == []  # no signal ahead of events 4-5
    fanout.gen += 1  # the reader sees the append: the stream wakes
    sent = "".join(late.ready())
    assert sent.index("id: 5") < sent.index("event: decision")
