"""The accept race: 50 verified runners on 50 connections tap "accept" on one order at the same
instant; exactly one wins, 49 are told `order_taken`, and the order is the winner's."""
import json
import threading

from test_orders_support import changed, express, feed, runner, user

RUNNERS = 50


def test_fifty_runners_race_for_one_order_and_exactly_one_wins(server):
    runners = [runner(server) for _ in range(RUNNERS)]
    try:
        for connection in runners:
            connection.ok("board.subscribe", {"types": ["express"]})
        stats = runners[0].ok("board.stats")["types"]["express"]
        assert stats["runners_online"] == RUNNERS
        with user(server) as publisher:
            order = publisher.ok("order.publish", express())["order"]
            for connection in runners:
                connection.wait_event(feed("feed.enter", order["id"]))

            # Send every accept first, then read the replies, so the requests overlap on the server.
            start = threading.Barrier(RUNNERS)
            replies = [None] * RUNNERS

            def race(index, connection):
                start.wait()
                connection.ws.send(json.dumps({"id": f"race-{index}", "op": "order.accept",
                                               "data": {"order_id": order["id"]}}))
                while True:
                    message = connection.receive(timeout=20)
                    if message.get("id") == f"race-{index}":
                        replies[index] = message
                        return
                    connection.events.append(message)

            threads = [threading.Thread(target=race, args=(i, c)) for i, c in enumerate(runners)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)

            winners = [i for i, reply in enumerate(replies) if reply and reply["ok"]]
            losers = [reply["error"]["code"] for reply in replies if reply and not reply["ok"]]
            assert len(winners) == 1, replies
            assert losers == ["order_taken"] * (RUNNERS - 1)
            winner = runners[winners[0]]
            assert replies[winners[0]]["data"]["order"]["runner"] == winner.user["id"]

            final = publisher.ok("order.get", {"order_id": order["id"]})["order"]
            assert final["status"] == "accepted" and final["runner"] == winner.user["id"]
            assert [step["status"] for step in final["timeline"]] == ["open", "accepted"]
            publisher.wait_event(changed(order["id"], "accepted"))
            for connection in runners:
                assert connection.wait_event(feed("feed.leave", order["id"]))["data"]["status"] == "accepted"
            assert runners[0].ok("board.stats")["types"]["express"]["open"] == 0
    finally:
        for connection in runners:
            connection.close()
