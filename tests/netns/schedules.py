"""Fault schedules for the checker, and one round: games played through a schedule, then checked.

Each schedule takes the hosts (``Net``), the deployment and a seeded ``random.Random``, makes its
faults while the players play, and heals them before it returns. ``run(...)`` plays fresh games
through one schedule: players start, the faults run, the cluster is waited back to health, the
players finish their games, and ``checker.check`` judges every answer against the logs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from tests.netns import checker
from tests.netns.deployment import APIS, NODES, WORKERS, Deployment, _wait
from tests.netns.harness import Net, netem_available

Schedule = Callable[[Net, Deployment, random.Random], str]


def _masters(net: Net, dep: Deployment) -> list[str]:
    return net.call("ctl", dep.masters)


def _replica_of(net: Net, dep: Deployment, master: str) -> str:
    topo = net.call("ctl", dep.topology)
    return next(r for r, m in topo.items() if m == master)


def _busiest_masters(net: Net, dep: Deployment, rng: random.Random) -> list[str]:
    """The masters, those serving the most games now played (``dep.games_on``) first (ties in
    random order): a cut of the first is felt by the clients whichever slots the games hashed to
    (with 3 games and 3 masters, a master picked at random serves none of them 30 % of the time)."""
    ms = _masters(net, dep)
    rng.shuffle(ms)
    games = [g for on in dep.games_on.values() for g in on]
    served = [net.call("ctl", lambda g=g: dep.master_of_game(g)) for g in games]
    return sorted(ms, key=lambda m: -served.count(m))


def isolate_master(net: Net, dep: Deployment, rng: random.Random) -> str:
    m = _busiest_masters(net, dep, rng)[0]
    net.isolate(m)
    time.sleep(8)
    net.heal()
    return f"master {m} cut from every host for 8 s"


def master_with_minority(net: Net, dep: Deployment, rng: random.Random) -> str:
    """The master serving most of the games played from ``ca`` goes to the minority side with
    ``ca`` and ``api1``: those clients keep writing to it, the majority promotes its replica."""
    ms = _masters(net, dep)
    served = [
        net.call("ctl", lambda g=g: dep.master_of_game(g)) for g in dep.games_on.get("ca", [])
    ]
    m = max(ms, key=lambda x: (served.count(x), rng.random()))
    side = [m, "api1", "ca"]
    net.partition(side, [h for h in net.hosts if h not in side])
    time.sleep(8)
    net.heal()
    return f"{side} (a master, an API host, a client host) cut from the rest for 8 s"


def master_with_api_hosts(net: Net, dep: Deployment, rng: random.Random) -> str:
    """As ``master_with_minority``, with both API hosts on the minority side: a client's retry
    of a command that timed out waiting for the replica goes to the other API host, whose
    connections to the master did not write it."""
    ms = _masters(net, dep)
    served = [
        net.call("ctl", lambda g=g: dep.master_of_game(g)) for g in dep.games_on.get("ca", [])
    ]
    m = max(ms, key=lambda x: (served.count(x), rng.random()))
    side = [m, *APIS, "ca"]
    net.partition(side, [h for h in net.hosts if h not in side])
    time.sleep(8)
    net.heal()
    return f"{side} (a master, both API hosts, a client host) cut from the rest for 8 s"


def api_cut_from_store(net: Net, dep: Deployment, rng: random.Random) -> str:
    api = rng.choice(APIS)
    net.partition([api], NODES)
    time.sleep(6)
    net.heal()
    return f"{api} cut from every cluster node for 6 s"


def rq_cut_from_workers(net: Net, dep: Deployment, rng: random.Random) -> str:
    net.partition(["rq"], WORKERS)
    time.sleep(6)
    net.heal()
    return "the RQ Redis cut from both worker hosts for 6 s"


def flapping(net: Net, dep: Deployment, rng: random.Random) -> str:
    for _ in range(6):
        hosts = [h for h in net.hosts if h != "ctl"]
        rng.shuffle(hosts)
        half = hosts[: len(hosts) // 2]
        net.partition(half, [h for h in net.hosts if h not in half and h != "ctl"])
        time.sleep(rng.uniform(0.5, 2.5))
        net.heal()
        time.sleep(rng.uniform(0.3, 1.5))
    return "6 random halves cut for 0.5-2.5 s each, 0.3-1.5 s apart"


#: the delay and loss of ``lossy_api_links`` on each direction: 2 x 100 ms = a 200 ms round trip,
#: 1 - (1 - 0.025)^2 = 4.9 % of the round trips lose a packet
ONE_WAY_DELAY_MS = 100
ONE_WAY_LOSS = 0.025


def lossy_api_links(net: Net, dep: Deployment, rng: random.Random) -> str:
    """200 ms delay and 5 % loss between the API hosts and the cluster for 10 s: each direction
    100 ms and 2.5 %. With ``tc netem`` where the kernel has it (on the whole ``eth0`` of the
    API hosts and the nodes); otherwise in userspace (``Net.impair``: the API hosts' packets to
    the nodes and the nodes' packets to the API hosts, through a TUN device, each one delayed or
    dropped), so the same per-packet delay and random loss either way."""
    if netem_available(net, "api1"):
        from tests.netns.harness import sh

        try:
            for h in (*APIS, *NODES):
                sh(
                    "tc",
                    "-n",
                    net.ns(h),
                    "qdisc",
                    "add",
                    "dev",
                    "eth0",
                    "root",
                    "netem",
                    "delay",
                    f"{ONE_WAY_DELAY_MS}ms",
                    "loss",
                    f"{ONE_WAY_LOSS * 100}%",
                )
            time.sleep(10)
        finally:
            for h in [*APIS, *NODES]:
                sh("tc", "-n", net.ns(h), "qdisc", "del", "dev", "eth0", "root", check=False)
        return (
            f"netem {ONE_WAY_DELAY_MS} ms + {ONE_WAY_LOSS:.1%} loss on API and node egress "
            "(200 ms round trip, ~5 % loss per round trip) for 10 s"
        )
    seed = rng.randrange(1 << 30)
    counts: dict[str, dict[str, Any]] = {}
    try:
        for h in APIS:
            net.impair(h, NODES, ONE_WAY_DELAY_MS, ONE_WAY_LOSS, seed)
        for h in NODES:
            net.impair(h, APIS, ONE_WAY_DELAY_MS, ONE_WAY_LOSS, seed)
        time.sleep(10)
    finally:
        counts = net.unimpair()
    seen = sum(sum(c.get("seen", {}).values()) for c in counts.values())
    dropped = sum(sum(c.get("dropped", {}).values()) for c in counts.values())
    return (
        f"userspace impairment (no netem in this kernel): API<->cluster packets delayed "
        f"{ONE_WAY_DELAY_MS} ms each way and dropped at {ONE_WAY_LOSS:.1%} each way for 10 s "
        f"(seed {seed}): {dropped} of {seen} packets dropped"
    )


def loss_bursts(net: Net, dep: Deployment, rng: random.Random) -> str:
    """Bursts of total loss rather than random loss: the API hosts' links to the cluster cut
    for 0.2 s at random, about a fifth of 10 s, with their bandwidth capped at 2 Mbit/s (htb)."""
    try:
        for h in APIS:
            net.rate(h, 2000)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            net.partition(APIS, NODES)
            time.sleep(0.2)
            net.heal()
            time.sleep(rng.uniform(0.4, 1.2))
    finally:
        net.heal()
        for h in APIS:
            net.rate(h, None)
    return "API<->cluster cut 0.2 s at random ~1/5 of 10 s, 2 Mbit/s cap"


def replica_isolated(net: Net, dep: Deployment, rng: random.Random) -> str:
    m = rng.choice(_masters(net, dep))
    r = _replica_of(net, dep, m)
    net.isolate(r)
    time.sleep(6)
    net.heal()
    return f"replica {r} (of {m}) cut from every host for 6 s"


def master_killed(net: Net, dep: Deployment, rng: random.Random) -> str:
    m = rng.choice(_masters(net, dep))
    dep.kill_redis(m)
    time.sleep(6)
    dep.start_redis(m, cluster=True)
    return f"master {m} SIGKILLed, restarted on its data 6 s later"


def majority_split(net: Net, dep: Deployment, rng: random.Random) -> str:
    ms = _masters(net, dep)
    rng.shuffle(ms)
    side = [ms[0], _replica_of(net, dep, ms[1]), "api1", "ca", "w1"]
    net.partition(side, [h for h in net.hosts if h not in side])
    time.sleep(8)
    net.heal()
    return f"{side} (a master, another master's replica, API, client, worker) cut for 8 s"


def two_masters_in_turn(net: Net, dep: Deployment, rng: random.Random) -> str:
    ms = _busiest_masters(net, dep, rng)  # 2 of 3 games at least on the two cut in turn
    net.isolate(ms[0])
    time.sleep(6)
    net.heal()
    net.call("ctl", lambda: _wait(dep.healthy, 60, "a healthy cluster"), timeout=90)
    net.isolate(ms[1])
    time.sleep(6)
    net.heal()
    return f"master {ms[0]} isolated 6 s, then (healed) master {ms[1]} 6 s"


SCHEDULES: dict[str, Schedule] = {
    "isolate-master": isolate_master,
    "master-with-minority-of-clients": master_with_minority,
    "master-with-both-api-hosts": master_with_api_hosts,
    "api-host-cut-from-store": api_cut_from_store,
    "rq-cut-from-workers": rq_cut_from_workers,
    "flapping": flapping,
    "lossy-api-links": lossy_api_links,
    "loss-bursts": loss_bursts,
    "replica-isolated": replica_isolated,
    "master-killed": master_killed,
    "majority-split": majority_split,
    "two-masters-in-turn": two_masters_in_turn,
}


def run(
    net: Net,
    dep: Deployment,
    name: str,
    *,
    games: int = 8,
    seed: int = 0,
    warmup: float = 2.0,
    finish_timeout: float = 180,
) -> dict[str, Any]:
    """Play ``games`` fresh games through schedule ``name``; the checker's verdict and report."""
    rng = random.Random(f"{name}-{seed}")
    created = net.call("ctl", lambda: checker.create_games(dep, games))
    players = [
        checker.Player(dep, ("ca", "cb")[i % 2], gid, seats, list(APIS), seed * 1000 + i)
        for i, (gid, seats) in enumerate(created)
    ]
    dep.games_on = {h: [p.gid for p in players if p.host == h] for h in ("ca", "cb")}
    started = time.monotonic()
    for p in players:
        p.thread.start()
    time.sleep(warmup)
    before = sum(len(p.acks) for p in players)
    try:
        what = SCHEDULES[name](net, dep, rng)
    except BaseException:
        for p in players:  # the players stop too when a schedule fails
            p.stop.set()
        raise
    finally:  # whatever the schedule left: its impairments, its cuts
        net.unimpair()
        net.heal()
    during = sum(len(p.acks) for p in players) - before
    healed = time.monotonic()
    net.call("ctl", lambda: _wait(dep.healthy, 90, "a healthy cluster"), timeout=120)
    recovered_s = time.monotonic() - healed
    deadline = time.monotonic() + finish_timeout
    for p in players:
        p.thread.join(max(0.1, deadline - time.monotonic()))
    for p in players:
        p.stop.set()
    for p in players:
        p.thread.join(15)
    verdict = net.call("ctl", lambda: checker.check(dep, players), timeout=300)
    report = {
        "schedule": name,
        "faults": what,
        "acked_during_faults": during,
        "cluster_healthy_after_s": round(recovered_s, 1),
        "seconds": round(time.monotonic() - started, 1),
        "crashed_processes": dep.crashed(),
        "service_error_lines_so_far": dep.error_lines(),
        **verdict.summary(),
    }
    return {"verdict": verdict, "report": report}
