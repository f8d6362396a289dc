#!/usr/bin/env python3
"""CPU per publish of one node alone and of a clustered owner (docs/scale-out.md section 12).

Starts the server as a single node, then as the owner of p0 over a 3-server NATS cluster (with a
standby), publishes the same number of orders on each from a few concurrent clients, and prints
the user+system CPU each process spent per publish (from /proc/<pid>/stat), the NATS servers'
included. CPU, not wall time: the machine is shared.

    BANGBANG_BINARY=.build-rel/release/bangbang .build/pyenv/bin/python scripts/cluster-cpu.py [publishes] [clients]

With LOADTEST=.build-rel/release/loadtest the publishes come from `loadtest durable --publishers
<clients> --duration <publishes / 1000> s` instead, fast enough for the server to batch them.
"""
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "e2e"))

from bbclient import Client, fresh_phone  # noqa: E402
from nats_cluster import NatsCluster, free_ports, jetstream_request  # noqa: E402
from test_cluster_failover import Node, wait_until  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
LOAD_OPTIONS = ("--handshakes-per-second-per-address", "0", "--max-connections-per-address", "100000")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def publish_all(url, publishes, clients):
    connections = []
    for _ in range(clients):
        client = Client(url)
        client.login(fresh_phone())
        connections.append(client)
    deadline = int(time.time() * 1000) + 3_600_000

    def run(client, count):
        for index in range(count):
            client.ok("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                        "details": {"title": f"cpu {index}", "description": "cpu per publish"}})

    share = publishes // clients
    threads = [threading.Thread(target=run, args=(c, share)) for c in connections]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    for client in connections:
        client.close()
    return share * clients, elapsed


def idle_rate(pids, seconds=3.0):
    """CPU per second each process spends doing nothing asked of it (timers, leases, raft)."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    time.sleep(seconds)
    return {name: (cpu_seconds(pid) - before[name]) / seconds for name, pid in pids.items()}


def loadtest_durable(url, publishes, clients):
    results = tempfile.mktemp(suffix=".json")
    started = time.monotonic()
    subprocess.run([os.environ["LOADTEST"], "durable", "--url", url, "--publishers", str(clients),
                    "--duration", str(max(1, publishes // 1000)), "--quiet", "--json", results],
                   check=True, stdout=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    result = json.load(open(results))
    count = result["counters"]["acknowledged_publishes"]
    metrics = result.get("metrics", {})
    if "acknowledgement_p50_ms" in metrics:
        print(f"  acknowledgement p50 {metrics['acknowledgement_p50_ms']:.2f} ms, p99 {metrics['acknowledgement_p99_ms']:.2f} ms")
    os.unlink(results)
    return count, elapsed


def measure(label, url, pids, publishes, clients):
    publish_all(url, 100, 2)   # warm up: code paths, allocations, the stream's first blocks
    idle = idle_rate(pids)
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    run = loadtest_durable if os.environ.get("LOADTEST") else publish_all
    count, elapsed = run(url, publishes, clients)
    spent = {name: max(0.0, cpu_seconds(pid) - before[name] - idle[name] * elapsed) for name, pid in pids.items()}
    parts = ", ".join(f"{name} {spent[name] / count * 1e6:.0f} µs" for name in pids)
    total = sum(spent.values()) / count * 1e6
    print(f"{label}: {count} publishes in {elapsed:.1f} s ({count / elapsed:.0f}/s); CPU per publish, net of idle: "
          f"{parts}; total {total:.0f} µs")
    return count


@contextlib.contextmanager
def clustered_nodes(directory, count, extra, per_node=()):
    """A 3-server NATS cluster and `count` Bangbang nodes over it: the first owns p0, the others
    have joined as standbys. `per_node[i]`, if given, adds arguments for node i only. Everything is
    stopped afterwards, by the PIDs started here."""
    nats = NatsCluster.start()
    time.sleep(2)   # JetStream answers before every server is a placement peer of R3 streams
    nodes = []
    try:
        ports = free_ports(count)
        for index in range(count):
            own = tuple(per_node[index]) if index < len(per_node) else ()
            node = Node(f"bb{index + 1}", ports[index], directory, nats.urls, lease_ms=6000, extra=tuple(extra) + own)
            nodes.append(node)
            if index == 0:
                wait_until(node.is_ready, 30, "the owner", node)
            else:
                wait_until(lambda: "cluster_joined" in node.log(), 30, "a standby", node)
        yield nats, nodes
    finally:
        for node in nodes:
            node.stop()
        nats.stop()


def main():
    publishes = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    directory = tempfile.mkdtemp(prefix="bangbang-cpu-")

    single = Node("single", free_ports(1)[0], directory, [], extra=LOAD_OPTIONS)
    try:
        wait_until(single.is_ready, 20, "the single node")
        measure("single node", single.url, {"bangbang": single.process.pid}, publishes, clients)
    finally:
        single.stop()

    with clustered_nodes(directory, 2, LOAD_OPTIONS) as (nats, nodes):
        pids = {"owner": nodes[0].process.pid, "standby": nodes[1].process.pid}
        pids.update({f"nats-n{i + 1}": p.pid for i, p in nats.processes.items()})
        count = measure("clustered owner (3 NATS, R3)", nodes[0].url, pids, publishes, clients)
        # Messages each stream took for them (the warm-up's few included): a batch is one message.
        streams = []
        for stream in ("BB_P0", "BB_A0", "BB_I0"):
            info = jetstream_request(nats.client_ports[0], f"$JS.API.STREAM.INFO.{stream}")
            if "error" not in info:
                messages = info["state"]["last_seq"]
                streams.append(f"{stream} {messages} ({count / max(1, messages):.1f} publishes per message)")
        print("stream messages: " + ", ".join(streams))

if __name__ == "__main__":
    main()
