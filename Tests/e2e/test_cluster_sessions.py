"""Sessions run on the node that holds the connection (`--cluster-sessions node`,
docs/scale-out.md 2c): three Bangbang nodes over a 3-node NATS cluster, the owner serving its
own clients and the other two running theirs themselves, each request routed to the owner and
the user's stream and the boards followed over NATS. A resume there gets what it missed, then
its reply, then what follows; a session logged out from another device is logged out there too;
and a session on a node that does not take over outlives the owner's death: it is neither
closed nor missing an event."""
import json
import os
import re
import time

import pytest

from bbclient import Client, fresh_phone
from nats_cluster import NatsCluster
from test_cluster_failover import (LEASE_MS, Publishers, assert_each_resumes_gap_free, publish,
                                  start_three_nodes, wait_until)
from test_cluster_nats_loss import LEASE_MS as NATS_LOSS_LEASE_MS

ADMIN_PHONE = "+8613000000000"


def three_nodes(directory, lease_ms=LEASE_MS):
    nats = NatsCluster.start()
    started = []
    try:
        start_three_nodes(started, directory, nats, ["node"] * 3, ADMIN_PHONE, lease_ms=lease_ms)
        yield started
    finally:
        for node in started:
            node.stop()
        nats.stop()


@pytest.fixture
def nodes(tmp_path):
    yield from three_nodes(str(tmp_path))


@pytest.fixture
def nodes_outlasting_an_election(tmp_path):
    """With a lease longer than a NATS raft election (2 to 5 s in nats-server 2.9), as section 12
    asks of a deployment that should keep its owner through the loss of a NATS server: the owner
    keeps `p0` whichever server led the leases bucket."""
    yield from three_nodes(str(tmp_path), lease_ms=NATS_LOSS_LEASE_MS)


PASSWORD = "correct horse battery"


def second_device(client, node_url, phone, device):
    """Another device of `client`'s user, logged in by password on `node_url` (a code per phone
    per minute)."""
    client.ok("auth.set_password", {"password": PASSWORD})
    other = Client(node_url)
    data = other.ok("auth.login_password", {"phone": phone, "password": PASSWORD, "device": device})
    other.user, other.token = data["user"], data["token"]
    return other


def messages_until_reply(client, request_id, timeout=10):
    """Every message up to and including the reply to `request_id`, in the order received."""
    received = []
    deadline = time.monotonic() + timeout
    while True:
        message = client.receive(timeout=max(0.01, deadline - time.monotonic()))
        received.append(message)
        if message.get("id") == request_id:
            return received


def test_a_node_session_answers_what_a_session_on_the_owner_answers(nodes, tmp_path):
    _, second, _ = nodes
    with Client(second.url) as client:
        # Answered here: the same info as the owner's, refusals in the protocol's order.
        with Client(nodes[0].url) as local:
            assert client.ok("info.get") == local.ok("info.get")
            for op, data, code in [("info.get", {"extra": 1}, "invalid_field"), ("order.teleport", None, "unknown_operation"),
                                   ("order.publish", {"type": "bounty"}, "unauthenticated"),
                                   ("board.subscribe", {"types": ["bounty"]}, "unauthenticated")]:
                assert client.error(op, data)["code"] == local.error(op, data)["code"] == code, op
        # The node takes its own admin secret, and sends the commands to the owner as the
        # built-in administrator's.
        assert client.error("auth.admin_secret", {"secret": "x" * 64})["code"] == "unauthenticated"
        with Client(second.url) as operator:
            secret = open(os.path.join(str(tmp_path), f"{second.name}-data", "admin-secret")).read().strip()
            assert operator.ok("auth.admin_secret", {"secret": secret})["administrator"] == 0
            assert "users" in operator.ok("admin.pending_verifications")
            # The owner counts the node's connections (this one and the client's) from its report.
            wait_until(lambda: (operator.ok("admin.stats")["connections"], operator.ok("admin.stats")["users_online"]) == (2, 0),
                       10, "the node's two connections counted by the owner")
            assert operator.error("profile.get")["code"] == "forbidden"
        client.send_raw("not json")
        assert client.receive()["error"]["code"] == "bad_request"
        # Routed: the owner's refusal is the reply.
        assert client.error("auth.login_code", {"phone": fresh_phone(), "code": "000000"})["code"] in ("code_invalid", "code_expired")
        client.login(fresh_phone())
        assert client.error("board.subscribe", {"types": ["spaceship"]})["code"] == "invalid_field"
        assert client.ok("board.subscribe", {"types": ["bounty"]})["orders"] is not None
        assert client.ok("board.unsubscribe") == {}
        sessions = client.ok("auth.sessions")["sessions"]
        assert [s["is_current"] for s in sessions] == [True]
    # Counted where the session runs, as on the owner.
    status, body, _ = second.http("/metrics")
    for line in ['bangbang_requests_total{operation_result="info.get:ok"} 1',
                 'bangbang_requests_total{operation_result="order.publish:unauthenticated"} 1',
                 'bangbang_requests_total{operation_result="board.subscribe:invalid_field"} 1',
                 'bangbang_requests_total{operation_result="auth.sessions:ok"} 1']:
        assert line in body.splitlines(), line
    wait_until(lambda: "bangbang_node_sessions 0" in second.http("/metrics")[1].splitlines(), 5, "the session to be counted out")


