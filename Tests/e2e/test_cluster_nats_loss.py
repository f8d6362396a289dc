"""Losing a NATS server under load (issue 15, docs/scale-out.md section 12): 3 NATS servers, an
owner and a standby. A publisher and two runners work on the owner without pause, the runners
racing to accept every order; the NATS server that leads the journal stream BB_P0 is killed with
SIGKILL and the work goes on for several seconds. Then: every acknowledged publish is there, no
order was acknowledged to two runners or has a runner other than the acknowledged one, publishes
succeed again within a stated bound (the stall is printed), and the only errors clients saw are
`storage_unavailable` and the race's `order_taken`.

In the second case the same server also leads the leases bucket (the nodes bucket is led
elsewhere): every renewal stalls until the bucket elects a leader, longer than a third of the
lease, while the owner's heartbeats still land, so the owner must keep its partition. In the
third, the test puts the nodes bucket's leader on that server too: the owner moves it elsewhere
within a few seconds (`cluster_leaders_separated`), and then the kill is the second case. In
every case the owner keeps its partition: no placement of leaders leaves one server leading both
the renewals and the heartbeats for longer than the owner's check takes."""
import itertools
import threading
import time

import pytest
import websockets.exceptions

from bbclient import ADMIN_PHONE, Client, fresh_phone
from nats_cluster import NatsCluster, free_ports
from test_cluster_failover import Node, publish, wait_until
from test_orders_support import DECIDE_OP, SUBMIT_OP

# Longer than a NATS raft election (2 to 5 s in nats-server 2.9): the lease bucket may be led by
# the server that dies, and renewals cannot land until it has a new leader.
LEASE_MS = 6000
WORK_BEFORE_KILL = 3.0
WORK_AFTER_KILL = 14.0
# A new stream leader (up to about 5 s), the 2 s bound on the attempt lost with the old one, the
# retry backoff, and room for a slow shared machine.
STALL_BOUND_SECONDS = 12.0
CALL_TIMEOUT = 20
ALLOWED_ERRORS = {"storage_unavailable"}


