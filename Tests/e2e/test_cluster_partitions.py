"""Pairs of partitions spread over the nodes (`--partitions 4`, docs/scale-out.md 2d): three
Bangbang nodes over a 3-node NATS cluster, the boards of the campuses that hash to pair k and the
accounts of the users whose phone hashes to it owned by the node the placement gives `p<k>` (two
nodes one pair each, one node two). Every node runs its own clients' sessions. Clients on any node see each other's
orders live whatever pair holds them, an accept race across the nodes has one winner, and under
load a killed node's pairs are taken over by the survivors with nothing acknowledged lost, its
clients resuming gap-free on a survivor; when it comes back, its pairs move back to it."""
import os
import threading
import time

import pytest

from bbclient import Client, fresh_phone
from nats_cluster import NatsCluster, free_ports
from test_cluster_failover import LEASE_MS, Node, Publishers, assert_each_resumes_gap_free, rendezvous_score, wait_until
from test_operations_admin import cli

ADMIN_PHONE = "+8613000000000"
PAIRS = 4
# A dead node's lease expires after one lease time; the take-over write and the replay follow.
TAKEOVER_BOUND_SECONDS = LEASE_MS / 1000 + 5.0


def pair_of(key, pairs=PAIRS):
    """The pair a campus or a phone hashes to: FNV-1a 32 of its UTF-8, modulo the pairs
    (docs/scale-out.md, section 2), written again here."""
    value = 2166136261
    for byte in key.encode():
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return value % pairs


def campus_in(pair, pairs=PAIRS):
    return next(f"Campus-{index}" for index in range(1000) if pair_of(f"Campus-{index}", pairs) == pair)


def phone_in(pair):
    while True:
        phone = fresh_phone()
        if pair_of(phone) == pair:
            return phone


def placement(names, pairs=PAIRS):
    """Where the pairs go while `names` are live, written again from docs/scale-out.md (section
    8): (pair, node) weights from the highest down, each placing its pair on its node while the
    node has room, every node given ⌊P/N⌋ or ⌈P/N⌉ and at most P mod N nodes the larger."""
    names = sorted(set(names))
    share, remainder = divmod(pairs, len(names))
    weights = sorted(((rendezvous_score(f"p{pair}", name), pair, name) for pair in range(pairs) for name in names),
                     key=lambda weight: (-weight[0], weight[1], weight[2]))
    owners, counts, above = {}, dict.fromkeys(names, 0), 0
    for _, pair, name in weights:
        if pair in owners or counts[name] > share or (counts[name] == share and above == remainder):
            continue
        above += counts[name] == share
        counts[name] += 1
        owners[pair] = name
    return owners


def preferred(pair, nodes, pairs=PAIRS):
    owner = placement([node.name for node in nodes], pairs)[pair]
    return next(node for node in nodes if node.name == owner)


def serves(node, pair):
    """Whether `node`'s log says it serves pair `pair` now: its last word on the pair is that it
    serves it, not that it handed it back (a hand-back due while the pair is being recovered is
    logged done after the pair's `partition_serving`)."""
    last = None
    for line in node.log().splitlines():
        if "event=partition_serving " in line and f" pair={pair} " in line:
            last = "serving"
        elif "event=partition_handed_back " in line and f"partition=p{pair} " in line:
            last = "handed back"
    return last == "serving"


def bounty(campus, title="errand"):
    return {"type": "bounty", "campus": campus, "deadline": int(time.time() * 1000) + 3_600_000, "tip": 300,
            "details": {"title": title, "description": "across the pairs", "place": "Gym"}}


@pytest.fixture
def nodes(tmp_path):
    nats = NatsCluster.start()
    started = []
    try:
        for index, port in enumerate(free_ports(3)):
            node = Node(f"bb{index + 1}", port, str(tmp_path), nats.urls,
                        extra=["--admin-phone", ADMIN_PHONE, "--partitions", str(PAIRS), "--sms-resend-seconds", "0"])
            started.append(node)
            wait_until(node.is_ready, 20, f"{node.name} to serve sessions", node)
        # The first node takes every pair; each moves to the node the placement gives it once that node is live.
        for pair in range(PAIRS):
            owner = preferred(pair, started)
            wait_until(lambda: serves(owner, pair), 20, f"pair {pair} on {owner.name}", owner)
        for node in started:
            node.nats = nats
        yield started
    finally:
        for node in started:
            node.stop()
        nats.stop()


