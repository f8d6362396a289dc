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
import importlib.util
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cluster_cpu", os.path.join(HERE, "cluster-cpu.py"))
cluster_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster_cpu)

sys.path.insert(0, os.path.join(HERE, "..", "Tests", "e2e"))

from websockets.sync.client import connect  # noqa: E402
from bbclient import Client, fresh_phone  # noqa: E402

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
    modes = [("--cluster-sessions", sessions) for sessions in ("relay", "node", "relay")]
    with cluster_cpu.clustered_nodes(directory, 3, cluster_cpu.LOAD_OPTIONS, per_node=modes) as (_, nodes):
        with Client(nodes[0].url) as first:
            first.login(fresh_phone())
            token = first.token
        connections = {}
        try:
            for label, node in (("direct", nodes[0]), ("routed by a node session", nodes[1]), ("relayed", nodes[2])):
                connection = connect(node.url, max_size=2 ** 24)
                connection.send(json.dumps({"id": 0, "op": "auth.resume", "data": {"token": token}}))
                while json.loads(connection.recv()).get("id") != 0:
                    pass
                connections[label] = connection
            for op, data in REQUESTS.items():
                measure(op, data, connections, per_round, rounds)
        finally:
            for connection in connections.values():
                connection.close()


def measure(op, data, connections, per_round, rounds):
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


if __name__ == "__main__":
    main()
