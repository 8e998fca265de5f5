"""``python -m rfg_client``: the bot of ``rfg_client.bot`` (``--help``)."""

import sys

from rfg_client.bot import main

sys.exit(main())
