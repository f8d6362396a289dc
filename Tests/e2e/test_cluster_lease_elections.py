"""A leader election of the leases bucket costs nobody a lease (docs/scale-out.md, sections 5 and
12): 3 NATS servers and 3 Bangbang nodes at the shortest `--lease-ms` the settings allow, the pairs
spread one per node (`--partitions 3`), a client on every node publishing without pause on its
node's own pair (campus and phone in it, so nothing is routed over NATS). In each round the NATS
server leading `KV_bb-leases` (not `KV_bb-nodes`, which the owner of pair 0 keeps elsewhere) is
killed with SIGKILL; no renewal lands anywhere until the bucket has a new leader, seconds and many
lease times later. Then: no node exits or gives up a pair, every pair's lease is renewed by its
holder after the election, every client is still connected and has publishes answered after the
kill, the only errors are `storage_unavailable`; the server is started again and, once every stream
has its replicas current, the next round begins. Two rounds by default; `BANGBANG_ROUNDS=10` for
more. Also: a lease shorter than the shortest is refused, naming the range."""
import base64
import json
import os
import re
import subprocess
import threading
import time

from bbclient import ADMIN_PHONE, Client, fresh_phone
from conftest import server_binary
from nats_cluster import NatsCluster, free_ports, jetstream_request, nats_request
from test_cluster_failover import Node, wait_until
from test_cluster_partitions import campus_in, pair_of, placement, serves

PAIRS = 3
ROUNDS = int(os.environ.get("BANGBANG_ROUNDS", "2"))
# A new leader of every stream the dead server led (2 to 12 s seen with nats-server 2.9), the
# journal's retry episode after it (a node gives up after 15 s of one), the 2 s attempt lost with
# the server, and room for a slow shared machine.
ANSWERED_BOUND_SECONDS = 20.0
ROUND_BOUND_SECONDS = 60.0
CALL_TIMEOUT = 20
ALLOWED_ERRORS = {"storage_unavailable"}


def shortest_lease_ms():
    """The lower end of `--lease-ms`'s range, as the binary's own refusal names it."""
    refused = subprocess.run([server_binary(), "check-config", "--lease-ms", "0"], capture_output=True, text=True, timeout=30)
    match = re.search(r"--lease-ms: expected an integer in (\d+)\.\.\.(\d+)", refused.stderr + refused.stdout)
    assert refused.returncode != 0 and match, f"--lease-ms 0 not refused with its range: {refused.returncode} {refused.stderr}"
    return int(match.group(1))


class Worker:
    """A client on one node publishing without pause on that node's pair; the time of every
    publish answered, and whatever else happened to it."""

    def __init__(self, node, pair):
        self.node = node
        self.lock = threading.Lock()
        self.answered = []
        self.errors = []
        self.failure = None
        self.stop = threading.Event()
        self.client = Client(node.url)
        self.client.login(next(phone for phone in iter(fresh_phone, None) if pair_of(phone, PAIRS) == pair))
        self.campus = campus_in(pair, PAIRS)
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self):
        deadline = int(time.time() * 1000) + 3_600_000
        try:
            while not self.stop.is_set():
                reply = self.client.call("order.publish", {"type": "bounty", "campus": self.campus, "deadline": deadline,
                                                           "tip": 100, "details": {"title": "election", "description": "lease"}},
                                         timeout=CALL_TIMEOUT)
                with self.lock:
                    if reply["ok"]:
                        self.answered.append(time.monotonic())
                    else:
                        self.errors.append(reply["error"]["code"])
                if not reply["ok"]:
                    time.sleep(0.05)
        except Exception as error:  # the connection ended: what this test says must not happen
            code = getattr(getattr(error, "rcvd", None), "code", None)
            with self.lock:
                self.failure = f"{error!r} (close code {code})"

    def answered_since(self, moment):
        with self.lock:
            return [at for at in self.answered if at >= moment]

    def longest_gap(self, since, until):
        with self.lock:
            times = [at for at in self.answered if at < since][-1:] + [at for at in self.answered if since <= at <= until]
        return max((b - a for a, b in zip(times, times[1:] + [until])), default=until - since)

    def finish(self):
        self.stop.set()
        self.thread.join(timeout=CALL_TIMEOUT + 5)
        self.client.close()


def lease_entry(nats, pair):
    """(revision, holder) of pair `pair`'s lease key, read from the bucket's leader by any survivor."""
    body = json.dumps({"last_by_subj": f"$KV.bb-leases.p{pair}"}).encode()
    for index, port in enumerate(nats.client_ports):
        if index not in nats.processes:
            continue
        try:
            message = json.loads(nats_request(port, "$JS.API.STREAM.MSG.GET.KV_bb-leases", body, timeout=1.0)).get("message")
        except (OSError, RuntimeError, ValueError):
            continue
        if message:
            return message["seq"], json.loads(base64.b64decode(message["data"])).get("node")
    return None


def streams_current(nats):
    """Whether every stream has a leader and two current replicas besides it."""
    port = next(nats.client_ports[index] for index in nats.processes)
    try:
        names = jetstream_request(port, "$JS.API.STREAM.NAMES", timeout=2.0).get("streams") or []
        for name in names:
            cluster = jetstream_request(port, f"$JS.API.STREAM.INFO.{name}", timeout=2.0).get("cluster", {})
            replicas = cluster.get("replicas") or []
            if not cluster.get("leader") or len(replicas) != 2 or not all(r.get("current") and not r.get("offline") for r in replicas):
                return False
        return bool(names)
    except (OSError, RuntimeError, ValueError):
        return False


