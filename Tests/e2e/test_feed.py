"""Discover: board.list with its filters, sorts and pages; board.subscribe keeping a runner's
list exactly the open, matching orders; board.stats; and a user's own orders."""
import pytest

from test_orders_support import HOUR, bounty, express, feed, group, no_event, now_ms, runner, user


@pytest.fixture(scope="module")
def board(server):
    """A publisher and six open bounties on two campuses with tips 100…600 and deadlines in
    reverse order, published oldest first."""
    publisher = user(server)
    base = now_ms()
    orders = []
    for index in range(6):
        draft = bounty(tip=100 * (index + 1), title=f"Task {index} {'umbrella' if index % 2 else 'desk'}",
                       campus="East" if index < 3 else "West", deadline=base + (10 - index) * HOUR)
        orders.append(publisher.ok("order.publish", draft)["order"])
    yield publisher, orders
    publisher.close()


def ids(orders):
    return [o["id"] for o in orders]


def test_listing_sorts_and_filters(board):
    publisher, orders = board
    listed = publisher.ok("board.list", {"types": ["bounty"]})
    assert listed["total"] == 6 and ids(listed["orders"]) == ids(orders)[::-1], "newest first by default"
    assert "next_cursor" not in listed
    assert ids(publisher.ok("board.list", {"types": ["bounty"], "sort": "tip"})["orders"]) == ids(orders)[::-1]
    assert ids(publisher.ok("board.list", {"types": ["bounty"], "sort": "deadline"})["orders"]) == ids(orders)[::-1]
    east = publisher.ok("board.list", {"types": ["bounty"], "campus": "East", "sort": "tip"})
    assert east["total"] == 3 and ids(east["orders"]) == ids(orders[:3])[::-1]
    rich = publisher.ok("board.list", {"types": ["bounty"], "min_tip": 450})
    assert ids(rich["orders"]) == ids(orders[4:])[::-1]
    keyword = publisher.ok("board.list", {"types": ["bounty"], "keyword": "UMBRELLA"})
    assert ids(keyword["orders"]) == [orders[5]["id"], orders[3]["id"], orders[1]["id"]]
    assert publisher.ok("board.list", {"types": ["express", "group"]}) == {"orders": [], "total": 0}
    assert publisher.ok("board.list")["total"] == 6, "no types means every type"


def test_listing_pages_by_cursor_and_by_offset(board):
    publisher, orders = board
    seen = []
    request = {"types": ["bounty"], "sort": "tip", "limit": 4}
    page = publisher.ok("board.list", request)
    seen += ids(page["orders"])
    assert len(page["orders"]) == 4 and page["total"] == 6 and page["next_cursor"]
    page = publisher.ok("board.list", {**request, "cursor": page["next_cursor"]})
    seen += ids(page["orders"])
    assert "next_cursor" not in page
    assert seen == ids(orders)[::-1]
    assert ids(publisher.ok("board.list", {**request, "offset": 4})["orders"]) == ids(orders[:2])[::-1]
    for bad, field in (({"cursor": "garbage"}, "cursor"), ({"cursor": "1:2", "offset": 3}, "offset"),
                       ({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"offset": -1}, "offset"),
                       ({"sort": "random"}, "sort"), ({"types": []}, "types"), ({"types": ["taxi"]}, "types[0]"),
                       ({"types": "bounty"}, "types"), ({"min_tip": -1}, "min_tip"), ({"page": 2}, "page")):
        error = publisher.error("board.list", bad)
        assert error["code"] == "invalid_field" and error["field"] == field, (bad, error)


def test_feed_keeps_the_list_exactly_the_open_matching_orders(server):
    with user(server) as publisher, runner(server) as watcher, runner(server) as taker:
        subscribed = watcher.ok("board.subscribe", {"types": ["express"], "campus": "South", "keyword": "station"})
        assert subscribed["orders"] == [] and set(subscribed["seq"]) == {"express"}
        elsewhere = publisher.ok("order.publish", express(campus="North"))["order"]
        here = publisher.ok("order.publish", express(campus="South"))["order"]
        entered = watcher.wait_event(feed("feed.enter", here["id"]))
        assert entered["type"] == "express" and entered["seq"] > subscribed["seq"]["express"]
        no_event(watcher, feed("feed.enter", elsewhere["id"]))

        publisher.ok("order.raise_tip", {"order_id": here["id"], "tip": 999})
        assert watcher.wait_event(feed("feed.update", here["id"]))["data"]["order"]["tip"] == 999
        taker.ok("order.accept", {"order_id": here["id"]})
        assert watcher.wait_event(feed("feed.leave", here["id"]))["data"] == {"order_id": here["id"],
                                                                               "status": "accepted"}
        taker.ok("order.abandon", {"order_id": here["id"]})
        watcher.wait_event(feed("feed.enter", here["id"]))

        second = watcher.ok("board.subscribe", {"types": ["express", "bounty"]})
        assert here["id"] in ids(second["orders"]) and elsewhere["id"] in ids(second["orders"])
        assert set(second["seq"]) == {"express", "bounty"}
        watcher.ok("board.unsubscribe")
        later = publisher.ok("order.publish", express(campus="South"))["order"]
        no_event(watcher, lambda e: e["event"].startswith("feed."))
        assert watcher.ok("order.get", {"order_id": later["id"]})["order"]["status"] == "open"


