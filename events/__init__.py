"""The event layer: what a game's stored events are, where they are kept, and the game service
that turns commands into them. It builds on the rules engine (``engine``) and sits below the web
service (``service``), the workers (``workers``) and the ladders (``ladder``), which all use it.

Where things are (each layer imports only the ones below it; ``pyproject.toml``'s import-linter
contracts check that):

* ``events.games`` - the game service (``GameService``: create a game, run a command, read
  views, feeds and exports), the projections it stores (``projections``), the seat clocks of time
  control (``time_control``) and the seeds a duplicate set holds back (``seeds``);
* ``events.verify`` - checking an exported log (``replay``) and signing exports (``signing``);
* ``events.store`` - event storage: the ``EventStore`` port (``port``), its Redis Streams adapter
  (``redis_adapter``, also on a Redis Cluster), ``connect`` (a store URL to a redis-py client),
  the embedded server, client timeouts, compaction, outage detection, and the job-latency
  histogram the workers and the API share;
* ``events.envelope`` - the stored form of one event: envelope, canonical JSON, hash chain;
  ``events.errors`` - the errors of this layer;
* ``events.config`` - the configuration: every ``RFG_*`` environment variable, read in one place.
"""
