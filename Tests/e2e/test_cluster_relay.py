"""Clients on any node (docs/scale-out.md, 7a): three Bangbang nodes over a 3-node NATS
JetStream cluster, one owning the partition and two standbys relaying their clients' WebSocket
messages to it. Clients on different nodes see each other's orders live (the feed, the accept,
the progress), an accept race spread across all three nodes has exactly one winner, and when the
owner goes away the relayed clients are told to reconnect with 1012 and resume on the new
owner."""
import json
import threading
import time

import pytest

from bbclient import Client, fresh_phone
from nats_cluster import NatsCluster, NatsSubscriber, nats_request
from test_cluster_failover import LEASE_MS, publish, start_three_nodes, wait_until

ADMIN_PHONE = "+8613000000000"


@pytest.fixture(params=["relay"])
def nodes(request, tmp_path):
    """Three nodes; the non-owners relay their clients (the default) or, parametrized with
    "node", run their sessions themselves (`--cluster-sessions node`, docs/scale-out.md 2c); with
    "mixed", the second runs them and the third relays, as in a cluster switching one node at a
    time."""
    modes = {"mixed": ["relay", "node", "relay"]}.get(request.param, [request.param] * 3)
    nats = NatsCluster.start()
    started = []
    try:
        start_three_nodes(started, str(tmp_path), nats, modes, ADMIN_PHONE)
        yield started
    finally:
        for node in started:
            node.stop()
        nats.stop()


def logged_in(node, phone=None):
    client = Client(node.url)
    client.login(phone or fresh_phone())
    return client


def approve(runner, admin):
    runner.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": f"S{runner.user['id']}",
                                             "school": "North"})
    admin.ok("admin.decide_verification", {"user_id": runner.user["id"], "decision": "approve"})
    runner.wait_event(lambda e: e["event"] == "runner.verification_decided")
    return runner


def metric(node, name):
    """The value of `name` on the node's /metrics, or None when absent."""
    status, body, _ = node.http("/metrics")
    assert status == 200
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def check_sessions_ran_where_configured(request, second, third):
    """A standby running its clients' sessions pushed to them and relayed nothing; a relaying one
    the reverse. In "mixed" the second runs them and the third relays."""
    mode = request.node.callspec.params["nodes"]
    for standby, runs_sessions in ((second, mode != "relay"), (third, mode == "node")):
        pushes = metric(standby, "bangbang_pushes_sent_total")
        relayed = metric(standby, "bangbang_relay_frames_total{direction=\"out\"}")
        if runs_sessions:
            assert pushes > 0 and not relayed, (standby.name, pushes, relayed)
        else:
            assert not pushes and relayed > 0, (standby.name, pushes, relayed)


def changed(order_id, change):
    return lambda e: (e["event"] == "order.changed" and e["data"]["order"]["id"] == order_id
                      and e["data"]["change"] == change)


@pytest.mark.parametrize("nodes", ["relay", "node", "mixed"], indirect=True)
def test_clients_on_different_nodes_see_each_others_orders_live(nodes, request):
    owner, second, third = nodes
    admin = logged_in(second, ADMIN_PHONE)
    runner = approve(logged_in(second), admin)
    publisher = logged_in(third)
    try:
        runner.ok("board.subscribe", {"types": ["bounty"]})
        order = publish(publisher, "relayed from bb3")
        entered = runner.wait_event(lambda e: e["event"] == "feed.enter" and e["data"]["order"]["id"] == order["id"])
        assert entered["data"]["order"]["details"]["title"] == "relayed from bb3"
        assert runner.ok("order.accept", {"order_id": order["id"]})["order"]["status"] == "accepted"
        publisher.wait_event(changed(order["id"], "accepted"))
        runner.ok("order.start", {"order_id": order["id"]})
        publisher.wait_event(changed(order["id"], "in_progress"))
        # And the owner's own clients are in the same world.
        with Client(owner.url) as local:
            local.login(fresh_phone())
            assert local.ok("order.get", {"order_id": order["id"]})["order"]["status"] == "in_progress"
        check_sessions_ran_where_configured(request, second, third)
    finally:
        for client in (admin, runner, publisher):
            client.close()


