#!/usr/bin/env python3
"""CPU per publish on each node of three, with one pair of partitions and with three
(docs/scale-out.md 2d, section 12).

Starts a 3-server NATS cluster and three Bangbang nodes running every client's session
(`--cluster-sessions node`), first with `--partitions 1` (one node owns everything), then with
`--partitions 3` (each node owns the pair the partition map places on it, one each), and publishes through all three nodes at once with the load driver's `durable` scenario,
on campuses of every pair in turn. Prints, per configuration, the publishes acknowledged and the
user+system CPU each process spent per publish, net of its idle rate: with one pair its owner
commits every publish; with three each node commits about a third.

    BANGBANG_BINARY=.build-rel/release/bangbang LOADTEST=.build-rel/release/loadtest \\
        .build/pyenv/bin/python scripts/cluster-pairs-cpu.py [seconds] [publishers per node]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))

from nats_cluster import NatsCluster, free_ports  # noqa: E402
from test_cluster_failover import Node, wait_until  # noqa: E402
from test_cluster_partitions import campus_in, preferred, serves  # noqa: E402

import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location("cluster_cpu", os.path.join(os.path.dirname(__file__), "cluster-cpu.py"))
cluster_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster_cpu)

PAIRS = 3


def run(directory, pairs, seconds, publishers):
    nats = NatsCluster.start()
    time.sleep(2)   # JetStream answers before every server is a placement peer of R3 streams
    nodes = []
    try:
        for index, port in enumerate(free_ports(3)):
            node = Node(f"bb{index + 1}", port, directory, nats.urls, lease_ms=6000,
                        extra=(*cluster_cpu.LOAD_OPTIONS, "--cluster-sessions", "node", "--partitions", str(pairs)))
            nodes.append(node)
            wait_until(node.is_ready, 30, f"{node.name} to serve sessions", node)
        if pairs > 1:
            for pair in range(pairs):
                owner = preferred(pair, nodes, pairs)
                wait_until(lambda: serves(owner, pair), 60, f"pair {pair} on {owner.name}", owner)
        else:
            wait_until(lambda: "event=partition_serving" in nodes[0].log(), 30, "the owner", nodes[0])
        pids = {node.name: node.process.pid for node in nodes}
        pids.update({f"nats-n{i + 1}": p.pid for i, p in nats.processes.items()})
        campuses = ",".join(campus_in(pair, PAIRS) for pair in range(PAIRS))
        idle = cluster_cpu.idle_rate(pids)
        before = {name: cluster_cpu.cpu_seconds(pid) for name, pid in pids.items()}
        outputs, drivers = [], []
        started = time.monotonic()
        for node in nodes:
            output = tempfile.mktemp(suffix=".json")
            outputs.append(output)
            drivers.append(subprocess.Popen([os.environ["LOADTEST"], "durable", "--url", node.url, "--publishers", str(publishers),
                                             "--duration", str(seconds), "--campuses", campuses, "--types", "bounty",
                                             "--quiet", "--json", output], stdout=subprocess.DEVNULL))
        for driver in drivers:
            driver.wait()
        elapsed = time.monotonic() - started
        count = 0
        for output in outputs:
            count += json.load(open(output))["counters"]["acknowledged_publishes"]
            os.unlink(output)
        spent = {name: max(0.0, cluster_cpu.cpu_seconds(pid) - before[name] - idle[name] * elapsed) for name, pid in pids.items()}
        if pairs == 1:
            owners = {nodes[0].name: [0]}
        else:
            owners = {node.name: [pair for pair in range(pairs) if preferred(pair, nodes, pairs) is node] for node in nodes}
        parts = ", ".join(f"{name}{' (pairs ' + ','.join(map(str, owners[name])) + ')' if owners.get(name) else ''} "
                          f"{spent[name] / count * 1e6:.0f} µs" for name in pids)
        busiest = max(spent[node.name] for node in nodes) / count * 1e6
        print(f"--partitions {pairs}: {count} publishes in {elapsed:.1f} s ({count / elapsed:.0f}/s); CPU per publish, net of idle: "
              f"{parts}; busiest node {busiest:.0f} µs; total {sum(spent.values()) / count * 1e6:.0f} µs")
    finally:
        for node in nodes:
            node.stop()
        nats.stop()


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    publishers = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    directory = tempfile.mkdtemp(prefix="bangbang-pairs-cpu-")
    for pairs in (1, PAIRS):
        os.makedirs(f"{directory}/p{pairs}")
        run(f"{directory}/p{pairs}", pairs, seconds, publishers)


if __name__ == "__main__":
    main()