def approved_runner(url, admin, pair=None):
    """A verified runner logged in on `url`, a user of `pair` (by default another pair than the
    administrator's), approved by `admin`."""
    runner = Client(url)
    user = runner.login(phone_in((pair_of(ADMIN_PHONE) + 1) % PAIRS if pair is None else pair))["user"]["id"]
    runner.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": f"S{user}", "school": "North"})
    admin.ok("admin.decide_verification", {"user_id": user, "decision": "approve"})
    runner.wait_event(lambda e: e["event"] == "runner.verification_decided")
    return runner


def test_clients_on_any_node_see_each_others_orders_whatever_pair_holds_them(nodes):
    # Each node's /metrics names the pairs it owns.
    for node in nodes:
        owned = [pair for pair in range(PAIRS) if preferred(pair, nodes) is node]
        metrics = node.http("/metrics")[1]
        assert f"bangbang_pairs_owned {len(owned)}\n" in metrics, metrics[-500:]
        assert all(f'bangbang_pair_owned{{pair="{pair}"}} 1' in metrics for pair in owned)
    admin = Client(nodes[0].url)
    admin.login(ADMIN_PHONE)
    runner = approved_runner(nodes[2].url, admin)
    publishers = []
    for pair in range(PAIRS):
        client = Client(nodes[pair % len(nodes)].url)
        client.login(phone_in(pair))
        publishers.append(client)
    runner.ok("board.subscribe", {"types": ["bounty"]})

    # Each publisher, a user of one pair, publishes on a campus of every pair.
    orders = {}
    for index, publisher in enumerate(publishers):
        for pair in range(PAIRS):
            orders[index, pair] = publisher.ok("order.publish", bounty(campus_in(pair)))["order"]["id"]
    assert len(set(orders.values())) == len(orders)
    for order_id in orders.values():
        runner.wait_event(lambda e, o=order_id: e["event"] == "feed.enter" and e["data"]["order"]["id"] == o)

    # The runner takes one order of each pair, each published by a user of another pair: the
    # publisher hears of it on its own node, and the order leaves the runner's board.
    for pair in range(PAIRS):
        index = (pair + 1) % PAIRS
        order_id = orders[index, pair]
        runner.ok("order.accept", {"order_id": order_id})
        publishers[index].wait_event(lambda e, o=order_id: e["event"] == "order.changed"
                                     and e["data"]["order"]["id"] == o and e["data"]["change"] == "accepted")
        runner.wait_event(lambda e, o=order_id: e["event"] == "feed.leave" and e["data"]["order_id"] == o)
        assert admin.ok("order.get", {"order_id": order_id})["order"]["status"] == "accepted"

    # Every board read whole on any node: the listing by cursor, its total, the counts.
    first = runner.ok("board.list", {"types": ["bounty"], "sort": "newest", "limit": 4})
    assert first["total"] == len(orders) - PAIRS and len(first["orders"]) == 4 and "next_cursor" in first
    rest = publishers[0].ok("board.list", {"types": ["bounty"], "sort": "newest", "limit": len(orders), "cursor": first["next_cursor"]})
    page = first["orders"] + rest["orders"]
    listed = [order["id"] for order in page]
    accepted = {orders[(pair + 1) % PAIRS, pair] for pair in range(PAIRS)}
    assert "next_cursor" not in rest and sorted(listed) == sorted(set(orders.values()) - accepted)
    newest_first = sorted(page, key=lambda order: (order["created_at"], order["id"]), reverse=True)
    assert listed == [order["id"] for order in newest_first], "one listing's order across the pairs"
    deep = admin.ok("board.list", {"types": ["bounty"], "sort": "newest", "offset": 5, "limit": 10})
    assert [order["id"] for order in deep["orders"]] == listed[5:]
    wait_until(lambda: publishers[1].ok("board.stats")["types"]["bounty"] == {"open": len(orders) - PAIRS, "runners_online": 1},
               10, "the counts of every pair, with the runner watching on another node")
    one_campus = publishers[2].ok("board.list", {"campus": campus_in(1)})
    assert one_campus["total"] == PAIRS - 1, one_campus
    # A user's own orders and a runner's takings, from every pair.
    mine = publishers[0].ok("orders.mine", {"limit": 2})
    more = publishers[0].ok("orders.mine", {"limit": 2, "cursor": mine["next_cursor"]})
    assert sorted(o["id"] for o in mine["orders"] + more["orders"]) == sorted(orders[0, pair] for pair in range(PAIRS))
    assert runner.ok("orders.mine", {"role": "accepted"})["orders"] and runner.ok("runner.earnings")["active_count"] == PAIRS


