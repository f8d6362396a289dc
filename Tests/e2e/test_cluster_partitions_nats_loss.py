"""Losing a NATS server under load with the pairs spread over the nodes (`--partitions 4`,
docs/scale-out.md 2d and section 12): 3 NATS servers and 3 Bangbang nodes, each owning the pairs
the placement gives it. Publishers on every node publish on campuses of every pair without pause,
and two runners on different nodes race to accept each order of one more publisher; the NATS
server leading the most of the pairs' streams (journals `BB_P<k>` and `BB_A<k>`, inboxes
`BB_I<k>`) is killed with SIGKILL and the work goes on. A request routed through that server
at that moment is lost with it, and its outcome is unknown: the client is told 1012, each logged,
and resumes as the app does. Then: every node still owns its pairs, no connection was cut
otherwise, the only errors clients saw are `storage_unavailable` and the race's `order_taken`, publishes succeed again within the stated bound, every acknowledged publish is an
order once and no order was acknowledged to two runners, and every publisher's personal stream is
gap-free and resumes with the event of each of its publishes."""
import itertools
import threading
import time

import websockets.exceptions

from bbclient import Client, fresh_phone
from nats_cluster import NatsCluster, free_ports
from test_cluster_failover import Node, Publishers, assert_each_resumes_gap_free, wait_until
from test_cluster_nats_loss import CALL_TIMEOUT, LEASE_MS, STALL_BOUND_SECONDS, WORK_AFTER_KILL, Recorder, approve, runner_id
from test_cluster_partitions import ADMIN_PHONE, PAIRS, campus_in, preferred, serves

ALLOWED_ERRORS = {"storage_unavailable"}


def racing_publisher(campuses):
    """A publisher whose orders the runners race for, taking `campuses` in turn."""
    def loop(client, record, stop):
        deadline = int(time.time() * 1000) + 3_600_000
        for index, campus in enumerate(itertools.cycle(campuses)):
            if stop.is_set():
                return
            reply = client.call("order.publish", {"type": "bounty", "campus": campus, "deadline": deadline, "tip": 100,
                                                  "details": {"title": f"race {index}", "description": "nats loss"}},
                                timeout=CALL_TIMEOUT)
            if reply["ok"]:
                with record.lock:
                    record.published.append((time.monotonic(), reply["data"]["order"]["id"]))
            else:
                record.error("order.publish", reply["error"]["code"])
                time.sleep(0.05)
    return loop


def race_runner():
    """Accepts every order the racing publisher made, in order, as the other runner does; where
    it got to outlasts a reconnection."""
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


def resuming(name, loop, client, url, record, stop, clients):
    """Runs `loop`; when the node tells the client 1012 (a request's outcome is unknown), opens a
    new connection to `url` and resumes the session with its token, as the app does, and goes on.
    Any other end of the connection is recorded as a disconnection."""
    while True:
        try:
            return loop(client, record, stop)
        except (websockets.exceptions.ConnectionClosed, OSError, TimeoutError) as error:
            code = getattr(getattr(error, "rcvd", None), "code", None)
            with record.lock:
                record.closes.append((name, code))
            if code != 1012:
                with record.lock:
                    record.disconnected.append(name)
                return
            resumed = Client(url)
            clients.append(resumed)
            resumed.ok("auth.resume", {"token": client.token})
            resumed.user, resumed.token = client.user, client.token
            client = resumed


