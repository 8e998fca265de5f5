"""The one Server-Sent-Events loop (``service.sse.serve``) every stream of the API runs: what it
sends around its source's frames (``retry:`` first, keep-alives in silence, a comment while the
store does not answer), when it reads again at once and when it ends."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from service import sse
from service.sse import serve


class Scripted:
    """A source whose every ``ready`` is the next step: (frames, more, done) or an error."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.full = self.finished = False
        self.waits = 0

    def ready(self) -> list[str]:
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        frames, self.full, self.finished = step
        return list(frames)

    def more(self) -> bool:
        return self.full

    def done(self) -> bool:
        return self.finished

    def wait(self, seconds: float) -> bool:
        self.waits += 1
        return True


def test_frames_follow_retry_a_full_read_is_read_again_at_once_and_done_ends() -> None:
    source = Scripted((["a\n\n"], True, False), (["b\n\n"], False, False), (["c\n\n"], False, True))
    out = list(serve(source, max_seconds=60, keepalive=60, retry_ms=1500))
    assert out == ["retry: 1500\n\n", "a\n\n", "b\n\n", "c\n\n"]
    assert source.waits == 1  # after "b" (a last page), not after "a" (a full one)


def test_silence_gets_a_keep_alive_and_the_stream_ends_after_max_seconds() -> None:
    class Quiet(Scripted):
        def wait(self, seconds: float) -> bool:
            self.waits += 1
            return False

    source = Quiet(([], False, False), ([], False, False), ([], False, True))
    out = list(serve(source, max_seconds=60, keepalive=0))
    assert out == ["retry: 2000\n\n", ": keep-alive\n\n", ": keep-alive\n\n"]
    assert list(serve(Quiet(([], False, False)), max_seconds=0, keepalive=60)) == [
        "retry: 2000\n\n"
    ]


def test_the_silence_before_a_keep_alive_is_drawn_per_stream_within_the_spread() -> None:
    """Streams that fall silent together send their keep-alives spread in time, each after at
    most ``keepalive`` seconds and at least ``1 - KEEPALIVE_SPREAD`` of it."""

    class Once(Scripted):
        asked: float = -1.0

        def wait(self, seconds: float) -> bool:
            self.asked = seconds
            return super().wait(seconds)

    waits = []
    for _ in range(200):
        source = Once(([], False, False), ([], False, True))
        assert list(serve(source, max_seconds=600, keepalive=20)) == ["retry: 2000\n\n"]
        waits.append(source.asked)
    low = 20 * (1 - sse.KEEPALIVE_SPREAD) - 0.05  # (the time between the draw and the wait)
    assert all(low <= w <= 20 for w in waits), (min(waits), max(waits))
    assert max(waits) - min(waits) > 0.5  # spread over most of the 1 s, not one instant


def test_a_store_outage_is_said_and_waited_out() -> None:
    source = Scripted(redis.exceptions.ConnectionError("down"), (["a\n\n"], False, True))
    out = list(serve(source, max_seconds=60, keepalive=60))
    assert out == [
        "retry: 2000\n\n",
        ": the event store is unreachable; waiting for it\n\n",
        "a\n\n",
    ]


def test_a_revoked_token_ends_the_stream() -> None:
    source = Scripted((["a\n\n"], False, False), (["b\n\n"], False, False))
    out = list(serve(source, max_seconds=60, keepalive=0, allowed=lambda: False))
    assert out == ["retry: 2000\n\n", ": the token of this stream was revoked\n\n"]


def test_a_stopping_process_ends_every_stream_with_a_last_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = Scripted((["a\n\n"], False, False), (["b\n\n"], False, False))
    gen = serve(source, max_seconds=60, keepalive=60)
    assert [next(gen), next(gen)] == ["retry: 2000\n\n", "a\n\n"]
    monkeypatch.setattr(sse._Stop, "requested", True)  # as ``stop_streams`` sets it
    assert list(gen) == [sse.STOPPING]
    assert list(serve(Scripted(), max_seconds=60, keepalive=60)) == [
        "retry: 2000\n\n",
        sse.STOPPING,
    ]