def new_leader(nats, stream, old):
    """The leader a survivor names for `stream` once it is another than `old`, else None."""
    for index, port in enumerate(nats.client_ports):
        if index not in nats.processes:
            continue
        try:
            leader = jetstream_request(port, f"$JS.API.STREAM.INFO.{stream}", timeout=0.5).get("cluster", {}).get("leader")
        except (OSError, RuntimeError, ValueError):
            continue
        if leader and leader != f"n{old + 1}":
            return leader
    return None


def test_a_lease_shorter_than_the_shortest_is_refused_with_its_range():
    shortest = shortest_lease_ms()
    refused = subprocess.run([server_binary(), "check-config", "--lease-ms", str(shortest - 1)],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0
    assert f"invalid value '{shortest - 1}' for --lease-ms: expected an integer in {shortest}..." in refused.stderr, refused.stderr
    accepted = subprocess.run([server_binary(), "check-config", "--lease-ms", str(shortest)], capture_output=True, text=True, timeout=30)
    assert accepted.returncode == 0, accepted.stderr


def test_killing_the_nats_server_leading_the_leases_bucket_costs_no_node_its_pairs(tmp_path):
    lease_ms = shortest_lease_ms()
    started = time.monotonic()
    nats = NatsCluster.start()
    nodes, workers = [], []
    try:
        for index, port in enumerate(free_ports(3)):
            node = Node(f"bb{index + 1}", port, str(tmp_path), nats.urls, lease_ms=lease_ms,
                        extra=["--admin-phone", ADMIN_PHONE, "--partitions", str(PAIRS)])
            nodes.append(node)
            wait_until(node.is_ready, 20, f"{node.name} to serve sessions", node)
        owners = placement([node.name for node in nodes], PAIRS)
        by_name = {node.name: node for node in nodes}
        assert sorted(owners.values()) == sorted(by_name), f"one pair per node: {owners}"
        for pair, owner in owners.items():
            wait_until(lambda: serves(by_name[owner], pair), 20, f"pair {pair} on {owner}", by_name[owner])
        workers = [Worker(by_name[owners[pair]], pair) for pair in range(PAIRS)]

        elections = []
        for round_number in range(1, ROUNDS + 1):
            round_started = time.monotonic()
            # The owner of pair 0 steps the nodes bucket's leader down when one server leads both.
            wait_until(lambda: nats.stream_leader("KV_bb-leases") != nats.stream_leader("KV_bb-nodes"), 20,
                       "the leases and nodes buckets led by different servers")
            victim = nats.stream_leader("KV_bb-leases")
            before = {pair: lease_entry(nats, pair) for pair in range(PAIRS)}
            assert all(before.values()), f"lease keys unreadable: {before}"
            wait_until(lambda: all(w.answered_since(round_started) for w in workers), ANSWERED_BOUND_SECONDS,
                       "every client answered before the kill")

            killed_at = time.monotonic()
            nats.kill(victim)
            wait_until(lambda: new_leader(nats, "KV_bb-leases", victim), 30, "KV_bb-leases to elect a new leader")
            election = time.monotonic() - killed_at
            elections.append(election)
            # Each holder renews its pair's lease after the election (twice: the moment a take-over
            # could have beaten the first renewal is past), and every client is answered.
            def renewed_since(revisions):
                entries = {pair: lease_entry(nats, pair) for pair in range(PAIRS)}
                if all(entry and entry[0] > revisions[pair][0] and entry[1] == owners[pair] for pair, entry in entries.items()):
                    return entries
                return None
            first = wait_until(lambda: renewed_since(before), 10, "every pair's lease renewed by its holder after the election")
            wait_until(lambda: renewed_since(first), 10, "every pair's lease renewed by its holder again")
            renewed_at = time.monotonic()
            wait_until(lambda: all(w.answered_since(renewed_at) or w.failure for w in workers), ANSWERED_BOUND_SECONDS,
                       "every client answered after the election")
            gaps = [w.longest_gap(killed_at, time.monotonic()) for w in workers]
            print(f"\nround {round_number}: NATS n{victim + 1} (leader of KV_bb-leases) killed; new leader after "
                  f"{election:.2f} s (L = {lease_ms} ms); longest gap between a client's publishes {max(gaps):.2f} s")

            exited = [node.name for node in nodes if node.process.poll() is not None]
            assert not exited, f"round {round_number}: {exited} exited: " + "\n".join(
                line for node in nodes for line in node.log().splitlines() if "event=partition_lost" in line or "exiting" in line)
            for node in nodes:
                assert "event=partition_lost" not in node.log(), f"{node.name} lost a pair:\n{node.log()}"
            for pair, owner in owners.items():
                assert serves(by_name[owner], pair), f"round {round_number}: pair {pair} moved off {owner}"
            failures = [w.failure for w in workers if w.failure]
            assert not failures, f"round {round_number}: clients cut off: {failures}"
            assert max(gaps) < ANSWERED_BOUND_SECONDS, f"round {round_number}: publishes stalled {max(gaps):.2f} s"

            nats.launch(victim)
            wait_until(lambda: streams_current(nats), 40, "every stream's replicas current again")
            assert time.monotonic() - round_started < ROUND_BOUND_SECONDS, f"round {round_number} took too long"

        errors = [code for w in workers for code in w.errors]
        assert set(errors) <= ALLOWED_ERRORS, f"unexpected errors: {errors}"
        print(f"\n{ROUNDS} rounds in {time.monotonic() - started:.0f} s; elections {min(elections):.2f}–{max(elections):.2f} s; "
              f"{sum(len(w.answered) for w in workers)} publishes answered, errors: {sorted(set(errors)) or 'none'}")
    finally:
        for worker in workers:
            worker.finish()
        for node in nodes:
            node.stop()
        nats.stop()