def test_losing_the_nats_server_leading_most_pairs_streams_loses_nothing(tmp_path):
    nats = NatsCluster.start()
    nodes, clients = [], []
    try:
        for index, port in enumerate(free_ports(3)):
            node = Node(f"bb{index + 1}", port, str(tmp_path), nats.urls, lease_ms=LEASE_MS,
                        extra=["--admin-phone", ADMIN_PHONE, "--partitions", str(PAIRS)])
            nodes.append(node)
            wait_until(node.is_ready, 20, f"{node.name} to serve sessions", node)
        # Each pair moves to the node the placement gives it a lease time after that node is live.
        for pair in range(PAIRS):
            owner = preferred(pair, nodes)
            wait_until(lambda: serves(owner, pair), 4 * LEASE_MS / 1000, f"pair {pair} on {owner.name}", owner)

        administrator = Client(nodes[0].url)
        clients.append(administrator)
        administrator.login(ADMIN_PHONE, device="admin")
        runners = []
        for node in nodes[1:]:
            runner = Client(node.url)
            clients.append(runner)
            runner.login(fresh_phone())
            approve(node.url, administrator, runner)
            runners.append(runner)
        publisher = Client(nodes[0].url)
        clients.append(publisher)
        publisher.login(fresh_phone())

        campuses = [campus_in(pair) for pair in range(PAIRS)]
        record = Recorder()
        record.closes = []
        stop = threading.Event()
        workers = [threading.Thread(target=resuming, args=("racing publisher", racing_publisher(campuses), publisher,
                                                           nodes[0].url, record, stop, clients))]
        workers += [threading.Thread(target=resuming, args=(f"runner {index}", race_runner(), runner, nodes[index + 1].url,
                                                            record, stop, clients))
                    for index, runner in enumerate(runners)]
        for worker in workers:
            worker.start()
        streams = [Publishers(node.url, 2, "nats loss", drain_seconds=20, campuses=campuses, call_timeout=CALL_TIMEOUT)
                   for node in nodes]
        time.sleep(3.0)

        names = [f"BB_{kind}{pair}" for pair in range(PAIRS) for kind in "PAI"]
        leaders = [nats.stream_leader(name) for name in names]
        victim = max(set(leaders), key=leaders.count)
        led = [name for name, leader in zip(names, leaders) if leader == victim]
        killed_at = time.monotonic()
        nats.kill(victim)
        time.sleep(WORK_AFTER_KILL)
        stop.set()
        for worker in workers:
            worker.join(timeout=CALL_TIMEOUT + 5)
        results = [result for publishers in streams for result in publishers.finish()]
        ended = time.monotonic()

        with record.lock:
            published = list(record.published)
            accepted = dict(record.accepted)
            errors = list(record.errors)
            disconnected = list(record.disconnected)
            race_closes = [code for _, code in record.closes]
        errors += [("order.publish", code) for publishers in streams for code in publishers.errors]
        failures = [failure for publishers in streams for failure in publishers.failures]
        closed = [code for _, _, _, code in results if code is not None] + race_closes
        before = [at for at, _ in published if at < killed_at]
        after = [at for at, _ in published if at >= killed_at]
        times = before[-1:] + after + [ended]
        stall = max(later - earlier for earlier, later in zip(times, times[1:]))
        acknowledged = sum(len(result[1]) for result in results) + len(published)
        print(f"\nNATS n{victim + 1} (leader of {', '.join(led)}) killed; {acknowledged} publishes acknowledged, "
              f"{len(after)} of the race's after the kill; longest gap between its publishes {stall:.2f} s; "
              f"errors seen: {sorted(set(errors)) or 'none'}; clients told 1012: {len(closed)}")

        assert all(node.process.poll() is None for node in nodes), "a node gave up its pairs and exited"
        assert all(serves(preferred(pair, nodes), pair) for pair in range(PAIRS)), "a pair moved"
        assert {code for _, code in errors} <= ALLOWED_ERRORS, f"unexpected errors: {errors}"
        assert not disconnected and not failures and set(closed) <= {1012}, (disconnected, failures, closed)
        unknown = sum(node.log().count("event=routed_outcome_unknown") for node in nodes)
        assert unknown == len(closed), f"{len(closed)} clients told 1012, {unknown} unknown outcomes logged"
        assert before and after, "the race published on both sides of the kill"
        assert stall < STALL_BOUND_SECONDS, f"publishes stalled {stall:.2f} s, bound {STALL_BOUND_SECONDS} s"
        for order_id, runners_acknowledged in accepted.items():
            assert len(runners_acknowledged) == 1, f"order {order_id} acknowledged to {runners_acknowledged}"
        assert_each_resumes_gap_free(results, nodes[2].url)
        ids = [order_id for _, order_id in published] + [order_id for result in results for order_id in result[1]]
        assert len(ids) == len(set(ids)), "an order id acknowledged twice"
        with Client(nodes[1].url) as checker:
            checker.login(fresh_phone())
            for order_id in ids:
                reply = checker.call("order.get", {"order_id": order_id}, timeout=CALL_TIMEOUT)
                assert reply["ok"], f"acknowledged order {order_id} is gone: {reply}"
                order = reply["data"]["order"]
                if order_id in accepted:
                    assert order["status"] == "accepted" and runner_id(order) == accepted[order_id][0], order
                else:
                    assert order["status"] == "open" or runner_id(order) in {r.user["id"] for r in runners}, order
    finally:
        for client in clients:
            try:
                client.close()
            except Exception:
                pass
        for node in nodes:
            node.stop()
        nats.stop()