def test_a_resume_on_a_node_gets_what_it_missed_then_its_reply_then_what_follows(nodes):
    owner, second, third = nodes
    phone = fresh_phone()
    with Client(owner.url) as first_device:
        first_device.login(phone, device="first")
        with second_device(first_device, third.url, phone, "second") as other:
            token = other.token
            first_device.wait_event(lambda e: e["event"] == "account.login")
            seen = publish(other, "before leaving")
            last_seq = other.wait_event(lambda e: e["event"] == "order.changed" and e["data"]["order"]["id"] == seen["id"])["seq"]
        missed = [publish(first_device, f"missed {n}")["id"] for n in range(3)]
        with Client(second.url) as resumed:
            resumed.ws.send(json.dumps({"id": "r", "op": "auth.resume", "data": {"token": token, "last_seq": last_seq}}))
            received = messages_until_reply(resumed, "r")
            reply = received[-1]
            assert reply["ok"] and reply["data"]["resync"] is False, reply
            events = received[:-1]
            assert [e["seq"] for e in events] == [last_seq + 1, last_seq + 2, last_seq + 3], events
            assert [e["data"]["order"]["id"] for e in events] == missed
            assert reply["data"]["seq"] == last_seq + 3
            # Then live, numbered on.
            after = publish(first_device, "after the resume")
            live = resumed.wait_event(lambda e: e["event"] == "order.changed")
            assert (live["seq"], live["data"]["order"]["id"]) == (last_seq + 4, after["id"])
            # A token of another user's making is refused by the owner, and nothing is followed.
            with Client(second.url) as forged:
                assert forged.error("auth.resume", {"token": token[:-4] + "AAAA"})["code"] == "unauthenticated"
                assert forged.error("order.publish", {"type": "bounty"})["code"] == "unauthenticated"


def test_a_session_revoked_from_another_device_is_logged_out_on_its_node(nodes):
    owner, second, _ = nodes
    phone = fresh_phone()
    with Client(second.url) as phone_device:
        phone_device.login(phone, device="phone")
        laptop = second_device(phone_device, owner.url, phone, "laptop")
        phone_device.wait_event(lambda e: e["event"] == "account.login")
        sessions = laptop.ok("auth.sessions")["sessions"]
        other = next(s["id"] for s in sessions if not s["is_current"])
        laptop.ok("auth.revoke_session", {"session_id": other})
        phone_device.wait_event(lambda e: e["event"] == "account.logged_out")
        # The node asks the owner after the event, and logs the connection out once told.
        wait_until(lambda: phone_device.call("board.stats")["ok"] is False, 5, "the phone's session to be logged out")
        assert phone_device.error("order.publish", {"type": "bounty"})["code"] == "unauthenticated"
        # The laptop's session is untouched; and a logout on a node ends that node's login.
        assert laptop.ok("auth.sessions")["sessions"][0]["is_current"]
        phone_device.ok("auth.login_password", {"phone": phone, "password": PASSWORD, "device": "phone again"})
        phone_device.ok("auth.logout")
        assert phone_device.error("auth.sessions")["code"] == "unauthenticated"
        laptop.close()


