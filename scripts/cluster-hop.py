#!/usr/bin/env python3
"""The latency one hop to the owner adds to a request, relayed or routed (docs/scale-out.md 2c).

Starts a 3-server NATS cluster and three Bangbang nodes: the owner of the partition, a node that
runs its clients' sessions itself (`--cluster-sessions node`: each request routed to the owner
over NATS request/reply) and one that relays them whole (`--cluster-sessions relay`). One user
resumes a session on each, and each connection sends sequential requests answered by the owner
(`profile.get`, and `order.get` of an order that does not exist), in rounds that alternate between
the three so the machine's noise falls on all of them alike. Prints the median and p99 round trip
of each; the difference to "direct" is the hop. Raw WebSocket frames, no schema checks, so the
client adds as little as it can.

    BANGBANG_BINARY=.build-rel/release/bangbang .build/pyenv/bin/python scripts/cluster-hop.py [requests per round] [rounds]
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "e2e"))

from websockets.sync.client import connect  # noqa: E402
from bbclient import Client, fresh_phone  # noqa: E402
from nats_cluster import NatsCluster, free_ports  # noqa: E402
from test_cluster_failover import Node, wait_until  # noqa: E402

OPTIONS = ["--handshakes-per-second-per-address", "0", "--max-connections-per-address", "100000"]
REQUESTS = {"profile.get": {}, "order.get": {"order_id": 999_999}}


def round_trips(connection, op, data, count):
    times = []
    for _ in range(count):
        started = time.perf_counter()
        connection.send(json.dumps({"id": 1, "op": op, "data": data}))
        while json.loads(connection.recv()).get("id") != 1:
            pass
        times.append((time.perf_counter() - started) * 1e6)
    return times


def main():
    per_round = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    directory = tempfile.mkdtemp(prefix="bangbang-hop-")
    nats = NatsCluster.start()
    time.sleep(2)   # JetStream answers before every server is a placement peer of R3 streams
    nodes = []
    connections = {}
    try:
        for index, (port, sessions) in enumerate(zip(free_ports(3), ["relay", "node", "relay"])):
            node = Node(f"bb{index + 1}", port, directory, nats.urls, lease_ms=6000,
                        extra=OPTIONS + ["--cluster-sessions", sessions])
            nodes.append(node)
            if index == 0:
                wait_until(node.is_ready, 30, "the owner", node)
            else:
                wait_until(lambda: "cluster_joined" in node.log(), 30, "a standby", node)
        with Client(nodes[0].url) as first:
            first.login(fresh_phone())
            token = first.token
        for label, node in (("direct", nodes[0]), ("routed by a node session", nodes[1]), ("relayed", nodes[2])):
            connection = connect(node.url, max_size=2 ** 24)
            connection.send(json.dumps({"id": 0, "op": "auth.resume", "data": {"token": token}}))
            while json.loads(connection.recv()).get("id") != 0:
                pass
            connections[label] = connection
        for op, data in REQUESTS.items():
            times = {label: [] for label in connections}
            for _ in range(rounds):
                for label, connection in connections.items():
                    times[label] += round_trips(connection, op, data, per_round)
            direct = sorted(times["direct"])[len(times["direct"]) // 2]
            for label, values in times.items():
                values.sort()
                p50, p99 = values[len(values) // 2], values[int(len(values) * 0.99)]
                hop = "" if label == "direct" else f", the hop {p50 - direct:+.0f} µs"
                print(f"{op:12} {label:26} p50 {p50:5.0f} µs  p99 {p99:5.0f} µs{hop}", flush=True)
    finally:
        for connection in connections.values():
            connection.close()
        for node in nodes:
            node.stop()
        nats.stop()


if __name__ == "__main__":
    main()
