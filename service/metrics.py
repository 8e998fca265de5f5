"""Prometheus metrics at ``GET /metrics`` (prometheus-client, text exposition format).

Two kinds of metric, because gunicorn serves the API from several worker processes and the bots
are played by other processes still (``rfg worker``):

Every label takes values from a fixed set, so no request can add a series: an HTTP method other
than those of ``METHODS`` is ``other``, a path no route matches is the one route ``unmatched``
(a route is the URL rule, ``/games/<gid:game_id>``, never the path), a status code outside
``http.HTTPStatus`` is ``other``.

* **measured in the API processes** - ``rfg_http_requests_total``, ``rfg_commands_total``,
  ``rfg_store_append_seconds``, ``rfg_sse_clients``. Under gunicorn they use prometheus-client's
  *multiprocess mode*: when ``PROMETHEUS_MULTIPROC_DIR`` is set (``rfg run`` / ``make run`` set it
  to ``run/metrics``, emptied at start), every process writes its values to files there and
  ``/metrics``, whichever process answers, adds them up (the SSE gauge counts live processes
  only: ``livesum``; gunicorn's ``child_exit`` hook in ``service.gunicorn_conf`` marks dead
  ones). Without it (one process: ``flask run``, tests) they live in this process.
* **read from Redis when scraped** - ``rfg_queue_jobs`` (RQ queue depth: queued, scheduled,
  started, failed), ``rfg_games`` (games by status, from the lobby; counted at most every
  ``GAMES_CACHE_SECONDS`` per process, at most ``GAMES_SCAN_LIMIT`` games) and
  ``rfg_job_latency_seconds`` (enqueue-to-applied time of bot and timeout jobs, a histogram the
  workers keep in Redis: ``events.store.job_latency``). These are the same whichever process answers.
"""

from __future__ import annotations

import os
import time
from collections import Counter as Tally
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from flask import Flask, Request, Response, current_app, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from events import config
from events.games.service import GameService
from events.store import RedisStore
from events.store.lobby import Lobby

GAMES_CACHE_SECONDS = 30.0
#: the ``method`` label's values besides ``other`` (any method a client invents)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: the ``status`` label's values besides ``other`` (the registered HTTP status codes)
STATUSES = frozenset(s.value for s in HTTPStatus)
GAMES_SCAN_LIMIT = 200_000
_CHUNK = 1000

