"""What happens to an order besides the straight errand: tip bumps seen live, cancellation
before and after acceptance, a runner giving an order back, expiry at the deadline and a
group that misses its quorum."""
from test_orders_support import bounty, changed, connect, express, feed, group, no_event, now_ms, runner, user


def test_tip_bump_is_seen_live_by_a_subscribed_runner(server):
    with user(server) as publisher, runner(server) as watcher:
        watcher.ok("board.subscribe", {"types": ["bounty"], "min_tip": 400})
        order = publisher.ok("order.publish", bounty(tip=300))["order"]
        no_event(watcher, feed("feed.enter", order["id"]))
        raised = publisher.ok("order.raise_tip", {"order_id": order["id"], "tip": 450})["order"]
        assert raised["tip"] == 450 and raised["revision"] == 2
        entered = watcher.wait_event(feed("feed.enter", order["id"]))["data"]["order"]
        assert entered["tip"] == 450, "the bump brought it into the min_tip filter"
        publisher.ok("order.raise_tip", {"order_id": order["id"], "tip": 600})
        update = watcher.wait_event(feed("feed.update", order["id"]))["data"]["order"]
        assert update["tip"] == 600 and update["revision"] == 3
        publisher.wait_event(changed(order["id"], "tip_raised"))

        for lower in (600, 500):
            error = publisher.error("order.raise_tip", {"order_id": order["id"], "tip": lower})
            assert error["code"] == "invalid_field" and error["field"] == "tip"
        error = publisher.error("order.raise_tip", {"order_id": order["id"], "tip": 50_001})
        assert error["code"] == "invalid_field" and error["field"] == "tip"
        assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["tip"] == 600


def test_cancel_while_open_is_free_and_leaves_the_board(server):
    with user(server) as publisher, runner(server) as watcher:
        watcher.ok("board.subscribe", {"types": ["express"]})
        order = publisher.ok("order.publish", express())["order"]
        watcher.wait_event(feed("feed.enter", order["id"]))
        cancelled = publisher.ok("order.cancel", {"order_id": order["id"]})["order"]
        assert cancelled["status"] == "cancelled"
        assert cancelled["cancellation"] == {"cause": "publisher", "fee": 0}
        assert watcher.wait_event(feed("feed.leave", order["id"]))["data"]["status"] == "cancelled"
        assert watcher.error("order.accept", {"order_id": order["id"]})["code"] == "order_closed"


def test_cancel_after_accept_needs_a_reason_and_tells_the_runner(server):
    with user(server) as publisher, runner(server) as courier:
        order = publisher.ok("order.publish", express())["order"]
        courier.ok("order.accept", {"order_id": order["id"]})
        for reason in (None, "  "):
            data = {"order_id": order["id"]} if reason is None else {"order_id": order["id"], "reason": reason}
            error = publisher.error("order.cancel", data)
            assert error["code"] == "invalid_field" and error["field"] == "reason"
        error = publisher.error("order.cancel", {"order_id": order["id"], "reason": "x" * 1001})
        assert error["code"] == "invalid_field" and error["field"] == "reason"
        cancelled = publisher.ok("order.cancel", {"order_id": order["id"], "reason": "found it myself"})["order"]
        # Within the grace window (2 minutes after acceptance) cancelling costs nothing.
        assert cancelled["cancellation"] == {"cause": "publisher", "reason": "found it myself", "fee": 0}
        told = courier.wait_event(changed(order["id"], "cancelled"))["data"]["order"]
        assert told["status"] == "cancelled" and told["timeline"][-1]["note"] == "found it myself"
        assert courier.ok("runner.earnings")["cancellation_fees"] == 0
        assert courier.ok("orders.mine", {"role": "accepted", "scope": "active"})["orders"] == []


def test_a_runner_gives_an_order_back_and_it_reopens(server):
    with user(server) as publisher, runner(server) as courier, runner(server) as next_runner:
        next_runner.ok("board.subscribe", {"types": ["express"]})
        order = publisher.ok("order.publish", express())["order"]
        next_runner.wait_event(feed("feed.enter", order["id"]))
        courier.ok("order.accept", {"order_id": order["id"]})
        next_runner.wait_event(feed("feed.leave", order["id"]))
        reopened = courier.ok("order.abandon", {"order_id": order["id"]})["order"]
        assert reopened["status"] == "open" and "runner" not in reopened
        assert "pickup_code" not in reopened["details"], "the former runner loses the private fields"
        assert publisher.wait_event(changed(order["id"], "abandoned"))["data"]["order"]["status"] == "open"
        next_runner.wait_event(feed("feed.enter", order["id"]))
        assert next_runner.ok("order.accept", {"order_id": order["id"]})["order"]["runner"] == next_runner.user["id"]


def test_an_open_order_expires_at_its_deadline(server):
    with user(server) as publisher, runner(server) as watcher:
        watcher.ok("board.subscribe", {"types": ["bounty"]})
        order = publisher.ok("order.publish", bounty(deadline=now_ms() + 2000))["order"]
        watcher.wait_event(feed("feed.enter", order["id"]))
        left = watcher.wait_event(feed("feed.leave", order["id"]), timeout=8)
        assert left["data"]["status"] == "expired"
        expired = publisher.wait_event(changed(order["id"], "expired"), timeout=8)["data"]["order"]
        assert expired["status"] == "expired" and expired["timeline"][-1] == {"status": "expired", "at": order["deadline"]}
        assert watcher.error("order.accept", {"order_id": order["id"]})["code"] == "order_closed"
        history = publisher.ok("orders.mine", {"role": "published", "scope": "history"})["orders"]
        assert order["id"] in [o["id"] for o in history]


def test_a_group_below_its_quorum_cancels_itself_at_closing_time(server):
    with user(server) as publisher, user(server) as participant:
        order = publisher.ok("order.publish", group(capacity=3, minimum_fill=2, closes_in=1500))["order"]
        participant.ok("order.join", {"order_id": order["id"]})
        told = participant.wait_event(changed(order["id"], "cancelled"), timeout=8)["data"]["order"]
        assert told["status"] == "cancelled" and told["cancellation"] == {"cause": "quorum_not_reached", "fee": 0}
        publisher.wait_event(changed(order["id"], "cancelled"), timeout=8)
        assert participant.error("order.leave", {"order_id": order["id"]})["code"] == "invalid_transition"


def test_every_device_of_the_publisher_hears_of_each_step(server):
    with user(server) as phone, runner(server) as courier, connect(server) as tablet:
        tablet.ok("auth.resume", {"token": phone.token, "last_seq": 0})
        order = phone.ok("order.publish", express())["order"]
        courier.ok("order.accept", {"order_id": order["id"]})
        on_phone = phone.wait_event(changed(order["id"], "accepted"))
        on_tablet = tablet.wait_event(changed(order["id"], "accepted"))
        assert on_phone == on_tablet, "the same event, with the same seq, on both devices"
        assert on_tablet["data"]["order"]["details"]["pickup_code"] == "8-2-1043"