def test_an_accept_race_across_the_nodes_has_one_winner_in_every_pair(nodes):
    admin = Client(nodes[0].url)
    admin.login(ADMIN_PHONE)
    runners = [approved_runner(node.url, admin) for node in nodes]
    publisher = Client(nodes[1].url)
    publisher.login(phone_in(0))
    for pair in range(PAIRS):
        order_id = publisher.ok("order.publish", bounty(campus_in(pair), "race"))["order"]["id"]
        outcomes = [None] * len(runners)
        start = threading.Barrier(len(runners))

        def race(index):
            start.wait()
            outcomes[index] = runners[index].call("order.accept", {"order_id": order_id})

        threads = [threading.Thread(target=race, args=(index,)) for index in range(len(runners))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        winners = [reply for reply in outcomes if reply and reply["ok"]]
        losers = [reply for reply in outcomes if reply and not reply["ok"]]
        assert len(winners) == 1 and len(losers) == len(runners) - 1, outcomes
        assert {reply["error"]["code"] for reply in losers} == {"order_taken"}, losers


def test_under_load_a_killed_nodes_pairs_move_to_the_survivors_and_back_when_it_returns(nodes, tmp_path):
    owned = {node.name: [pair for pair in range(PAIRS) if preferred(pair, nodes) is node] for node in nodes}
    victim = max(nodes, key=lambda node: len(owned[node.name]))
    survivors = [node for node in nodes if node is not victim]
    campuses = [campus_in(pair) for pair in range(PAIRS)]
    on_survivors = [Publishers(node.url, 2, "load", drain_seconds=20, campuses=campuses) for node in survivors]
    on_victim = Publishers(victim.url, 2, "load", campuses=campuses)
    time.sleep(2)
    victim.kill()
    killed = time.monotonic()
    taken_over = {}
    for pair in owned[victim.name]:
        wait_until(lambda: any(serves(node, pair) for node in survivors), TAKEOVER_BOUND_SECONDS + 20,
                   f"pair {pair} to be taken over", survivors[0])
        taken_over[pair] = time.monotonic() - killed
    time.sleep(2)
    results = [result for publishers in on_survivors for result in publishers.finish()]
    cut_off = on_victim.finish()
    # A survivor's session outlives the dead node; one whose publish was in flight to it is told
    # 1012 (its outcome is unknown: resume and look), each logged by its node.
    told = [code for _, _, _, code in results if code is not None]
    assert set(told) <= {1012}, told
    assert sum(node.log().count("event=routed_outcome_unknown") for node in survivors) == len(told)
    acknowledged = assert_each_resumes_gap_free(results, survivors[0].url)
    acknowledged += assert_each_resumes_gap_free(cut_off, survivors[1].url)
    assert all(seconds < TAKEOVER_BOUND_SECONDS for seconds in taken_over.values()), taken_over
    # Every acknowledged publish is an order once, on whichever node holds its pair now.
    with Client(survivors[0].url) as reader:
        reader.login(fresh_phone())
        for _, ids, _, _ in results + cut_off:
            for order_id in ids:
                assert reader.ok("order.get", {"order_id": order_id})["order"]["status"] == "open"
    print(f"{acknowledged} publishes acknowledged; pairs {owned[victim.name]} taken over after {taken_over} s")

    # The node comes back: its pairs move back to it once it has been live for a lease time.
    returned = Node(victim.name, victim.port, str(tmp_path), survivors[0].nats.urls,
                    extra=["--admin-phone", ADMIN_PHONE, "--partitions", str(PAIRS), "--sms-resend-seconds", "0"])
    nodes[nodes.index(victim)] = returned
    wait_until(returned.is_ready, 20, "the node to come back", returned)
    for pair in owned[victim.name]:
        wait_until(lambda: serves(returned, pair), 20, f"pair {pair} to move back", returned)
    with Client(returned.url) as client:
        client.login(phone_in(owned[victim.name][0]))
        order_id = client.ok("order.publish", bounty(campus_in(owned[victim.name][0]), "back"))["order"]["id"]
        assert client.ok("order.get", {"order_id": order_id})["order"]["status"] == "open"


def test_administration_spans_the_pairs(nodes):
    """An administrator, a user of one pair, reviews the applicants of every pair, oldest first,
    decides each where its account is, looks up users and orders of any pair, and reads every
    pair's feedback and counts; what a user of another pair was granted makes them an
    administrator at once; a user who is not one is refused."""
    admin = Client(nodes[0].url)
    admin.login(ADMIN_PHONE)
    applicants = []
    for pair in range(PAIRS):
        client = Client(nodes[(pair + 1) % len(nodes)].url)
        user = client.login(phone_in(pair))["user"]["id"]
        client.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": f"S{user}", "school": "North"})
        client.ok("feedback.submit", {"text": f"from pair {pair}"})
        applicants.append((client, user))
    pending = admin.ok("admin.pending_verifications")["users"]
    assert [user["id"] for user in pending] == [user for _, user in applicants], "every pair's, oldest first"
    for client, user in applicants:
        admin.ok("admin.decide_verification", {"user_id": user, "decision": "approve"})
        client.wait_event(lambda e: e["event"] == "runner.verification_decided")
    assert admin.ok("admin.pending_verifications")["users"] == []
    feedback = admin.ok("admin.list_feedback", {"limit": 10})["feedback"]
    assert sorted(entry["text"] for entry in feedback) == [f"from pair {pair}" for pair in range(PAIRS)], feedback
    assert feedback == sorted(feedback, key=lambda entry: (entry["submitted_at"], entry["id"]), reverse=True)
    assert len({entry["id"] for entry in feedback}) == PAIRS, "one id each across the pairs"
    # Paged by `before` across the pairs: every entry once, in the same order.
    first = admin.ok("admin.list_feedback", {"limit": 3})
    rest = admin.ok("admin.list_feedback", {"limit": 3, "before": first["next_before"]})
    assert first["feedback"] + rest["feedback"] == feedback and "next_before" not in rest, (first, rest)
    assert admin.call("admin.list_feedback", {"before": PAIRS * 1000 + 1})["error"]["field"] == "before"

    # A user of another pair looked up by phone, and one of its orders.
    other, other_user = applicants[(pair_of(ADMIN_PHONE) + 1) % PAIRS]
    found = admin.ok("admin.user", {"user_id": other_user})["user"]
    assert found["id"] == other_user and "phone" in found
    assert admin.ok("admin.user", {"phone": found["phone"]})["user"]["id"] == other_user
    order_id = other.ok("order.publish", bounty(campus_in((pair_of(ADMIN_PHONE) + 2) % PAIRS)))["order"]["id"]
    assert admin.ok("admin.order", {"order_id": order_id})["order"]["id"] == order_id
    stats = admin.ok("admin.stats")
    assert stats["types"]["bounty"]["open"] == 1 and stats["pending_verifications"] == 0, stats
    # The connections and users of every node, as each reports them (every second).
    wait_until(lambda: {key: admin.ok("admin.stats")[key] for key in ("connections", "users_online")}
               == {"connections": PAIRS + 1, "users_online": PAIRS + 1}, 10,
               "the administrator and every applicant counted on the nodes they are connected to")

    # Not an administrator: refused, wherever the subject is.
    assert other.call("admin.pending_verifications")["error"]["code"] == "forbidden"
    assert other.call("admin.decide_verification", {"user_id": applicants[0][1], "decision": "approve"})["error"]["code"] == "forbidden"
    # Granted by the administrator (in another pair), they administer at once.
    admin.ok("admin.grant_admin", {"user_id": other_user})
    assert [user["id"] for user in other.ok("admin.pending_verifications")["users"]] == []
    admin.ok("admin.revoke_admin", {"user_id": other_user})
    assert other.call("admin.pending_verifications")["error"]["code"] == "forbidden"



def test_the_admin_tool_administers_every_pair_from_any_node(nodes, tmp_path):
    """`bangbang admin` on a node's machine logs in with that node's own admin secret (a node owning
    no account of the applicants, or some) and reviews the applicants of every pair, oldest first,
    deciding each where its account is; the secret grants `admin.*` operations only, and another
    node's secret is refused."""
    applicants = []
    for pair in range(PAIRS):
        client = Client(nodes[pair % len(nodes)].url)
        user = client.login(phone_in(pair))["user"]["id"]
        client.ok("runner.submit_verification", {"real_name": f"Applicant {pair}", "student_id": f"S{user}", "school": "North"})
        applicants.append((client, user))
    node = nodes[1]
    directory = os.path.join(str(tmp_path), f"{node.name}-data")
    status, pending, error = cli(directory, "pending", "--json", url=node.url)
    assert status == 0, error
    assert [entry["id"] for entry in pending["users"]] == [user for _, user in applicants], pending
    (approved, approved_id), (rejected, rejected_id) = applicants[0], applicants[1]
    status, decided, error = cli(directory, "approve", str(approved_id), "--json", url=node.url)
    assert status == 0 and decided["user"]["verification"]["status"] == "approved", error
    assert approved.wait_event(lambda e: e["event"] == "runner.verification_decided")["data"]["status"] == "approved"
    status, decided, error = cli(directory, "reject", str(rejected_id), "--reason", "student id unreadable", "--json", url=node.url)
    assert status == 0 and decided["user"]["verification"]["rejection_reason"] == "student id unreadable", error
    assert rejected.ok("runner.verification")["verification"]["status"] == "rejected"
    status, pending, _ = cli(directory, "pending", "--json", url=node.url)
    assert [entry["id"] for entry in pending["users"]] == [user for _, user in applicants[2:]], pending
    status, found, _ = cli(directory, "user", str(applicants[-1][1]), "--json", url=node.url)
    assert status == 0 and found["user"]["id"] == applicants[-1][1]
    assert "event=admin_logged_in" in node.log()

    secret = open(os.path.join(directory, "admin-secret")).read().strip()
    other = open(os.path.join(str(tmp_path), f"{nodes[0].name}-data", "admin-secret")).read().strip()
    with Client(node.url) as connection:
        assert connection.call("auth.admin_secret", {"secret": other})["error"]["code"] == "unauthenticated"
        assert connection.call("admin.stats")["error"]["code"] == "unauthenticated"
        assert connection.ok("auth.admin_secret", {"secret": secret})["administrator"] == 0
        assert connection.ok("admin.stats")["pending_verifications"] == PAIRS - 2
        assert connection.call("order.publish", bounty(campus_in(0)))["error"]["code"] == "forbidden"
        assert connection.call("profile.get")["error"]["code"] == "forbidden"


def test_a_phone_moves_to_another_pair_and_logs_in_there(nodes):
    """An account stays with the pair of the phone it registered with (its id names it); a new
    number of another pair is claimed there, the account changed, the old number released
    (docs/scale-out.md, 7b item 4): the new number logs in by code and by password to the same
    account on every node, the old one registers anew, nobody else can take the new one, and
    moving on, or back home, releases it."""
    home = 1
    first = phone_in(home)
    client = Client(nodes[1].url)
    user = client.login(first)["user"]["id"]
    assert user % PAIRS == home, "a user's id names the pair of the phone it registered with"
    client.ok("auth.set_password", {"password": "my password"})

    moved = phone_in(2)
    code = client.ok("auth.request_code", {"phone": moved, "purpose": "change_phone"})["dev_code"]
    for data, field in [({"phone": "not a phone", "code": code}, "phone"), ({"phone": moved}, "code"),
                        ({"phone": moved, "code": code, "extra": 1}, "extra")]:
        bad = client.call("profile.change_phone", data)
        assert bad["error"]["code"] == "invalid_field" and bad["error"].get("field") == field, (data, bad)
    wrong = client.call("profile.change_phone", {"phone": moved, "code": "000000" if code != "000000" else "111111"})
    assert wrong["error"]["code"] == "code_incorrect", wrong
    assert client.ok("profile.change_phone", {"phone": moved, "code": code})["user"]["phone"] == moved
    client.wait_event(lambda e: e["event"] == "account.phone_changed")
    assert client.ok("profile.get")["user"]["phone"] == moved
    for node in nodes:
        with Client(node.url) as again:
            logged = again.ok("auth.login_password", {"phone": moved, "password": "my password"})
            assert logged["user"]["id"] == user and logged["user"]["phone"] == moved
    with Client(nodes[0].url) as again:
        by_code = again.login(moved)
        assert by_code["user"]["id"] == user and by_code["is_new"] is False
        assert again.ok("auth.sessions")["sessions"], "the session is the account's, in its own pair"
        client.wait_event(lambda e: e["event"] == "account.login" and e["data"]["method"] == "code")
        again.ok("auth.logout")
    with Client(nodes[2].url) as stranger:
        refused = stranger.call("auth.login_password", {"phone": moved, "password": "not my password"})
        assert refused["error"]["code"] == "invalid_credentials", refused
        # What the nodes ask one another is no client's to send: not a session for anyone.
        for op, data in [("node.login_claimed", {"user": user, "phone": moved}),
                         ("node.take_phone", {"phone": moved, "claimed_at": int(time.time() * 1000)}),
                         ("node.release_phone", {"phone": moved, "user": user, "stamped_by": int(time.time() * 1000)})]:
            assert stranger.call(op, data)["error"]["code"] == "unknown_operation"
        assert stranger.call("auth.sessions")["error"]["code"] == "unauthenticated"
    with Client(nodes[2].url) as admin:
        admin.login(ADMIN_PHONE)
        found = admin.ok("admin.user", {"phone": moved})["user"]
        assert found["id"] == user and found["phone"] == moved, "an operator finds the account by the phone it moved to"
        missing = admin.call("admin.user", {"phone": first})
        assert missing["error"]["code"] == "not_found", missing

    with Client(nodes[2].url) as newcomer:
        fresh = newcomer.login(first)
        assert fresh["is_new"] is True and fresh["user"]["id"] != user, "the old number belongs to nobody"
    other = Client(nodes[0].url)
    other.login(phone_in(3))
    taken = other.call("auth.request_code", {"phone": moved, "purpose": "change_phone"})
    assert taken["error"]["code"] == "phone_taken", taken
    mine = client.call("auth.request_code", {"phone": moved, "purpose": "change_phone"})
    assert mine["error"]["code"] == "phone_taken" and "already your" in mine["error"]["message"], mine

    # On to a third pair: the second pair's claim is given up, and its number registers anew.
    onward = phone_in(3)
    code = client.ok("auth.request_code", {"phone": onward, "purpose": "change_phone"})["dev_code"]
    assert client.ok("profile.change_phone", {"phone": onward, "code": code})["user"]["phone"] == onward
    with Client(nodes[1].url) as newcomer:
        assert newcomer.login(moved)["is_new"] is True
    # Back to a number of its own pair: the change is its pair's alone, and the third pair's claim goes too.
    back = phone_in(home)
    code = client.ok("auth.request_code", {"phone": back, "purpose": "change_phone"})["dev_code"]
    assert client.ok("profile.change_phone", {"phone": back, "code": code})["user"]["phone"] == back
    with Client(nodes[2].url) as newcomer:
        assert newcomer.login(onward)["is_new"] is True
    with Client(nodes[0].url) as again:
        assert again.ok("auth.login_password", {"phone": back, "password": "my password"})["user"]["id"] == user
    client.close()
    other.close()
