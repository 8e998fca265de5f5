"""Imports every power module so that its handlers register (see ``registry``)."""

from . import ambition_powers, build_powers, economy_powers, explore_powers, reassign  # noqa: F401
