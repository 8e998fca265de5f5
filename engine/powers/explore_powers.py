"""Explore powers: stock bonuses, phantom explorers, Advanced Logistics, Alien Research Team, ..."""
