"""Step 1 of the scale-out (docs/scale-out.md): one partition, owned by one of two Bangbang nodes
over a 3-node NATS JetStream cluster, the other a standby. Orders are published on the owner and
acknowledged; the owner is killed with SIGKILL; the standby takes the partition over within a
stated bound, recovers it from the stream, and has every acknowledged order; a session token
issued by the old owner still resumes on the new one; orders the old owner moved out of memory
are in the new owner's history (the cluster's history stream). Losing a whole machine (the owner and, at
the same moment, the NATS server leading the journal) is survived the same way, within a longer
bound. A node that ran on its own, restarted with `--nats` on the same data directory, brings its
state, its users' tokens and its history into the empty cluster."""
import itertools
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from bbclient import Client, fresh_phone
from conftest import server_binary
from nats_cluster import NatsCluster, NatsSubscriber, free_ports, jetstream_request

LEASE_MS = 1500
# Expiry is seen after one lease time without a renewal, the take-over write and the replay
# follow: a bound of lease + 3 s leaves room for a slow shared machine.
TAKEOVER_BOUND_SECONDS = LEASE_MS / 1000 + 3.0
ORDERS = 40
# A machine lost: the lease, the journal stream's election (4 to 9 s in nats-server 2.9's raft),
# and the recovery's read retried after it, with room for a slow shared machine.
MACHINE_LOSS_BOUND_SECONDS = 25.0


