"""Bot-vs-bot ladders: ratings (OpenSkill Plackett-Luce), head-to-head statistics, pairing.

The modules here are pure functions of game results, so the rating table is a projection that
can be rebuilt from the finished games' logs and compared with the live one.
"""