def test_a_node_session_outlives_the_owner(nodes):
    """`kill -9` of the owner: each client on a node that does not take over stays connected, its
    requests are answered by the new owner, its stream goes on from the next number and its board
    watch goes on; the one on the node that takes over is closed (that node stops its standby
    listener to serve as the owner) and resumes."""
    owner, second, third = nodes
    clients = {}
    try:
        for node in (second, third):
            client = Client(node.url)
            client.login(fresh_phone())
            client.ok("board.subscribe", {"types": ["bounty"]})
            order = publish(client, f"before, on {node.name}")
            seq = client.wait_event(lambda e: e["event"] == "order.changed" and e["data"]["order"]["id"] == order["id"])["seq"]
            clients[node.name] = (client, seq)
        for client, _ in clients.values():
            client.events.clear()
        owner.kill()
        killed = time.monotonic()
        new_owner = wait_until(lambda: next((n for n in (second, third) if "event=partition_serving" in n.log()), None),
                               LEASE_MS / 1000 + 30, "a node to take over")
        survivor = third if new_owner is second else second
        client, seq = clients[survivor.name]

        def publish_when_served():
            reply = client.call("order.publish", {"type": "bounty", "campus": "North", "deadline": int(time.time() * 1000) + 3_600_000,
                                                  "tip": 100, "details": {"title": "after", "description": "failover"}})
            if reply["ok"]:
                return reply["data"]["order"]
            assert reply["error"]["code"] == "storage_unavailable", reply
            return None

        order = wait_until(publish_when_served, 30, "a publish through the survivor's session")
        print(f"\nthe survivor's session published {time.monotonic() - killed:.2f} s after the kill")
        event = client.wait_event(lambda e: e["event"] == "order.changed" and e["data"]["order"]["id"] == order["id"], timeout=10)
        assert event["seq"] == seq + 1, (event, seq)
        entered = client.wait_event(lambda e: e["event"] == "feed.enter" and e["data"]["order"]["id"] == order["id"], timeout=10)
        assert entered["data"]["order"]["details"]["title"] == "after"
        # Nothing else numbered for the user meanwhile, and the connection was never closed.
        assert [e for e in client.events if e["event"] == "order.changed"] == []
    finally:
        for client, _ in clients.values():
            client.close()


def runners_online(client, board="bounty"):
    return client.ok("board.stats")["types"][board]["runners_online"]


def test_board_stats_count_the_runners_watching_on_every_node_once(nodes):
    owner, second, third = nodes
    admin = Client(owner.url)
    admin.login(ADMIN_PHONE)
    opened = []
    try:
        # A on a node, approved after it started watching; B on the owner and on another node.
        a = Client(second.url)
        opened.append(a)
        a.login(fresh_phone())
        a.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": f"S{a.user['id']}", "school": "North"})
        a.ok("board.subscribe", {"types": ["bounty"]})
        b_phone = fresh_phone()
        b = Client(owner.url)
        opened.append(b)
        b.login(b_phone)
        b.ok("runner.submit_verification", {"real_name": "Han Meimei", "student_id": f"S{b.user['id']}", "school": "North"})
        for user in (a.user, b.user):
            admin.ok("admin.decide_verification", {"user_id": user["id"], "decision": "approve"})
        a.wait_event(lambda e: e["event"] == "runner.verification_decided")
        b.wait_event(lambda e: e["event"] == "runner.verification_decided")
        b_elsewhere = second_device(b, third.url, b_phone, "tablet")
        opened.append(b_elsewhere)
        b.ok("board.subscribe", {"types": ["bounty", "express"]})
        b_elsewhere.ok("board.subscribe", {"types": ["bounty"]})
        # Asked on any node: the owner counts its own watchers and every node's report, each once.
        for asker in (admin, b_elsewhere):
            wait_until(lambda: runners_online(asker) == 2, 5, f"two runners on the bounty board as seen from {asker}")
        assert runners_online(admin, "express") == 1 and runners_online(admin, "group") == 0
        a.ok("board.unsubscribe")
        wait_until(lambda: runners_online(b_elsewhere) == 1, 5, "A to leave the count")
        # A node that stops reporting drops out (within the reports' five seconds).
        a.ok("board.subscribe", {"types": ["bounty"]})
        wait_until(lambda: runners_online(admin) == 2, 5, "A back in the count")
        second.kill()
        wait_until(lambda: runners_online(admin) == 1, 10, "the killed node's runner to drop out")
    finally:
        for client in opened + [admin]:
            try:
                client.close()
            except Exception:
                pass


def test_under_load_a_killed_owner_loses_nothing_acknowledged_to_node_sessions(nodes):
    """Publishers work without pause through sessions on the two other nodes while the owner is
    killed with SIGKILL. A request in flight to the dead owner has an unknown outcome, so its
    session is closed with 1012; the others wait for the next owner (`storage_unavailable` past the
    route's bound) and go on. Every publish acknowledged to any of them has its event, each once,
    in a gap-free stream, resumed on the survivor."""
    owner, second, third = nodes
    groups = {node.name: Publishers(node.url, 2, f"through {node.name}") for node in (second, third)}
    time.sleep(2.0)
    owner.kill()
    new_owner = wait_until(lambda: next((n for n in (second, third) if "event=partition_serving" in n.log()), None),
                           LEASE_MS / 1000 + 30, "a node to take over")
    survivor = third if new_owner is second else second
    time.sleep(2.0)
    results = {name: publishers.finish() for name, publishers in groups.items()}
    for name, group in results.items():
        for _, _, _, close_code in group:
            assert close_code in (None, 1012, 1001, 1006), (name, close_code)
    untouched = [r for r in results[survivor.name] if r[3] is None]
    # Each told 1012 by the survivor was so for a request the dead owner never answered, and said so.
    told = [r for r in results[survivor.name] if r[3] == 1012]
    assert survivor.log().count("event=routed_outcome_unknown") == len(told), survivor.log()[-3000:]
    acknowledged = assert_each_resumes_gap_free(results[second.name] + results[third.name], survivor.url)
    print(f"\n{acknowledged} publishes acknowledged through node sessions; {len(untouched)} of the survivor's "
          f"2 publishers never closed; every event resumed gap-free on {survivor.name}")


