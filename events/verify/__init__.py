"""Proving a game's log: ``replay`` checks an exported log (consistent, complete, authentic) by
re-running it on the engine, and ``signing`` holds the server's key and signs exports. Builds on
``events.envelope``; used by the game service (``events.games``) and the API."""
