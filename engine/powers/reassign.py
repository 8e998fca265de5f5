"""Assign-step powers: the 18 Reassign developments (Dictate variants included)."""