class Recorder:
    """What the workers saw, under one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.published = []          # (finished_at, order_id)
        self.accepted = {}           # order_id -> [runner user id, ...] acknowledged
        self.errors = []             # (op, code)
        self.disconnected = []       # worker names whose connection ended

    def error(self, op, code):
        with self.lock:
            self.errors.append((op, code))

    def seen(self):
        """(published, accepted, errors, disconnected), copied under the lock."""
        with self.lock:
            return list(self.published), dict(self.accepted), list(self.errors), list(self.disconnected)


def kill_while_working(nats, index, stop, workers):
    """Kills NATS server `index` with SIGKILL, lets the workers go on for WORK_AFTER_KILL seconds,
    stops them and waits for them; returns when the kill was."""
    killed_at = time.monotonic()
    nats.kill(index)
    time.sleep(WORK_AFTER_KILL)
    stop.set()
    for worker in workers:
        worker.join(timeout=CALL_TIMEOUT + 5)
    return killed_at


def approve(owner_url, administrator, runner):
    submitted = runner.call(SUBMIT_OP, {"real_name": "Li Lei", "student_id": f"S{runner.user['id']}", "school": "North"})
    assert submitted["ok"], submitted
    decided = administrator.call(DECIDE_OP, {"user_id": runner.user["id"], "decision": "approve"})
    assert decided["ok"], decided
    runner.wait_event(lambda e: e["event"] == "runner.verification_decided")


def runner_id(order):
    runner = order.get("runner")
    return runner.get("id") if isinstance(runner, dict) else runner


def publisher_loop(campuses=("North",)):
    """A publisher without pause, taking `campuses` in turn; the runners race for its orders."""
    def loop(client, record, stop):
        deadline = int(time.time() * 1000) + 3_600_000
        for index, campus in enumerate(itertools.cycle(campuses), start=1):
            if stop.is_set():
                return
            reply = client.call("order.publish", {"type": "bounty", "campus": campus, "deadline": deadline, "tip": 100,
                                                  "details": {"title": f"load {index}", "description": "nats loss"}},
                                timeout=CALL_TIMEOUT)
            if reply["ok"]:
                with record.lock:
                    record.published.append((time.monotonic(), reply["data"]["order"]["id"]))
            else:
                record.error("order.publish", reply["error"]["code"])
                time.sleep(0.05)
    return loop


def runner_loop():
    """A runner accepting every order the publisher made, in order, as the other runner does;
    where it got to outlasts a reconnection."""
    progress = {"taken": 0}

    def loop(client, record, stop):
        while not stop.is_set():
            with record.lock:
                pending = [order_id for _, order_id in record.published[progress["taken"]:]]
            if not pending:
                time.sleep(0.005)
                continue
            for order_id in pending:
                progress["taken"] += 1
                reply = client.call("order.accept", {"order_id": order_id}, timeout=CALL_TIMEOUT)
                if reply["ok"]:
                    with record.lock:
                        record.accepted.setdefault(order_id, []).append(client.user["id"])
                elif reply["error"]["code"] != "order_taken":
                    record.error("order.accept", reply["error"]["code"])
                if stop.is_set():
                    return
    return loop


def assert_each_order_there_once(url, order_ids, accepted, runners):
    """No order was acknowledged to two runners, and every acknowledged publish is an order: one
    acknowledged to a runner is that runner's, any other open or taken by a racing runner whose
    reply was lost."""
    for order_id, runners_acknowledged in accepted.items():
        assert len(runners_acknowledged) == 1, f"order {order_id} acknowledged to {runners_acknowledged}"
    with Client(url) as checker:
        checker.login(fresh_phone())
        for order_id in order_ids:
            reply = checker.call("order.get", {"order_id": order_id}, timeout=CALL_TIMEOUT)
            assert reply["ok"], f"acknowledged order {order_id} is gone: {reply}"
            order = reply["data"]["order"]
            if order_id in accepted:
                assert runner_id(order) == accepted[order_id][0] and order["status"] == "accepted", f"order {order_id}: {order}"
            else:
                assert order["status"] == "open" or runner_id(order) in {r.user["id"] for r in runners}, order


def stop_all(clients, nodes, nats):
    for client in clients:
        try:
            client.close()
        except Exception:
            pass
    for node in nodes:
        node.stop()
    nats.stop()


def work(name, loop, client, record, stop):
    try:
        loop(client, record, stop)
    except (websockets.exceptions.ConnectionClosed, OSError, TimeoutError):
        with record.lock:
            record.disconnected.append(name)


@pytest.mark.parametrize("placement", ["journal", "journal-and-leases", "journal-leases-and-nodes"])
def test_killing_the_nats_server_that_leads_the_journal_loses_nothing_acknowledged(tmp_path, placement):
    nats = NatsCluster.start()
    ports = free_ports(2)
    extra = ("--admin-phone", ADMIN_PHONE)
    nodes = []
    clients = []
    try:
        nodes.append(Node("bb1", ports[0], str(tmp_path), nats.urls, lease_ms=LEASE_MS, extra=extra))
        wait_until(nodes[0].is_ready, 20, "the first node to own the partition", nodes[0])
        nodes.append(Node("bb2", ports[1], str(tmp_path), nats.urls, lease_ms=LEASE_MS, extra=extra))
        wait_until(lambda: "cluster_joined" in nodes[1].log(), 20, "the second node to join", nodes[1])
        owner = nodes[0]  # nodes[1] stands by: it would take the partition if the owner's lease lapsed

        administrator = Client(owner.url)
        clients.append(administrator)
        administrator.login(ADMIN_PHONE, device="admin")
        publisher = Client(owner.url)
        clients.append(publisher)
        publisher.login(fresh_phone())
        runners = []
        for _ in range(2):
            runner = Client(owner.url)
            clients.append(runner)
            runner.login(fresh_phone())
            approve(owner.url, administrator, runner)
            runners.append(runner)
        publish(publisher, "before the load")

        record = Recorder()
        stop = threading.Event()
        workers = [threading.Thread(target=work, args=("publisher", publisher_loop(), publisher, record, stop))]
        workers += [threading.Thread(target=work, args=(f"runner{i}", runner_loop(), r, record, stop))
                    for i, r in enumerate(runners)]
        for worker in workers:
            worker.start()
        time.sleep(WORK_BEFORE_KILL)
        if placement == "journal-and-leases":
            leader = nats.arrange_leaders(["BB_P0", "KV_bb-leases"], apart=["KV_bb-nodes"])
        elif placement == "journal-leases-and-nodes":
            leader = nats.arrange_leaders(["BB_P0", "KV_bb-leases", "KV_bb-nodes"], apart=[])
            wait_until(lambda: nats.stream_leader("KV_bb-nodes") != leader, 15,
                       "the owner to move the nodes bucket's leader off the leases bucket's server", owner)
            assert "event=cluster_leaders_separated" in owner.log()
            assert nats.stream_leader("KV_bb-leases") == leader and nats.stream_leader("BB_P0") == leader
        else:
            leader = nats.stream_leader("BB_P0")
        also_led = [s for s in ("KV_bb-leases", "KV_bb-nodes") if nats.stream_leader(s) == leader]
        killed_at = kill_while_working(nats, leader, stop, workers)
        ended = time.monotonic()
        published, accepted, errors, disconnected = record.seen()
        before = [t for t, _ in published if t < killed_at]
        after = [t for t, _ in published if t >= killed_at]
        assert before, "nothing was published before the kill"
        times = [before[-1]] + after + [ended]
        stall = max(b - a for a, b in zip(times, times[1:]))
        owner_survived = owner.process.poll() is None
        print(f"\nNATS n{leader + 1} (leader of BB_P0{''.join(', ' + s for s in also_led)}) killed after {len(before)} publishes; "
              f"{len(after)} more in {WORK_AFTER_KILL:.0f} s after it; longest gap between publishes {stall:.2f} s; "
              f"owner {'kept the partition' if owner_survived else f'exited {owner.process.returncode}'}; "
              f"errors seen: {sorted(set(errors)) or 'none'}")

        if not owner_survived:
            print("why the owner left:", *(line for line in owner.log().splitlines()
                                            if "event=journal_" in line or "event=partition_lost" in line), sep="\n  ")
        assert {code for _, code in errors} <= ALLOWED_ERRORS, f"unexpected errors: {errors}"
        assert owner_survived, "the owner gave up its partition while its heartbeats or renewals still landed"
        assert not disconnected, f"connections to a surviving owner ended: {disconnected}"
        assert after, "no publish succeeded after the kill"
        assert stall < STALL_BOUND_SECONDS, f"publishes stalled {stall:.2f} s, bound {STALL_BOUND_SECONDS} s"
        serving = owner

        assert_each_order_there_once(serving.url, [order_id for _, order_id in published], accepted, runners)
    finally:
        stop_all(clients, nodes, nats)
