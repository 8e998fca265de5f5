"""Produce and Ship powers: goods capacity, phase-end credits and VP, trade and consume bonuses."""
