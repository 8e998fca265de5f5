"""The Ambition expansion: its component file (``components``) and the rules it adds.

Ambition's printed components (the Leader and Entrepreneur die faces, the objective tiles, and the
factions, home worlds and game tiles) come from ONE file the host supplies; ``components`` loads
and validates it and ``engine.catalogue.install`` adds it to the catalogue. A game is an Ambition
game when its options say ``ambition: true``.
"""
