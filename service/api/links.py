"""Hypermedia links in responses (GitHub style ``..._url`` made into a ``links`` object)."""

from __future__ import annotations


def game_links(game_id: str) -> dict[str, str]:
    base = f"/games/{game_id}"
    return {
        "self": base,
        "view": f"{base}/view",
        "events": f"{base}/events",
        "stream": f"{base}/events/stream",
        "log": f"{base}/log",
        "claim": f"{base}/seats/{{seat}}/claim",
    }


def seat_links(game_id: str, seat: int) -> dict[str, str]:
    base = f"/games/{game_id}/seats/{seat}"
    return {
        "game": f"/games/{game_id}",
        "view": f"{base}/view",
        "commands": f"{base}/commands",
        "events": f"{base}/events",
        "stream": f"{base}/events/stream",
        "log": f"{base}/log",
    }