REQUESTS = Counter(
    "rfg_http_requests_total",
    "HTTP requests answered, by method, route and status",
    ["method", "route", "status"],
)
COMMANDS = Counter(
    "rfg_commands_total",
    "Commands seats submitted through the API, by result: applied, duplicate (a retry), "
    "conflict (409: stale version), rejected (422), refused (other 4xx), error (5xx)",
    ["result"],
)
APPEND_SECONDS = Histogram(
    "rfg_store_append_seconds",
    "Time of one append to the event store (a command's events or a new game), in seconds",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
SSE_CLIENTS = Gauge(
    "rfg_sse_clients", "Server-sent event streams open now", multiprocess_mode="livesum"
)


def multiprocess_mode() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def timed_store(store: RedisStore) -> RedisStore:
    """Time every append and game creation of ``store`` (``rfg_store_append_seconds``)."""

    def timed(write: Any) -> Any:
        def timed_write(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return write(*args, **kwargs)
            finally:
                APPEND_SECONDS.observe(time.perf_counter() - t0)

        return timed_write

    store.append = timed(store.append)  # type: ignore[method-assign]
    store.create_game = timed(store.create_game)  # type: ignore[method-assign]
    return store


class StoreCollector(Collector):
    """The gauges and the histogram read from Redis at scrape time."""

    def __init__(self, client: Any, store: RedisStore, queue: str, queue_client: Any) -> None:
        self.client = client
        self.store = store
        self.queue = queue
        self.queue_client = queue_client  # RQ's own Redis (RFG_QUEUE_URL), or None: not measured
        self._games: tuple[float, dict[str, int]] = (0.0, {})

    def collect(self) -> Iterator[Any]:
        from rq import Queue

        from events.store.job_latency import KINDS, read_job_latency

        depth = GaugeMetricFamily(
            "rfg_queue_jobs",
            "RQ jobs of the bot/timeout queue, by state",
            labels=["queue", "state"],
        )
        if self.queue_client is not None:
            q = Queue(self.queue, connection=self.queue_client)
            depth.add_metric([self.queue, "queued"], q.count)
            depth.add_metric([self.queue, "scheduled"], q.scheduled_job_registry.count)
            depth.add_metric([self.queue, "started"], q.started_job_registry.count)
            depth.add_metric([self.queue, "failed"], q.failed_job_registry.count)
        yield depth
        games = GaugeMetricFamily("rfg_games", "Games in the store, by status", labels=["status"])
        for status, n in sorted(self.games_by_status().items()):
            games.add_metric([status], n)
        yield games
        lat = HistogramMetricFamily(
            "rfg_job_latency_seconds",
            "Bot and timeout jobs: from enqueued to their command applied, in seconds",
            labels=["kind"],
        )
        for kind in KINDS:
            buckets, total = read_job_latency(self.client, self.store.prefix, kind)
            lat.add_metric([kind], buckets, total)
        yield lat

    def games_by_status(self) -> dict[str, int]:
        at, counts = self._games
        if time.monotonic() - at < GAMES_CACHE_SECONDS and counts:
            return counts
        tally: Tally[str] = Tally()
        lobby = Lobby(self.store)
        ids = lobby.newest(GAMES_SCAN_LIMIT)
        for i in range(0, len(ids), _CHUNK):
            for st in lobby.statuses(ids[i : i + _CHUNK]):
                if st is not None:
                    tally[st] += 1
        self._games = (time.monotonic(), dict(tally))
        return dict(tally)


def _command_result(status: int, replayed: bool) -> str:
    if status == 201:
        return "duplicate" if replayed else "applied"
    if status == 409:
        return "conflict"
    if status == 422:
        return "rejected"
    return "error" if status >= 500 else "refused"


#: the counters' children by their labels (prometheus-client keeps the same child per label
#: values; looking it up here spares ``labels()``'s validation and lock on every request)
_REQUEST_CHILDREN: dict[tuple[str, str, int], Any] = {}
_COMMAND_CHILDREN: dict[str, Any] = {}


def _requests_child(method: str, route: str, status: int) -> Any:
    """Every label bounded by the caller: ``method`` one of ``METHODS`` or ``other``, ``route``
    one of the app's URL rules or ``unmatched``, ``status`` one of ``STATUSES`` or 0 (``other``)."""
    key = (method, route, status)
    child = _REQUEST_CHILDREN.get(key)
    if child is None:
        child = _REQUEST_CHILDREN[key] = REQUESTS.labels(method, route, str(status or "other"))
    return child


def _commands_child(result: str) -> Any:
    child = _COMMAND_CHILDREN.get(result)
    if child is None:
        child = _COMMAND_CHILDREN[result] = COMMANDS.labels(result)
    return child


def _after(resp: Response) -> Response:
    # one context lookup for the attributes below (each read through the proxy looks it up)
    req: Request = request._get_current_object()  # type: ignore[attr-defined]
    url_rule = req.url_rule
    status = resp.status_code
    _requests_child(
        req.method if req.method in METHODS else "other",
        url_rule.rule if url_rule is not None else "unmatched",
        status if status in STATUSES else 0,
    ).inc()
    if url_rule is not None and url_rule.endpoint == "commands.submit":
        _commands_child(_command_result(status, "Idempotent-Replayed" in resp.headers)).inc()
    if status == 200 and resp.mimetype == "text/event-stream":
        SSE_CLIENTS.inc()
        resp.call_on_close(SSE_CLIENTS.dec)
    return resp


def metrics() -> Response:
    if multiprocess_mode():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        text = generate_latest(registry)
    else:
        text = generate_latest(REGISTRY)
    text += generate_latest(current_app.extensions["rfg.metrics"])
    return Response(text, content_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


def init_app(app: Flask, client: Any, games: GameService, queue_client: Any = None) -> None:
    """Time the store's appends, count requests, commands and streams, serve ``/metrics``."""
    timed_store(games.store)  # type: ignore[arg-type]
    store = games.store
    queue = config.value("RFG_QUEUE") or store.prefix  # type: ignore[attr-defined]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(client, store, queue, queue_client))  # type: ignore[arg-type]
    app.extensions["rfg.metrics"] = registry
    app.after_request(_after)
    app.add_url_rule("/metrics", "metrics", metrics, methods=["GET"])
