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
import threading
import time

import websockets.exceptions

from bbclient import Client, fresh_phone
from nats_cluster import NatsCluster, free_ports
from test_cluster_failover import Node, Publishers, assert_each_resumes_gap_free, wait_until
from test_cluster_nats_loss import (CALL_TIMEOUT, LEASE_MS, STALL_BOUND_SECONDS, Recorder, approve,
                                    assert_each_order_there_once, kill_while_working, publisher_loop, runner_loop, stop_all)
from test_cluster_partitions import ADMIN_PHONE, PAIRS, campus_in, preferred, serves

ALLOWED_ERRORS = {"storage_unavailable"}


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
        workers = [threading.Thread(target=resuming, args=("racing publisher", publisher_loop(campuses), publisher,
                                                           nodes[0].url, record, stop, clients))]
        workers += [threading.Thread(target=resuming, args=(f"runner {index}", runner_loop(), runner, nodes[index + 1].url,
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
        killed_at = kill_while_working(nats, victim, stop, workers)
        results = [result for publishers in streams for result in publishers.finish()]
        ended = time.monotonic()
        published, accepted, errors, disconnected = record.seen()
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
        assert_each_resumes_gap_free(results, nodes[2].url)
        ids = [order_id for _, order_id in published] + [order_id for result in results for order_id in result[1]]
        assert len(ids) == len(set(ids)), "an order id acknowledged twice"
        assert_each_order_there_once(nodes[1].url, ids, accepted, runners)
    finally:
        stop_all(clients, nodes, nats)
