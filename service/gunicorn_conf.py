"""gunicorn settings of ``rfg run`` / ``make run`` (``gunicorn -c python:service.gunicorn_conf``).

* logs: JSON lines on stderr with the request context (``service.logs``); ``RFG_LOG_FORMAT=text``
  for plain lines, ``RFG_LOG_LEVEL`` for the level; gunicorn's access log is off (the app writes
  its own ``service.access`` line per request, with the request id): ``AppAccessLogger``, since
  gunicorn builds its access record for every request once it is given a logging
  configuration, even with ``accesslog`` unset and nothing listening at that level;
* open files: the soft limit is raised to the hard one at start (every connection is a file);
* garbage collection: once a worker has built the app, what it holds is frozen out of the
  collector's generations (``gc.freeze``): full collections, which pause a worker and every
  request it serves, no longer walk the app's modules and tables. And the youngest generation
  is collected after ``_GC_YOUNG`` allocations instead of CPython's 700, so that a request's
  objects die young instead of being promoted to the oldest generation while it runs: CPython
  collects that one in full once its promoted objects reach a quarter of what it holds, and
  with thousands of event streams open (some 70 tracked objects each) a full collection walks
  hundreds of thousands of objects, a pause of a tenth of a second or more;
* stopping: a worker told to stop (SIGTERM: ``worker.alive`` turns false, and the worker stops
  taking connections and waits up to ``graceful_timeout`` for the open ones; SIGINT/SIGQUIT: the
  ``worker_int`` hook, then it exits) ends every open event stream at once
  (``service.sse.stop_streams``: a last comment, then the end its clients resume from with
  ``Last-Event-ID``), so that streams never hold a stop for the whole graceful timeout;
  ``post_worker_init`` starts the watcher of ``worker.alive``, which looks every
  tenth of a second (``_STOP_POLL``);
* metrics: with ``PROMETHEUS_MULTIPROC_DIR`` set, a worker process that exits is marked dead so
  that the live-process gauges (open SSE streams) drop its values (``service.metrics``).
"""

from __future__ import annotations

import gc
import os
import resource
import sys
import threading
import time
from typing import Any

from gunicorn import glogging

# gunicorn reads every setting-named global here (``config`` is one): private names only
from events import config as _config
from service import logs as _logs

logconfig_dict = _logs.logconfig(_config.value("RFG_LOG_FORMAT"), _config.value("RFG_LOG_LEVEL"))
accesslog = None
logger_class = "service.gunicorn_conf.AppAccessLogger"
_STOP_POLL = 0.1  # seconds between looks at ``worker.alive``
#: the log line of a connection dropped because its client read nothing for ``SSE_SEND_SECONDS``
DROPPED = (
    "dropped a connection whose client read nothing for SSE_SEND_SECONDS (RFG_SSE_SEND_SECONDS)"
)
_GC_YOUNG = 10_000  # allocations between collections of the youngest generation


class AppAccessLogger(glogging.Logger):
    """gunicorn's logger, without its access log (``logger_class``): the app's ``service.access``
    line is the one written. gunicorn's own ``access`` formats a dozen fields of every request
    (its "atoms") before its logger drops the record: about 40 us a request, a tenth of a hello
    world's (bench/api.py).

    A write that timed out (an event stream's client stopped reading for ``SSE_SEND_SECONDS``,
    ``service.sse``; gunicorn then closes the connection) is one info line, not an error with
    its traceback: the client is expected to come back, resuming with ``Last-Event-ID``."""

    def access(self, _resp: Any, _req: Any, _environ: Any, _request_time: Any) -> None:
        return None

    def exception(self, msg: str, *args: Any, **kwargs: Any) -> None:
        if isinstance(sys.exc_info()[1], TimeoutError):
            self.info(DROPPED)
            return
        super().exception(msg, *args, **kwargs)


def child_exit(server: Any, worker: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_starting(server: Any) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    wanted = server.cfg.worker_connections + 256  # + Redis connections, logs, the listener
    if server.cfg.worker_class_str == "gevent" and hard != resource.RLIM_INFINITY and hard < wanted:
        server.log.warning(
            "open files are limited to %s per process, fewer than the %s connections a worker "
            "may hold: raise the limit (ulimit -n) or lower --connections",
            hard,
            server.cfg.worker_connections,
        )


def post_worker_init(worker: Any) -> None:
    gc.freeze()
    gc.set_threshold(_GC_YOUNG, *gc.get_threshold()[1:])
    # a thread is a greenlet under the gevent worker (gunicorn patched ``threading``)
    threading.Thread(target=_end_streams_on_stop, args=(worker,), daemon=True).start()


def worker_int(worker: Any) -> None:
    _stop_streams()


def _end_streams_on_stop(worker: Any) -> None:
    while worker.alive:
        time.sleep(_STOP_POLL)
    _stop_streams()


def _stop_streams() -> None:
    from service.sse import stop_streams  # the app's module: loaded in the worker only

    stop_streams()