class Node:
    """One `bangbang --nats …` process, started and killed by its PID."""

    def __init__(self, name, port, directory, nats_urls, lease_ms=LEASE_MS, extra=()):
        self.name = name
        self.port = port
        self.log_path = os.path.join(directory, f"{name}.log")
        arguments = [server_binary(), "--dev", "--fsync", "never", "--port", str(port),
                     "--data-dir", os.path.join(directory, f"{name}-data"), "--node-id", name,
                     "--lease-ms", str(lease_ms), "--sms-per-ip-hourly", "0",
                     "--requests-per-second", "0", "--user-requests-per-second", "0", *extra]
        for url in nats_urls:
            arguments += ["--nats", url]
        self.process = subprocess.Popen(arguments, stdout=open(self.log_path, "ab"), stderr=subprocess.STDOUT)

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}/ws"

    def http(self, path):
        """(status, body, headers) of a GET, or None while nothing listens."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), dict(error.headers)
        except OSError:
            return None

    def is_ready(self):
        answer = self.http("/readyz")
        return answer is not None and answer[0] == 200

    def log(self):
        return open(self.log_path, encoding="utf-8", errors="replace").read()

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout=15):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def serving_logged(node, pattern=r"event=partition_serving "):
    """The node's `partition_serving` line matching `pattern`: written once it serves everything,
    a moment after `/readyz` turns 200 (which it does as soon as clients are accepted)."""
    return wait_until(lambda: re.search(pattern, node.log()), 5, f"{pattern!r} in the log", node)


def wait_until(condition, timeout, what, node=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}" + (f"; its log:\n{node.log()}" if node else ""))


def start_three_nodes(started, directory, nats, modes, admin_phone, lease_ms=LEASE_MS):
    """Three nodes on `nats`, the i-th with `--cluster-sessions modes[i]`, appended to `started` as
    each starts (the caller stops them). The first owns the partition and serves; each other has
    joined, and one running sessions also answers ready (it serves once it knows the owner)."""
    for index, port in enumerate(free_ports(3)):
        node = Node(f"bb{index + 1}", port, directory, nats.urls, lease_ms=lease_ms,
                    extra=["--admin-phone", admin_phone, "--cluster-sessions", modes[index]])
        started.append(node)
        if index == 0:
            wait_until(node.is_ready, 20, "the first node to own the partition", node)
            # Ready once clients are accepted; serving routed requests follows a moment later.
            wait_until(lambda: "event=partition_serving" in node.log(), 5, "the owner to serve", node)
        elif modes[index] == "node":
            wait_until(node.is_ready, 20, f"{node.name} to serve sessions", node)
        else:
            wait_until(lambda: "cluster_joined" in node.log(), 20, f"{node.name} to join", node)
    for node in started:
        node.nats = nats


@pytest.fixture
def machines(tmp_path):
    """The NATS cluster and the two nodes: the owner, then its standby."""
    nats = NatsCluster.start()
    ports = free_ports(2)
    nodes = []
    try:
        nodes.append(Node("bb1", ports[0], str(tmp_path), nats.urls))
        # The first node takes the free lease; the second starts as its standby.
        wait_until(nodes[0].is_ready, 20, "the first node to own the partition", nodes[0])
        nodes.append(Node("bb2", ports[1], str(tmp_path), nats.urls))
        wait_until(lambda: "cluster_joined" in nodes[1].log(), 20, "the second node to join", nodes[1])
        yield nats, nodes
    finally:
        for node in nodes:
            node.stop()
        nats.stop()


@pytest.fixture
def cluster(machines):
    return machines[1]


def publish(client, title):
    deadline = int(time.time() * 1000) + 3_600_000
    return client.ok("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                       "details": {"title": title, "description": "failover test"}})["order"]


def test_a_standby_takes_over_a_killed_owner_with_every_acknowledged_order(cluster):
    owner, standby = cluster

    # A standby says who owns the partition, and relays /ws to it (docs/scale-out.md, 7a).
    status, body, _ = standby.http("/healthz")
    assert status == 200
    status, body, _ = standby.http("/readyz")
    assert status == 503 and body.strip() == "standby; owner is bb1"
    status, body, headers = standby.http("/ws")
    assert status == 426, "/ws speaks WebSocket only, on a standby as on the owner"
    with Client(standby.url) as relayed:
        assert relayed.ok("info.get")["version"]

    acknowledged = {}
    with Client(owner.url) as publisher:
        publisher.login(fresh_phone())
        token = publisher.token
        user_id = publisher.user["id"]
        for index in range(ORDERS):
            order = publish(publisher, f"order {index}")
            acknowledged[order["id"]] = f"order {index}"
    assert len(acknowledged) == ORDERS

    killed_at = time.monotonic()
    owner.kill()
    wait_until(standby.is_ready, TAKEOVER_BOUND_SECONDS + 5, "the standby to become ready", standby)
    takeover = time.monotonic() - killed_at
    print(f"\ntakeover after kill -9 of the owner: {takeover:.2f} s (lease {LEASE_MS} ms)")
    assert takeover < TAKEOVER_BOUND_SECONDS, f"took {takeover:.2f} s, bound {TAKEOVER_BOUND_SECONDS} s"
    serving_logged(standby, r"event=partition_serving .*records=\d+")

    # The old owner's token resumes on the new owner: the secret is the cluster's.
    with Client(standby.url) as resumed:
        resumed.ok("auth.resume", {"token": token})
        for order_id, title in acknowledged.items():
            order = resumed.ok("order.get", {"order_id": order_id})["order"]
            assert order["details"]["title"] == title
            assert order["publisher"] == user_id
        listed = resumed.ok("board.list", {"types": ["bounty"], "limit": 100})
        assert listed["total"] == ORDERS
        assert {o["id"] for o in listed["orders"]} == set(acknowledged)
        # The new owner appends after what it replayed.
        new_order = publish(resumed, "after the failover")
        assert new_order["id"] not in acknowledged


def test_losing_the_owners_machine_with_the_nats_server_leading_the_journal(machines):
    nats, (owner, standby) = machines
    acknowledged = {}
    with Client(owner.url) as publisher:
        publisher.login(fresh_phone())
        for index in range(ORDERS):
            order = publish(publisher, f"order {index}")
            acknowledged[order["id"]] = f"order {index}"

    leader = nats.stream_leader("BB_P0")
    also_led = [s for s in ("KV_bb-leases", "KV_bb-nodes", "OBJ_bb-snapshots") if nats.stream_leader(s) == leader]
    killed_at = time.monotonic()
    owner.kill()
    nats.kill(leader)
    wait_until(standby.is_ready, MACHINE_LOSS_BOUND_SECONDS + 5, "the standby to become ready", standby)
    takeover = time.monotonic() - killed_at
    print(f"\ntakeover after kill -9 of the owner and of NATS n{leader + 1} (leader of BB_P0"
          f"{''.join(', ' + s for s in also_led)}): {takeover:.2f} s (lease {LEASE_MS} ms)")
    assert takeover < MACHINE_LOSS_BOUND_SECONDS, f"took {takeover:.2f} s, bound {MACHINE_LOSS_BOUND_SECONDS} s"

    with Client(standby.url) as checker:
        checker.login(fresh_phone())
        for order_id, title in acknowledged.items():
            assert checker.ok("order.get", {"order_id": order_id})["order"]["details"]["title"] == title
        assert publish(checker, "after the machine was lost")["id"] not in acknowledged


def personal_seqs(client, count):
    """The `seq` of the next `count` personal events `client` receives, in order."""
    return [client.wait_event(lambda e: e["event"] == "order.changed")["seq"] for _ in range(count)]


def test_a_fresh_clusters_personal_events_go_through_the_inbox_and_resume_without_a_gap(machines):
    nats, (owner, standby) = machines
    # A cluster that started empty keeps the account partition on a stream of its own, and each
    # user's personal events are numbered by reading its inbox (docs/scale-out.md, section 7b).
    serving_logged(owner, r"event=partition_serving .*accounts_journal_sequence=\d+")
    with Client(owner.url) as publisher:
        publisher.login(fresh_phone())
        token, user = publisher.token, publisher.user["id"]
        for index in range(10):
            publish(publisher, f"order {index}")
        before = personal_seqs(publisher, 10)
    assert before == list(range(before[0], before[0] + 10)), before
    port = nats.client_ports[0]
    assert jetstream_request(port, "$JS.API.STREAM.INFO.BB_A0")["state"]["messages"] >= 1, "the login is in BB_A0"
    assert jetstream_request(port, "$JS.API.STREAM.INFO.BB_I0")["state"]["messages"] >= 1, "the events went through BB_I0"
    status, metrics, _ = owner.http("/metrics")
    assert status == 200
    applied = re.search(r"^bangbang_inbox_applied_position (\d+)$", metrics, re.MULTILINE)
    assert applied and int(applied.group(1)) >= 1, metrics
    assert re.search(r"^bangbang_inbox_undelivered_entries 0$", metrics, re.MULTILINE), metrics

    # The user subjects: the next owner announces itself there, then publishes what it numbers.
    user_events = NatsSubscriber(nats.client_ports[1], "bb.user.>")
    owner.kill()
    wait_until(standby.is_ready, TAKEOVER_BOUND_SECONDS + 5, "the standby to become ready", standby)
    serving_logged(standby, r"event=partition_serving .*accounts_journal_sequence=\d+")
    user_events.wait_for(lambda subject, payload: subject == "bb.user.owner" and payload == b"a0")
    with Client(standby.url) as resumed:
        # What the device had seen up to the fifth event: the rest is sent again, same numbers.
        reply = resumed.ok("auth.resume", {"token": token, "last_seq": before[4]})
        assert reply["resync"] is False, reply
        replayed = [e["seq"] for e in resumed.events if e["event"] == "order.changed"]
        resumed.events.clear()
        assert replayed == before[5:], (replayed, before)
        publish(resumed, "after the failover")
        assert personal_seqs(resumed, 1) == [before[-1] + 1], "numbered after the replayed ones, once"
        user_events.wait_for(lambda subject, payload: subject == f"bb.user.{user % 4096}"
                             and payload[:16] == user.to_bytes(8, "big") + (before[-1] + 1).to_bytes(8, "big"))
    user_events.close()


def moved_to_archive(node):
    status, body, _ = node.http("/metrics")
    assert status == 200
    match = re.search(r"^bangbang_orders_moved_to_archive_total (\d+)", body, re.MULTILINE)
    return int(match.group(1)) if match else 0


def test_orders_the_owner_moved_out_of_memory_are_in_the_next_owners_history(tmp_path):
    nats = NatsCluster.start()
    ports = free_ports(2)
    # No rating window: a closed order leaves memory at the first sweep after it is archived.
    extra = ("--rating-window-days", "0")
    nodes = []
    try:
        nodes.append(Node("bb1", ports[0], str(tmp_path), nats.urls, extra=extra))
        wait_until(nodes[0].is_ready, 20, "the first node to own the partition", nodes[0])
        nodes.append(Node("bb2", ports[1], str(tmp_path), nats.urls, extra=extra))
        wait_until(lambda: "cluster_joined" in nodes[1].log(), 20, "the second node to join", nodes[1])
        owner, standby = nodes

        phone = fresh_phone()
        closed = {}
        with Client(owner.url) as publisher:
            publisher.login(phone)
            for index in range(ORDERS // 4):
                order = publish(publisher, f"cancelled {index}")
                closed[order["id"]] = publisher.ok("order.cancel", {"order_id": order["id"]})["order"]["status"]
        wait_until(lambda: moved_to_archive(owner) >= len(closed), 20, "the owner to move the closed orders out of memory", owner)

        owner.kill()
        wait_until(standby.is_ready, TAKEOVER_BOUND_SECONDS + 5, "the standby to become ready", standby)
        with Client(standby.url) as publisher:
            publisher.login(phone)
            history = publisher.ok("orders.mine", {"scope": "history", "limit": 100})
            assert {o["id"] for o in history["orders"]} == set(closed), history
            for order_id in closed:
                assert publisher.ok("order.get", {"order_id": order_id})["order"]["status"] == "cancelled"
    finally:
        for node in nodes:
            node.stop()
        nats.stop()


def test_a_single_node_restarted_with_nats_brings_its_state_into_the_empty_cluster(tmp_path):
    # No rating window: the cancelled order leaves memory for the single node's archive.
    extra = ("--rating-window-days", "0")
    port, other_port = free_ports(2)
    single = Node("bb1", port, str(tmp_path), [], extra=extra)
    nats = None
    nodes = []
    try:
        wait_until(single.is_ready, 20, "the single node to serve", single)
        phone = fresh_phone()
        with Client(single.url) as publisher:
            publisher.login(phone)
            token = publisher.token
            still_open = publish(publisher, "still open")
            cancelled = publish(publisher, "cancelled")
            publisher.ok("order.cancel", {"order_id": cancelled["id"]})
        wait_until(lambda: moved_to_archive(single) >= 1, 20, "the cancelled order to leave memory", single)
        single.stop()
        assert single.process.returncode == 0, single.log()

        nats = NatsCluster.start()
        nodes.append(Node("bb1", port, str(tmp_path), nats.urls, extra=extra))
        wait_until(nodes[0].is_ready, 30, "the node to import its state and serve", nodes[0])
        assert re.search(r"event=partition_import_read .*archived_orders=1", nodes[0].log()), nodes[0].log()
        # The imported cluster keeps the account partition on a journal of its own too.
        serving_logged(nodes[0], r"event=partition_serving .*accounts_journal_sequence=\d+")
        nodes.append(Node("bb2", other_port, str(tmp_path), nats.urls, extra=extra))
        wait_until(lambda: "cluster_joined" in nodes[1].log(), 20, "the second node to join", nodes[1])

        def check(node):
            with Client(node.url) as client:
                client.ok("auth.resume", {"token": token})
                assert client.ok("order.get", {"order_id": still_open["id"]})["order"]["status"] == "open"
                history = client.ok("orders.mine", {"scope": "history", "limit": 10})
                assert [o["id"] for o in history["orders"]] == [cancelled["id"]], history

        check(nodes[0])
        # What was imported is the cluster's, not the importing node's: the other node has it all.
        nodes[0].kill()
        wait_until(nodes[1].is_ready, TAKEOVER_BOUND_SECONDS + 5, "the second node to take over", nodes[1])
        check(nodes[1])
        assert "partition_import" not in nodes[1].log()
        # Back on its directory, the first node finds the cluster holding the partition: it serves
        # the cluster's state and leaves its old journal alone.
        nodes.append(Node("bb1", port, str(tmp_path), nats.urls, extra=extra))
        wait_until(lambda: nodes[2].log().count("cluster_joined") == 2, 20, "the first node to rejoin", nodes[2])
        nodes[1].stop()
        wait_until(nodes[2].is_ready, TAKEOVER_BOUND_SECONDS + 5, "the first node to take over again", nodes[2])
        assert "event=partition_import_skipped" in nodes[2].log()
        check(nodes[2])
    finally:
        single.stop()
        for node in nodes:
            node.stop()
        if nats:
            nats.stop()


def test_a_node_started_before_the_nats_cluster_can_place_its_buckets_waits_and_joins(tmp_path):
    # Two servers of three: the meta group has a quorum and JetStream answers, but a bucket with
    # three replicas cannot be placed (10005) until the third server is up.
    nats = NatsCluster.start(running=2)
    node = None
    try:
        node = Node("bb1", free_ports(1)[0], str(tmp_path), nats.urls)
        wait_until(lambda: "event=cluster_join_retrying" in node.log(), 20, "the node to retry joining", node)
        assert node.process.poll() is None, "the node gave up instead of waiting for the cluster"
        nats.launch(2)
        wait_until(node.is_ready, 30, "the node to join and own the partition", node)
        with Client(node.url) as client:
            client.login(fresh_phone())
            publish(client, "after the cluster came together")
    finally:
        if node:
            node.stop()
        nats.stop()


def test_sigterm_hands_the_lease_back_and_the_standby_takes_over_at_once(cluster):
    owner, standby = cluster
    with Client(owner.url) as publisher:
        publisher.login(fresh_phone())
        order = publish(publisher, "before the clean stop")
    stopped_at = time.monotonic()
    assert owner.stop() == 0
    wait_until(standby.is_ready, LEASE_MS / 1000 + 5, "the standby to become ready", standby)
    takeover = time.monotonic() - stopped_at
    print(f"\ntakeover after SIGTERM of the owner: {takeover:.2f} s (lease {LEASE_MS} ms)")
    # Handed back, not expired: the standby does not wait out a lease time.
    assert "event=partition_acquired" in standby.log()
    assert takeover < LEASE_MS / 1000 + 1.0, f"took {takeover:.2f} s"
    with Client(standby.url) as client:
        client.login(fresh_phone())
        assert client.ok("order.get", {"order_id": order["id"]})["order"]["details"]["title"] == "before the clean stop"


def test_an_owner_paused_past_its_lease_is_fenced_and_exits_75(cluster):
    owner, standby = cluster
    with Client(owner.url) as publisher:
        publisher.login(fresh_phone())
        publish(publisher, "before the pause")
    owner.process.send_signal(signal.SIGSTOP)
    try:
        wait_until(standby.is_ready, LEASE_MS / 1000 + 5, "the standby to take over from the paused owner", standby)
        with Client(standby.url) as client:
            client.login(fresh_phone())
            publish(client, "on the new owner")
    finally:
        owner.process.send_signal(signal.SIGCONT)
    # Back from the pause, the old owner finds its lease gone (or its next append refused) and
    # exits for its supervisor to restart it as a standby.
    assert owner.process.wait(timeout=10) == 75
    assert re.search(r"event=(partition_lost|journal_fenced)", owner.log())


def test_under_load_a_killed_owners_publishers_resume_on_the_survivor_with_gap_free_streams(machines):
    """Publishers work on the owner without pause while it is killed with SIGKILL. Each reconnects
    to the standby once it serves and resumes from the last personal event it processed: the
    events it missed arrive under the numbers that follow, and every publish acknowledged to it
    is among its `published` events, each once. The events of publishes acknowledged just before
    the kill were numbered through the inbox; the new owner numbers them again from the journal
    and the inbox as the old one did."""
    _, (owner, standby) = machines
    publishers = Publishers(owner.url, 4, "load")
    time.sleep(2.0)
    owner.kill()
    results = publishers.finish()
    wait_until(standby.is_ready, TAKEOVER_BOUND_SECONDS + 5, "the standby to become ready", standby)
    acknowledged = assert_each_resumes_gap_free(results, standby.url)
    print(f"\n{acknowledged} publishes acknowledged by the killed owner; every one's event resumed on the survivor, "
          f"gap-free")


class Publishers:
    """Clients publishing on one node without pause, each logged in with a phone of its own,
    until told to finish or cut off by the node. Each result: the client's session token, the
    ids of the publishes acknowledged to it, the `order.changed` events it received, and the
    close code it was cut off with (None if it was not). `errors` holds the codes of the publishes
    refused, `failures` what ended a publisher other than its node closing it."""

    def __init__(self, url, count, title, drain_seconds=0, campuses=("North",), call_timeout=10):
        """With `drain_seconds`, a publisher still connected when told to finish reads on, up to
        that long, until the event of every publish acknowledged to it has arrived (events may be
        numbered well after their publish while the inbox stream elects a leader). Each publisher
        takes `campuses` in turn."""
        self.stop = threading.Event()
        self.results = [None] * count
        self.drain_seconds = drain_seconds
        self.campuses = campuses
        self.call_timeout = call_timeout
        self.lock = threading.Lock()
        self.errors = []
        self.failures = []
        self.threads = [threading.Thread(target=self._work, args=(url, index, title)) for index in range(count)]
        for thread in self.threads:
            thread.start()

    def _work(self, url, index, title):
        client = Client(url)
        client.login(fresh_phone())
        acknowledged, seen, close_code = [], [], None
        try:
            for campus in itertools.cycle(self.campuses):
                if self.stop.is_set():
                    break
                reply = client.call("order.publish", {
                    "type": "bounty", "campus": campus, "deadline": int(time.time() * 1000) + 3_600_000, "tip": 100,
                    "details": {"title": f"w{index}", "description": title}}, timeout=self.call_timeout)
                if reply["ok"]:
                    acknowledged.append(reply["data"]["order"]["id"])
                else:
                    with self.lock:
                        self.errors.append(reply["error"]["code"])
                seen += [e for e in client.events if e["event"] == "order.changed"]
                client.events.clear()
            deadline = time.monotonic() + self.drain_seconds
            while time.monotonic() < deadline:
                published = {e["data"]["order"]["id"] for e in seen if e["data"]["change"] == "published"}
                if set(acknowledged) <= published:
                    break
                try:
                    seen.append(client.wait_event(lambda e: e["event"] == "order.changed",
                                                  timeout=max(0.01, deadline - time.monotonic())))
                except TimeoutError:
                    break
        except Exception as error:  # the node went away, or told the client to
            close_code = getattr(getattr(error, "rcvd", None), "code", None)
            if close_code is None:
                with self.lock:
                    self.failures.append(repr(error))
        seen += [e for e in client.events if e["event"] == "order.changed"]
        self.results[index] = (client.token, acknowledged, seen, close_code)
        client.close()

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(30)
        return self.results


def assert_each_resumes_gap_free(results, url):
    """Each publisher's events were gap-free, and resuming on `url` from the last it processed
    brings the ones it missed under the numbers that follow: among them, the event of every
    publish acknowledged to it, each once. Returns how many publishes were acknowledged."""
    for token, acknowledged, seen, _ in results:
        assert acknowledged, "each publisher published before its node went"
        seqs = [e["seq"] for e in seen]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else True, seqs
        with Client(url) as resumed:
            last = seqs[-1] if seqs else 0
            reply = resumed.ok("auth.resume", {"token": token, "last_seq": last})
            assert reply["resync"] is False, (reply, last)
            replayed = [e for e in resumed.events if e["event"] == "order.changed"]
        assert [e["seq"] for e in replayed] == list(range(last + 1, last + 1 + len(replayed))), replayed
        published = [e["data"]["order"]["id"] for e in seen + replayed if e["data"]["change"] == "published"]
        assert len(published) == len(set(published)), "an event twice"
        missing = set(acknowledged) - set(published)
        assert not missing, f"acknowledged publishes with no event: {sorted(missing)}"
    return sum(len(result[1]) for result in results)


MOVE_BACK_MS = 3000


def rendezvous_score(partition, node):
    """The partition map's weight of (partition, node), written again from docs/scale-out.md
    (section 8): FNV-1a 64 of "<partition>|<node>", then a 64-bit finalizer."""
    mask = (1 << 64) - 1
    value = 14695981039346656037
    for byte in f"{partition}|{node}".encode():
        value = ((value ^ byte) * 1099511628211) & mask
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & mask
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & mask
    return value ^ (value >> 31)


def log_time(log, event):
    """The time, in seconds, of the last line logging `event`."""
    from datetime import datetime
    stamps = re.findall(r"ts=(\S+) level=\w+ event=" + event + r"\b", log)
    assert stamps, f"no {event} in the log"
    return datetime.strptime(stamps[-1], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def test_the_partition_moves_back_to_its_preferred_node_when_it_rejoins_under_load(tmp_path):
    """With `--move-back-ms`, the node the partition map ranks first for `p0` gets it back after
    it rejoins: killed, its partition taken over by the other node, restarted, and live for the
    move-back time, it is handed `p0` by the holder, which stops serving (clients told 1012, a
    final snapshot), deletes its lease and exits 75 for its supervisor. Publishers working on the
    holder meanwhile reconnect to the preferred node and resume gap-free, with the event of every
    publish acknowledged to them, each once."""
    preferred_name, other_name = sorted(["bb1", "bb2"], key=lambda name: rendezvous_score("p0", name), reverse=True)
    extra = ["--move-back-ms", str(MOVE_BACK_MS)]
    nats = NatsCluster.start()
    ports = free_ports(2)
    nodes = []
    try:
        preferred = Node(preferred_name, ports[0], str(tmp_path), nats.urls, extra=extra)
        nodes.append(preferred)
        wait_until(preferred.is_ready, 20, "the preferred node to own the partition", preferred)
        other = Node(other_name, ports[1], str(tmp_path), nats.urls, extra=extra)
        nodes.append(other)
        wait_until(lambda: "cluster_joined" in other.log(), 20, "the other node to join", other)
        with Client(preferred.url) as client:
            client.login(fresh_phone())
            before = publish(client, "before the preferred node went away")

        preferred.kill()
        wait_until(other.is_ready, TAKEOVER_BOUND_SECONDS + 5, "the other node to take the partition over", other)

        publishers = Publishers(other.url, 3, "moving back")
        time.sleep(0.5)
        rejoined_at = time.monotonic()
        preferred = Node(preferred_name, ports[0], str(tmp_path), nats.urls, extra=extra)
        nodes.append(preferred)
        # Live for the move-back time, then handed the partition: the holder exits 75.
        assert other.process.wait(timeout=MOVE_BACK_MS / 1000 + 20) == 75, other.log()
        exited_at = time.monotonic()
        wait_until(preferred.is_ready, LEASE_MS / 1000 + 5, "the preferred node to serve again", preferred)
        moved = time.monotonic() - exited_at
        results = publishers.finish()
        print(f"\npartition moved back {exited_at - rejoined_at:.2f} s after the rejoin (move-back {MOVE_BACK_MS} ms); "
              f"served by the preferred node {moved:.2f} s after the holder exited")
        assert exited_at - rejoined_at >= MOVE_BACK_MS / 1000, "handed back before the rejoined node was live long enough"
        # Taken at once, not after the lease expired.
        assert moved < LEASE_MS / 1000, f"took {moved:.2f} s"
        log = other.log()
        assert "event=partition_handing_back" in log and "event=partition_handed_back" in log, log
        assert "event=partition_lost" not in log
        stopping = log_time(log, "partition_handing_back")
        serving_logged(preferred)
        serving = log_time(preferred.log(), "partition_serving")
        print(f"no node served the partition for {serving - stopping:.2f} s (from the holder beginning to stop to the "
              f"preferred node serving, by their logs)")

        assert [result[3] for result in results] == [1012] * len(results), "publishers not told to come back"
        acknowledged = assert_each_resumes_gap_free(results, preferred.url)
        with Client(preferred.url) as client:
            client.login(fresh_phone())
            assert client.ok("order.get", {"order_id": before["id"]})["order"]["id"] == before["id"]
        print(f"{acknowledged} publishes acknowledged by the holder; every one's event resumed on the preferred node, "
              f"gap-free")
    finally:
        for node in nodes:
            node.stop()
        nats.stop()
