"""Whole errands of the four order types over real connections: a publisher and a runner on
separate connections, every reply, the publisher's live `order.changed` events and the
runner's board feed; then privacy, permissions and illegal transitions."""
from test_orders_support import (bounty, changed, connect, express, feed, group, now_ms, purchase, runner,
                                 user)


def test_express_errand_with_delivery_code(server):
    with user(server) as publisher, runner(server) as courier:
        courier.ok("board.subscribe", {"types": ["express"]})
        order = publisher.ok("order.publish", express(code=True))["order"]
        assert order["status"] == "open" and order["type"] == "express" and order["revision"] == 1
        assert len(order["delivery_code"]) == 4 and order["details"]["pickup_code"] == "8-2-1043"
        publisher.wait_event(changed(order["id"], "published"))

        entered = courier.wait_event(feed("feed.enter", order["id"]))["data"]["order"]
        assert "pickup_code" not in entered["details"] and "drop_off_room" not in entered["details"]
        assert "contact_phone" not in entered["details"] and "delivery_code" not in entered

        taken = courier.ok("order.accept", {"order_id": order["id"]})["order"]
        assert taken["status"] == "accepted" and taken["runner"] == courier.user["id"]
        assert taken["details"]["pickup_code"] == "8-2-1043" and taken["details"]["drop_off_room"] == "512"
        assert taken["details"]["contact_phone"] == "+8613812345678"
        assert "delivery_code" not in taken, "only the publisher sees the delivery code"
        left = courier.wait_event(feed("feed.leave", order["id"]))
        assert left["data"]["status"] == "accepted"
        seen = publisher.wait_event(changed(order["id"], "accepted"))["data"]["order"]
        assert seen["runner"] == courier.user["id"] and seen["delivery_code"] == order["delivery_code"]

        assert courier.ok("order.pick_up", {"order_id": order["id"]})["order"]["status"] == "picked_up"
        publisher.wait_event(changed(order["id"], "picked_up"))

        missing = courier.error("order.deliver", {"order_id": order["id"]})
        assert missing["code"] == "invalid_field" and missing["field"] == "code"
        wrong = "0000" if order["delivery_code"] != "0000" else "1111"
        assert courier.error("order.deliver", {"order_id": order["id"], "code": wrong})["code"] == "wrong_delivery_code"
        done = courier.ok("order.deliver", {"order_id": order["id"], "code": order["delivery_code"]})["order"]
        assert done["status"] == "completed", "the code is the publisher's confirmation"
        assert [step["status"] for step in done["timeline"]] == ["open", "accepted", "picked_up", "delivered", "completed"]
        event = publisher.wait_event(changed(order["id"], "delivered"))
        assert event["data"]["order"]["status"] == "completed"

        rated = publisher.ok("order.rate", {"order_id": order["id"], "stars": 5, "comment": "fast"})["order"]
        assert rated["rating_by_publisher"]["stars"] == 5
        assert courier.wait_event(changed(order["id"], "rated"))["data"]["order"]["rating_by_publisher"]["comment"] == "fast"
        assert courier.ok("order.rate", {"order_id": order["id"], "stars": 4})["order"]["rating_by_runner"]["stars"] == 4
        assert publisher.error("order.rate", {"order_id": order["id"], "stars": 1})["code"] == "already_rated"

        earnings = courier.ok("runner.earnings")
        assert earnings["completed_count"] == 1 and earnings["tips"] == 300 and earnings["total"] == 300
        assert earnings["rating_count"] == 1 and earnings["rating_stars"] == 5


def test_purchase_errand_confirmed_by_publisher(server):
    with user(server) as publisher, runner(server) as shopper:
        shopper.ok("board.subscribe", {"types": ["purchase"]})
        order = publisher.ok("order.publish", purchase())["order"]
        assert order["details"]["items"] == [{"name": "Oat milk", "qty": 2, "note": "cold"}, {"name": "Bread", "qty": 1}]
        entered = shopper.wait_event(feed("feed.enter", order["id"]))["data"]["order"]
        assert "drop_off_room" not in entered["details"] and entered["details"]["goods_budget"] == 2500

        assert shopper.ok("order.accept", {"order_id": order["id"]})["order"]["details"]["drop_off_room"] == "B2-14"
        shopper.wait_event(feed("feed.leave", order["id"]))
        shopper.ok("order.pick_up", {"order_id": order["id"]})
        delivered = shopper.ok("order.deliver", {"order_id": order["id"]})["order"]
        assert delivered["status"] == "delivered" and delivered["auto_confirm_at"] > now_ms()

        assert shopper.error("order.confirm", {"order_id": order["id"]})["code"] == "not_your_order"
        completed = publisher.ok("order.confirm", {"order_id": order["id"]})["order"]
        assert completed["status"] == "completed" and "auto_confirm_at" not in completed
        for change in ("accepted", "picked_up", "delivered", "confirmed"):
            publisher.wait_event(changed(order["id"], change))
        assert shopper.wait_event(changed(order["id"], "confirmed"))["data"]["order"]["status"] == "completed"