@pytest.mark.parametrize("nodes", ["relay", "node", "mixed"], indirect=True)
def test_an_accept_race_across_all_three_nodes_has_exactly_one_winner(nodes):
    admin = logged_in(nodes[0], ADMIN_PHONE)
    runners = [approve(logged_in(node), admin) for node in nodes for _ in range(2)]
    publisher = logged_in(nodes[1])
    try:
        for round_number in range(5):
            order = publish(publisher, f"race {round_number}")
            replies = [None] * len(runners)
            start = threading.Barrier(len(runners))

            def race(index):
                start.wait()
                replies[index] = runners[index].call("order.accept", {"order_id": order["id"]})

            threads = [threading.Thread(target=race, args=(index,)) for index in range(len(runners))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(15)
            winners = [reply for reply in replies if reply and reply["ok"]]
            losers = [reply for reply in replies if reply and not reply["ok"]]
            assert len(winners) == 1, replies
            assert len(losers) == len(runners) - 1 and all(r["error"]["code"] == "order_taken" for r in losers), replies
            runner_id = winners[0]["data"]["order"]["runner"]
            assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["runner"] == runner_id
    finally:
        for client in runners + [admin, publisher]:
            client.close()


def test_relayed_clients_reconnect_with_1012_when_the_owner_goes_away(nodes):
    owner, second, third = nodes
    relayed = logged_in(second)
    token = relayed.token
    try:
        owner.kill()
        started = time.monotonic()
        with pytest.raises(Exception) as ended:
            relayed.receive(timeout=LEASE_MS / 1000 + 10)
        received = getattr(ended.value, "rcvd", None)
        assert received is not None and received.code == 1012, repr(ended.value)
        print(f"\nrelayed client told 1012 after {time.monotonic() - started:.2f} s")
        new_owner = wait_until(lambda: next((n for n in (second, third) if n.is_ready()), None), LEASE_MS / 1000 + 10,
                               "a standby to take over")
        other = third if new_owner is second else second
        # The client reconnects to whichever node and resumes its session there.
        for node in (new_owner, other):
            resumed = wait_until(lambda: _resume(node, token), 10, f"a resume on {node.name}", node)
            assert resumed["user"]["id"] == relayed.user["id"]
    finally:
        relayed.close()


def _resume(node, token):
    try:
        with Client(node.url) as client:
            reply = client.call("auth.resume", {"token": token})
            return reply["data"] if reply["ok"] else None
    except Exception:
        return None


def routed(nats, partition, request):
    """A request another node routes to `partition`'s owner (docs/scale-out.md, 7b), sent here
    over a raw NATS connection: the answer's status byte (0 answered) and its reply message."""
    answer = nats_request(nats.client_ports[0], f"bb.req.{partition}", json.dumps(request).encode(), timeout=5)
    return answer[0], json.loads(answer[1:])


def test_the_owner_answers_the_requests_other_nodes_route_to_its_partitions(nodes):
    """The owner answers `bb.req.p0` (orders) and `bb.req.a0` (accounts) for a user another node
    holds the connection of: what it does there is the world every client sees, live."""
    owner, second, _ = nodes
    nats = owner.nats
    publisher = logged_in(owner)
    watcher = logged_in(second)
    # The owner publishes each personal event it numbers on its user's subject.
    user_events = NatsSubscriber(nats.client_ports[1], "bb.user.>")
    # ... and each board change on its board's feed subject.
    feed_changes = NatsSubscriber(nats.client_ports[2], "bb.feed.>")
    try:
        actor = {"user": publisher.user["id"], "runner": False}
        status, edited = routed(nats, "a0", {"id": 1, "op": "profile.update", "data": {"nickname": "Routed Li"},
                                             "actor": actor})
        assert status == 0 and edited["ok"] and edited["id"] == 1, edited
        assert edited["data"]["user"]["nickname"] == "Routed Li"
        assert publisher.ok("profile.get")["user"]["nickname"] == "Routed Li"

        watcher.ok("board.subscribe", {"types": ["bounty"]})
        deadline = int(time.time() * 1000) + 3_600_000
        status, published = routed(nats, "p0", {"id": "p", "op": "order.publish", "actor": actor, "data": {
            "type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
            "details": {"title": "routed to the owner", "description": "e2e"}}})
        assert status == 0 and published["ok"], published
        order = published["data"]["order"]
        assert order["publisher"] == publisher.user["id"]
        entered = watcher.wait_event(lambda e: e["event"] == "feed.enter" and e["data"]["order"]["id"] == order["id"])
        assert entered["data"]["order"]["details"]["title"] == "routed to the owner"
        assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["status"] == "open"
        told = publisher.wait_event(lambda e: e["event"] == "order.changed" and e["data"]["order"]["id"] == order["id"])
        user = publisher.user["id"]

        def is_that_event(subject, payload):
            return (len(payload) > 16 and int.from_bytes(payload[:8], "big") == user
                    and int.from_bytes(payload[8:16], "big") == told["seq"])
        subject, payload = user_events.wait_for(is_that_event)
        assert subject == f"bb.user.{user % 4096}"
        assert json.loads(payload[16:]) == told, "the event as the user's device got it"
        subject, change = feed_changes.wait_for(lambda subject, payload: b"routed to the owner" in payload)
        assert subject == "bb.feed.p0.bounty"
        partition, sequence = int.from_bytes(change[:2], "big"), int.from_bytes(change[2:10], "big")
        assert partition == 0 and sequence == entered["seq"], (partition, sequence, entered["seq"])
        assert int.from_bytes(change[10:14], "big") == 0, "a new order has no state before"

        # Each partition runs only what it decides; what it refuses changes nothing.
        status, refused = routed(nats, "p0", {"id": 2, "op": "profile.update", "data": {"nickname": "Nope"},
                                              "actor": actor})
        assert status == 0 and refused["error"]["code"] == "unknown_operation", refused
        status, refused = routed(nats, "a0", {"id": 3, "op": "board.subscribe", "actor": actor, "data": {"types": ["bounty"]}})
        assert refused["error"]["code"] == "unknown_operation", refused
        assert publisher.ok("profile.get")["user"]["nickname"] == "Routed Li"

        # The owner counts what it answered for other nodes, by partition.
        _, metrics, _ = owner.http("/metrics")
        assert 'bangbang_routed_requests_total{partition="a0"} 2' in metrics, metrics
        assert 'bangbang_routed_requests_total{partition="p0"} 2' in metrics, metrics
        published = [line for line in metrics.splitlines() if line.startswith("bangbang_user_events_published_total ")]
        assert published and int(published[0].split()[1]) >= 1, metrics
    finally:
        user_events.close()
        feed_changes.close()
        publisher.close()
        watcher.close()
