"""The REST API of the game server: a Flask app factory, one blueprint per resource
(``service.api``), marshmallow schemas (``service.schemas``), seat-token auth, one problem+json
error shape, and a small Python client (``service.client``). The contract is openapi.yaml."""

from service.app import create_app

__all__ = ["create_app"]
