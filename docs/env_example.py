"""A 20-line run of the Gym-style environment (bots/env.py): a random agent against the heuristic.

Run: .venv/bin/python docs/env_example.py   (trains nothing; plays 3 games and prints the rewards)
"""

from bots.env import GalaxyEnv
from engine.rng import Rng

env = GalaxyEnv(players=2, seat=0, opponents=["heuristic"])
agent_rng = Rng.from_seed("agent")
for episode in range(3):
    obs, info = env.reset(seed=episode)
    steps, done, reward = 0, False, 0.0
    while not done:
        command = agent_rng.choice(info["actions"])  # pick one of the offered legal commands
        obs, reward, terminated, truncated, info = env.step(command)
        steps += 1
        done = terminated or truncated
    print(f"episode {episode}: {steps} decisions, round {obs['round']}, reward {reward}")
