"""Develop and Settle powers: cost discounts, returning builders to the cup, credits on completion."""
