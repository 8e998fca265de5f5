"""gunicorn settings of ``rfg run`` / ``make run`` (``gunicorn -c python:service.gunicorn_conf``).

* logs: JSON lines on stderr with the request context (``service.logs``); ``RFG_LOG_FORMAT=text``
  for plain lines, ``RFG_LOG_LEVEL`` for the level; gunicorn's access log is off (the app writes
  its own ``service.access`` line per request, with the request id);
* metrics: with ``PROMETHEUS_MULTIPROC_DIR`` set, a worker process that exits is marked dead so
  that the live-process gauges (open SSE streams) drop its values (``service.metrics``).
"""

from __future__ import annotations

import os
from typing import Any

from events import environment
from service import logs as _logs  # (gunicorn reads every setting-named global here)

logconfig_dict = _logs.logconfig(
    environment.value("RFG_LOG_FORMAT"), environment.value("RFG_LOG_LEVEL")
)
accesslog = None


def child_exit(server: Any, worker: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
