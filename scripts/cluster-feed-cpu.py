#!/usr/bin/env python3
"""CPU per feed delivery on one node, and on each node of three (docs/scale-out.md section 12).

Runs `loadtest feed` against a single node, then against three Bangbang nodes over a 3-server
NATS cluster: the owner of p0 and two standbys, with the runners spread evenly over the three
(`--runner-url` for each) and the publishers on the owner. Prints each process's user+system CPU
per delivery (from /proc/<pid>/stat, less what it spends idle), the NATS servers' included, and
the publish→runner latency (with runners spread, two in three hear of an order through a relay
hop), and the round trip of one request direct to the owner and through a standby.

    swift build -c release --build-path .build-rel --product bangbang
    swift build -c release --build-path .build-rel --product loadtest
    BANGBANG_BINARY=.build-rel/release/bangbang LOADTEST=.build-rel/release/loadtest \\
        .build/pyenv/bin/python scripts/cluster-feed-cpu.py [runners] [orders per second] [seconds]

With CLUSTER_SESSIONS=node the standbys run their clients' sessions themselves
(`--cluster-sessions node`) instead of relaying them to the owner.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cluster_cpu", os.path.join(HERE, "cluster-cpu.py"))
cluster_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cluster_cpu)

ADMIN_PHONE = "+8613800009999"
OPTIONS = cluster_cpu.LOAD_OPTIONS + ("--admin-phone", ADMIN_PHONE)


def feed_window(owner_url, runner_urls, runners, rate, seconds, pids):
    """Runs the feed scenario and samples every process's CPU at its first and last progress line
    of the measured phase (one a second), so setup (logins, approvals, subscriptions) is left out.
    Returns (deliveries in the window, CPU seconds per process in it, the window's length, p50 ms,
    p99 ms of the whole run)."""
    results = tempfile.mktemp(suffix=".json")
    arguments = [os.environ["LOADTEST"], "feed", "--url", owner_url, "--runners", str(runners),
                 "--publishers", "4", "--rate", str(rate), "--duration", str(seconds),
                 "--admin-phone", ADMIN_PHONE, "--json", results]
    for url in runner_urls:
        arguments += ["--runner-url", url]
    driver = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []
    for line in driver.stderr:
        found = re.search(r"\] feed: \d+ published, (\d+) delivered", line)
        if found:
            samples.append((time.monotonic(), int(found.group(1)),
                            {name: cluster_cpu.cpu_seconds(pid) for name, pid in pids.items()}))
    if driver.wait() != 0:
        raise RuntimeError(f"loadtest feed failed ({driver.returncode})")
    result = json.load(open(results))
    os.unlink(results)
    (start, first_count, first_cpu), (end, last_count, last_cpu) = samples[0], samples[-1]
    metrics = result["metrics"]
    for check in result["checks"]:
        if result["counters"].get(check):
            raise RuntimeError(f"loadtest feed: {check} = {result['counters'][check]}")
    return (last_count - first_count, {name: last_cpu[name] - first_cpu[name] for name in pids}, end - start,
            metrics["delivery_p50_ms"], metrics["delivery_p99_ms"])


def measure(label, owner_url, runner_urls, pids, runners, rate, seconds):
    idle = cluster_cpu.idle_rate(pids)
    deliveries, spent, window, p50, p99 = feed_window(owner_url, runner_urls, runners, rate, seconds, pids)
    net = {name: max(0.0, spent[name] - idle[name] * window) for name in pids}
    parts = ", ".join(f"{name} {net[name] / deliveries * 1e6:.2f} µs" for name in pids)
    total = sum(net.values()) / deliveries * 1e6
    print(f"{label}: {deliveries} deliveries in {window:.1f} s ({deliveries / window:.0f}/s), p50 {p50:.1f} ms, "
          f"p99 {p99:.1f} ms; CPU per delivery, net of idle: {parts}; total {total:.2f} µs", flush=True)


def hop_latency(owner, standby, calls=1000, op="info.get"):
    """Median and p99 of sequential `op` round trips, direct to the owner and through a standby
    (relayed whole, or routed by the session running there): the difference is one hop's cost.
    `info.get` is answered by a node running sessions itself, so there `profile.get` is the hop."""
    figures = {}
    for label, node in (("direct", owner), ("through a standby", standby)):
        with cluster_cpu.Client(node.url) as client:
            if op != "info.get":
                client.login(cluster_cpu.fresh_phone())
            for _ in range(100):
                client.ok(op)
            times = []
            for _ in range(calls):
                started = time.perf_counter()
                client.ok(op)
                times.append((time.perf_counter() - started) * 1e6)
        times.sort()
        figures[label] = (times[len(times) // 2], times[int(len(times) * 0.99)])
    (direct, direct_p99), (relayed, relayed_p99) = figures["direct"], figures["through a standby"]
    print(f"one request, {calls} sequential {op}: direct p50 {direct:.0f} µs / p99 {direct_p99:.0f} µs, "
          f"through a standby p50 {relayed:.0f} µs / p99 {relayed_p99:.0f} µs: one hop adds "
          f"{relayed - direct:.0f} µs at the median", flush=True)


def main():
    runners = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rate = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    directory = tempfile.mkdtemp(prefix="bangbang-feed-cpu-")

    single = cluster_cpu.Node("single", cluster_cpu.free_ports(1)[0], directory, [], extra=OPTIONS)
    try:
        cluster_cpu.wait_until(single.is_ready, 20, "the single node")
        measure("single node", single.url, [], {"bangbang": single.process.pid}, runners, rate, seconds)
    finally:
        single.stop()

    sessions = os.environ.get("CLUSTER_SESSIONS", "relay")
    print(f"standbys' sessions: {sessions} (--cluster-sessions)", flush=True)
    with cluster_cpu.clustered_nodes(directory, 3, OPTIONS + ("--cluster-sessions", sessions)) as (nats, nodes):
        if sessions == "relay":
            hop_latency(nodes[0], nodes[1])
        hop_latency(nodes[0], nodes[1], op="profile.get")
        pids = {"owner": nodes[0].process.pid, "standby1": nodes[1].process.pid, "standby2": nodes[2].process.pid}
        pids.update({f"nats-n{i + 1}": p.pid for i, p in nats.processes.items()})
        measure("three nodes, runners on all three (3 NATS)", nodes[0].url, [node.url for node in nodes], pids,
                runners, rate, seconds)
        measure("three nodes, runners on the owner only", nodes[0].url, [], pids, runners, rate, seconds)

if __name__ == "__main__":
    main()
