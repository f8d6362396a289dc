#!/usr/bin/env python3
"""What a logged-in client costs the node that holds its connection, relayed or run there
(docs/scale-out.md 2c). For each `--cluster-sessions` mode, starts a 3-server NATS cluster, an
owner and one standby in that mode, and has `loadtest connections --login` open N connections to
the standby and log each in (a code requested and a login, routed to the owner or relayed); prints
the logins per second and the standby's resident memory per connection.

    BANGBANG_BINARY=.build-rel/release/bangbang LOADTEST=.build-rel/release/loadtest \\
        .build/pyenv/bin/python scripts/cluster-connections.py [connections]
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cluster_cpu", os.path.join(HERE, "cluster-cpu.py"))
cluster_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster_cpu)

OPTIONS = cluster_cpu.LOAD_OPTIONS + ("--sms-per-ip-hourly", "0")


def measure(sessions, connections):
    directory = tempfile.mkdtemp(prefix="bangbang-connections-")
    results = os.path.join(directory, "results.json")
    with cluster_cpu.clustered_nodes(directory, 2, OPTIONS + ("--cluster-sessions", sessions)) as (_, nodes):
        standby = nodes[1]
        subprocess.run([os.environ["LOADTEST"], "connections", "--url", standby.url, "--connections", str(connections),
                        "--login", "--duration", "5", "--server-pid", str(standby.process.pid), "--quiet",
                        "--json", results], check=True, stdout=subprocess.DEVNULL)
        metrics = json.load(open(results))["metrics"]
        print(f"{sessions:5}: {connections} connections logged in on the standby at {metrics['logins_per_second']:.0f}/s; "
              f"the standby's RSS {metrics['server_rss_per_connection_kib']:.2f} KiB per connection", flush=True)


def main():
    connections = int(sys.argv[1]) if len(sys.argv) > 1 else 15_000
    for sessions in ("relay", "node"):
        measure(sessions, connections)


if __name__ == "__main__":
    main()