def test_subscribe_refuses_bad_filters(server):
    with user(server) as someone:
        for bad, field in (({}, "types"), ({"types": []}, "types"), ({"types": ["express"], "sort": "x"}, "sort"),
                           ({"types": ["express"], "cursor": "1:1"}, "cursor"),
                           ({"types": ["express"], "limit": 500}, "limit")):
            error = someone.error("board.subscribe", bad)
            assert error["code"] == "invalid_field" and error["field"] == field, (bad, error)
        assert someone.error("board.unsubscribe", {"types": ["express"]})["field"] == "types"


def test_stats_count_open_orders_and_runners_watching_each_type(server):
    with user(server) as publisher, runner(server) as first, runner(server) as second, user(server) as novice:
        before = publisher.ok("board.stats")["types"]
        first.ok("board.subscribe", {"types": ["group", "purchase"]})
        second.ok("board.subscribe", {"types": ["group"]})
        novice.ok("board.subscribe", {"types": ["group"]})
        with runner(server) as third:
            third.ok("board.subscribe", {"types": ["group"]})
            publisher.ok("order.publish", group())
            stats = publisher.ok("board.stats")["types"]
            assert stats["group"]["open"] == before["group"]["open"] + 1
            assert stats["group"]["runners_online"] == before["group"]["runners_online"] + 3, \
                "approved runners only; an unverified user watching is not a runner"
            assert stats["purchase"]["runners_online"] == before["purchase"]["runners_online"] + 1
        second.ok("board.unsubscribe")
        after = publisher.ok("board.stats")["types"]["group"]
        assert after["runners_online"] == before["group"]["runners_online"] + 1
        assert publisher.error("board.stats", {"types": ["group"]})["field"] == "types"


def test_my_orders_by_role_and_scope(server):
    with user(server) as publisher, runner(server) as courier:
        first = publisher.ok("order.publish", express())["order"]
        second = publisher.ok("order.publish", bounty())["order"]
        third = publisher.ok("order.publish", express())["order"]
        publisher.ok("order.cancel", {"order_id": third["id"]})
        courier.ok("order.accept", {"order_id": first["id"]})

        mine = publisher.ok("orders.mine")["orders"]
        assert ids(mine) == [third["id"], second["id"], first["id"]], "published, every scope, newest first"
        assert mine[2]["details"]["pickup_code"] == "8-2-1043", "the publisher sees their own private fields"
        assert ids(publisher.ok("orders.mine", {"scope": "active"})["orders"]) == [second["id"], first["id"]]
        assert ids(publisher.ok("orders.mine", {"scope": "history"})["orders"]) == [third["id"]]
        assert ids(publisher.ok("orders.mine", {"limit": 1})["orders"]) == [third["id"]]
        assert publisher.ok("orders.mine", {"role": "accepted"})["orders"] == []
        running = courier.ok("orders.mine", {"role": "accepted", "scope": "active"})["orders"]
        assert ids(running) == [first["id"]] and running[0]["details"]["contact_phone"] == "+8613812345678"
        assert courier.ok("orders.mine")["orders"] == []
        assert courier.ok("runner.earnings") == {"completed_count": 0, "tips": 0, "cancellation_fees": 0, "total": 0,
                                                 "active_count": 1, "rating_count": 0, "rating_stars": 0}
        for bad, field in (({"role": "runner"}, "role"), ({"scope": "old"}, "scope"), ({"limit": 0}, "limit"),
                           ({"limit": 201}, "limit"), ({"user_id": 1}, "user_id")):
            error = publisher.error("orders.mine", bad)
            assert error["code"] == "invalid_field" and error["field"] == field, (bad, error)
        assert courier.error("runner.earnings", {"since": 0})["field"] == "since"
