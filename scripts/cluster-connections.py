#!/usr/bin/env python3
"""What a logged-in client costs the node that holds its connection, relayed or run there
(docs/scale-out.md 2c). For each `--cluster-sessions` mode, starts a 3-server NATS cluster, an
owner and one standby in that mode, and has `loadtest connections --login` open N connections to
the standby and log each in (a code requested and a login, routed to the owner or relayed); prints
the logins per second and the standby's resident memory per connection.

    BANGBANG_BINARY=.build-rel/release/bangbang LOADTEST=.build-rel/release/loadtest \\
        .build/pyenv/bin/python scripts/cluster-connections.py [connections]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "e2e"))

from nats_cluster import NatsCluster, free_ports  # noqa: E402
from test_cluster_failover import Node, wait_until  # noqa: E402

OPTIONS = ["--handshakes-per-second-per-address", "0", "--max-connections-per-address", "100000",
           "--sms-per-ip-hourly", "0"]


def measure(sessions, connections):
    directory = tempfile.mkdtemp(prefix="bangbang-connections-")
    results = os.path.join(directory, "results.json")
    nats = NatsCluster.start()
    time.sleep(2)   # JetStream answers before every server is a placement peer of R3 streams
    nodes = []
    try:
        for index, port in enumerate(free_ports(2)):
            node = Node(f"bb{index + 1}", port, directory, nats.urls, lease_ms=6000,
                        extra=OPTIONS + ["--cluster-sessions", sessions])
            nodes.append(node)
            if index == 0:
                wait_until(node.is_ready, 30, "the owner", node)
            else:
                wait_until(lambda: "cluster_joined" in node.log(), 30, "the standby", node)
        standby = nodes[1]
        subprocess.run([os.environ["LOADTEST"], "connections", "--url", standby.url, "--connections", str(connections),
                        "--login", "--duration", "5", "--server-pid", str(standby.process.pid), "--quiet",
                        "--json", results], check=True, stdout=subprocess.DEVNULL)
        metrics = json.load(open(results))["metrics"]
        print(f"{sessions:5}: {connections} connections logged in on the standby at {metrics['logins_per_second']:.0f}/s; "
              f"the standby's RSS {metrics['server_rss_per_connection_kib']:.2f} KiB per connection", flush=True)
    finally:
        for node in nodes:
            node.stop()
        nats.stop()


def main():
    connections = int(sys.argv[1]) if len(sys.argv) > 1 else 15_000
    for sessions in ("relay", "node"):
        measure(sessions, connections)


if __name__ == "__main__":
    main()
