"""``python -m rfgcli.serve [gunicorn options] APP``: gunicorn, with gevent's patches of the
standard library applied before anything else is imported (gevent's advice: the gevent worker
would patch them only after gunicorn and the app's settings had imported ssl, socket and
threading). ``rfg run`` starts the API so (``rfgcli.run.api_command``)."""

from gevent import monkey

monkey.patch_all()

import sys  # noqa: E402

from gunicorn.app.wsgiapp import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run())