def operations():
    """Every operation the protocol documents, read from its headings."""
    names = set()
    directory = os.path.join(os.path.dirname(__file__), "..", "..", "protocol")
    for name in os.listdir(directory):
        if name.startswith("operations") and name.endswith(".md"):
            names.update(re.findall(r"^### `([a-z_.]+)`", open(os.path.join(directory, name)).read(), re.M))
    assert len(names) > 40
    return sorted(names)


BAD_DATA = [None, {}, [], "x", 7, {"order_id": "x"}, {"order_id": -1}, {"order_id": 2 ** 63 - 1}, {"token": 5},
            {"token": "a" * 5000, "last_seq": -3}, {"token": "x.y.z", "last_seq": "1"}, {"session_id": 7},
            {"session_id": "g" * 32}, {"types": "bounty"}, {"types": [None]}, {"phone": ["+86"]},
            {"user_id": 0}, {"nested": [[[[{"a": [1]}]]]]}, {"campus": "\u0000\ud7ff", "type": "express"}]


def test_whatever_a_client_sends_a_node_session_answers_and_keeps_serving(nodes):
    """Every documented operation with data of every wrong shape, logged out and logged in: each
    gets one reply, ok or a protocol error (the reply is checked against the schemas), the
    connection stays open, the node stays up, and the user's state is what it was."""
    _, second, _ = nodes
    with Client(second.url) as client:
        for logged_in in (False, True):
            if logged_in:
                client.login(fresh_phone())
                before = client.ok("profile.get")
            for op in operations():
                if op in ("auth.logout", "auth.revoke_session"):
                    continue   # ending this session is not bad input; both are tested above
                for data in BAD_DATA:
                    reply = client.call(op, data)
                    assert reply["ok"] or reply["error"]["code"], (op, data, reply)
        client.send_raw(json.dumps({"id": 1, "op": "order.get", "data": {"order_id": 1}, "extra": True}))
        assert client.receive()["error"]["code"] == "bad_request"
        assert client.ok("profile.get")["user"]["id"] == before["user"]["id"]
    assert second.process.poll() is None and second.is_ready()


def test_losing_the_nats_server_every_node_is_connected_to_loses_nothing_acknowledged_to_node_sessions(nodes_outlasting_an_election):
    """`kill -9` of the NATS server every node reached first, while publishers work through the two
    other nodes' sessions and a runner on one of them watches the board: the nodes reconnect to the
    survivors, and every publish acknowledged to a session has its event, each once, in a gap-free
    stream, live on the sessions still open (personal events wait for the inbox stream's new
    leader, so they may come seconds after their publish) and resumed afterwards; the watcher is
    either told 1012 (a change lost while its node was away) or sees every acknowledged publish
    enter its board."""
    owner, second, third = nodes_outlasting_an_election
    nats = owner.nats
    with Client(second.url) as watcher:
        watcher.login(fresh_phone())
        watcher.ok("board.subscribe", {"types": ["bounty"]})
        groups = [Publishers(node.url, 2, f"through {node.name}", drain_seconds=20) for node in (second, third)]
        time.sleep(2.0)
        nats.kill(0)
        time.sleep(8.0)   # the streams the server led elect new leaders within about this
        results = [result for group in groups for result in group.finish()]
        for _, _, _, close_code in results:
            assert close_code in (None, 1012, 1006), close_code
        target = next(node for node in (second, third, owner) if node.process.poll() is None and node.is_ready())
        acknowledged = assert_each_resumes_gap_free(results, target.url)
        entered, told_to_resubscribe = set(), False
        try:
            while True:
                event = watcher.receive(timeout=2)
                if event.get("event") == "feed.enter":
                    entered.add(event["data"]["order"]["id"])
        except TimeoutError:
            pass
        except Exception as error:
            told_to_resubscribe = getattr(getattr(error, "rcvd", None), "code", None) == 1012
            assert told_to_resubscribe, repr(error)
        published = {order for _, ids, _, _ in results for order in ids}
        if not told_to_resubscribe:
            entered |= {e["data"]["order"]["id"] for e in watcher.events if e["event"] == "feed.enter"}
            assert published <= entered, sorted(published - entered)[:10]
    print(f"\n{acknowledged} publishes acknowledged through node sessions while a NATS server died; the watcher "
          f"{'was told 1012' if told_to_resubscribe else 'saw every one enter'}")