def test_bounty_errand_goes_through_in_progress(server):
    with user(server) as publisher, runner(server) as helper:
        helper.ok("board.subscribe", {"types": ["bounty"]})
        order = publisher.ok("order.publish", bounty())["order"]
        helper.wait_event(feed("feed.enter", order["id"]))
        helper.ok("order.accept", {"order_id": order["id"]})
        helper.wait_event(feed("feed.leave", order["id"]))
        assert helper.error("order.pick_up", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert helper.ok("order.start", {"order_id": order["id"]})["order"]["status"] == "in_progress"
        publisher.wait_event(changed(order["id"], "in_progress"))
        assert helper.ok("order.deliver", {"order_id": order["id"]})["order"]["status"] == "delivered"
        publisher.wait_event(changed(order["id"], "delivered"))
        assert publisher.ok("order.confirm", {"order_id": order["id"]})["order"]["status"] == "completed"
        helper.wait_event(changed(order["id"], "confirmed"))
        history = helper.ok("orders.mine", {"role": "accepted", "scope": "history"})["orders"]
        assert [o["id"] for o in history] == [order["id"]]


def test_group_order_fills_and_completes(server):
    with user(server) as publisher, user(server) as first, user(server) as second, user(server) as late, \
            user(server) as watcher:
        watcher.ok("board.subscribe", {"types": ["group"]})
        order = publisher.ok("order.publish", group(capacity=2))["order"]
        assert order["tip"] == 0 and order["participant_count"] == 0 and "participants" not in order
        watcher.wait_event(feed("feed.enter", order["id"]))

        joined = first.ok("order.join", {"order_id": order["id"]})["order"]
        assert joined["status"] == "open" and joined["participants"] == [first.user["id"]]
        update = watcher.wait_event(feed("feed.update", order["id"]))["data"]["order"]
        assert update["participant_count"] == 1 and "participants" not in update, "others see only the count"
        assert publisher.wait_event(changed(order["id"], "joined"))["data"]["order"]["participants"] == [first.user["id"]]
        assert first.error("order.join", {"order_id": order["id"]})["code"] == "already_joined"

        full = second.ok("order.join", {"order_id": order["id"]})["order"]
        assert full["status"] == "full" and full["participant_count"] == 2
        assert watcher.wait_event(feed("feed.leave", order["id"]))["data"]["status"] == "full"
        assert late.error("order.join", {"order_id": order["id"]})["code"] == "group_full"
        assert late.error("order.leave", {"order_id": order["id"]})["code"] == "not_joined"

        assert second.ok("order.leave", {"order_id": order["id"]})["order"]["status"] == "open"
        watcher.wait_event(feed("feed.enter", order["id"]))
        second.ok("order.join", {"order_id": order["id"]})
        assert first.error("order.complete", {"order_id": order["id"]})["code"] == "not_your_order"
        completed = publisher.ok("order.complete", {"order_id": order["id"]})["order"]
        assert completed["status"] == "completed"
        for participant in (first, second):
            assert participant.wait_event(changed(order["id"], "completed"))["data"]["order"]["status"] == "completed"
        assert [o["id"] for o in first.ok("orders.mine", {"role": "joined"})["orders"]] == [order["id"]]
        assert publisher.error("order.rate", {"order_id": order["id"], "stars": 5})["code"] == "invalid_transition"


def test_private_fields_reach_only_the_two_parties(server):
    with user(server) as publisher, runner(server) as courier, runner(server) as other, user(server) as stranger:
        order = publisher.ok("order.publish", express(code=True))["order"]
        for viewer in (other, stranger):
            seen = viewer.ok("order.get", {"order_id": order["id"]})["order"]
            assert not {"pickup_code", "drop_off_room", "contact_phone"} & seen["details"].keys()
            assert "delivery_code" not in seen
        listed = [o for o in stranger.ok("board.list", {"types": ["express"]})["orders"] if o["id"] == order["id"]]
        assert listed and "pickup_code" not in listed[0]["details"] and "delivery_code" not in listed[0]

        courier.ok("order.accept", {"order_id": order["id"]})
        mine = courier.ok("order.get", {"order_id": order["id"]})["order"]
        assert mine["details"]["pickup_code"] == "8-2-1043" and "delivery_code" not in mine
        theirs = other.ok("order.get", {"order_id": order["id"]})["order"]
        assert "pickup_code" not in theirs["details"] and theirs["runner"] == courier.user["id"]
        assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["delivery_code"] == order["delivery_code"]


def test_only_the_parties_may_act(server):
    with user(server) as publisher, runner(server) as courier, runner(server) as rival, user(server) as novice:
        order = publisher.ok("order.publish", express())["order"]
        assert publisher.error("order.accept", {"order_id": order["id"]})["code"] == "forbidden"
        assert novice.error("order.accept", {"order_id": order["id"]})["code"] == "runner_not_verified"
        assert rival.error("order.cancel", {"order_id": order["id"]})["code"] == "not_your_order"
        assert rival.error("order.raise_tip", {"order_id": order["id"], "tip": 900})["code"] == "not_your_order"
        courier.ok("order.accept", {"order_id": order["id"]})
        assert rival.error("order.accept", {"order_id": order["id"]})["code"] == "order_taken"
        for op in ("order.pick_up", "order.abandon", "order.deliver"):
            assert rival.error(op, {"order_id": order["id"]})["code"] == "not_your_order", op
            assert publisher.error(op, {"order_id": order["id"]})["code"] == "not_your_order", op
        assert rival.error("order.confirm", {"order_id": order["id"]})["code"] == "not_your_order"
        assert rival.ok("order.get", {"order_id": order["id"]})["order"]["status"] == "accepted"


def test_illegal_transitions_are_refused_and_the_connection_stays_usable(server):
    with user(server) as publisher, runner(server) as courier:
        order = publisher.ok("order.publish", express())["order"]
        assert publisher.error("order.confirm", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert publisher.error("order.complete", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert courier.error("order.join", {"order_id": order["id"]})["code"] == "invalid_transition"
        courier.ok("order.accept", {"order_id": order["id"]})
        assert courier.error("order.start", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert courier.error("order.deliver", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert publisher.error("order.confirm", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert publisher.error("order.raise_tip", {"order_id": order["id"], "tip": 900})["code"] == "invalid_transition"
        assert courier.error("order.rate", {"order_id": order["id"], "stars": 5})["code"] == "invalid_transition"
        courier.ok("order.pick_up", {"order_id": order["id"]})
        assert courier.error("order.pick_up", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert courier.error("order.abandon", {"order_id": order["id"]})["code"] == "invalid_transition"
        courier.ok("order.deliver", {"order_id": order["id"]})
        assert publisher.error("order.cancel", {"order_id": order["id"], "reason": "late"})["code"] == "invalid_transition"
        publisher.ok("order.confirm", {"order_id": order["id"]})
        assert publisher.error("order.cancel", {"order_id": order["id"]})["code"] == "invalid_transition"
        assert courier.error("order.accept", {"order_id": order["id"]})["code"] == "order_closed"
        assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["status"] == "completed"


def test_unknown_orders_and_bad_ids(server):
    with user(server) as someone:
        assert someone.error("order.get", {"order_id": 999_999_999})["code"] == "not_found"
        assert someone.error("order.pick_up", {"order_id": 999_999_999})["code"] == "not_found"
        for bad in ({}, {"order_id": "12"}, {"order_id": 0}, {"order_id": -4}, {"order_id": 1.5}):
            error = someone.error("order.get", bad)
            assert error["code"] == "invalid_field" and error["field"] == "order_id", bad
        extra = someone.error("order.confirm", {"order_id": 1, "force": True})
        assert extra["code"] == "invalid_field" and extra["field"] == "force"
        for op in ("order.rate",):
            error = someone.error(op, {"order_id": 1, "stars": 6})
            assert error["code"] == "invalid_field" and error["field"] == "stars"
        error = someone.error("order.raise_tip", {"order_id": 1, "tip": -1})
        assert error["code"] == "invalid_field" and error["field"] == "tip"
        assert someone.ok("orders.mine")["orders"] == []


def test_order_operations_need_login(server):
    with connect(server) as anonymous:
        for op in ("order.get", "order.accept", "order.pick_up", "order.cancel", "board.list", "board.stats",
                   "orders.mine", "runner.earnings"):
            assert anonymous.error(op, {"order_id": 1} if op.startswith("order.") else {})["code"] == "unauthenticated"
