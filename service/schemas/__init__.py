"""Marshmallow schemas of the REST API: ``requests`` (bodies and query strings, unknown fields
refused), ``commands`` (one schema per decision kind) and ``responses``."""
