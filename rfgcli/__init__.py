"""The ``rfg`` command line: simulate games, replay logs, run conformance scenarios."""
