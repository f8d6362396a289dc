"""The shortest path through the product: log in, publish, see it on the board live."""
import time

from bbclient import fresh_phone


def test_login_publish_and_feed(server):
    with server.client() as runner, server.client() as publisher:
        runner.login(fresh_phone())
        subscribed = runner.ok("board.subscribe", {"types": ["bounty"]})
        assert subscribed["seq"]["bounty"] >= 0
        publisher.login(fresh_phone())
        deadline = int(time.time() * 1000) + 3_600_000
        order = publisher.ok("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 300,
                                               "details": {"title": "carry", "description": "a box to dorm 3"}})["order"]
        assert order["status"] == "open" and order["tip"] == 300
        event = runner.wait_event(lambda e: e["event"] == "feed.enter")
        assert event["data"]["order"]["id"] == order["id"]
        assert event["type"] == "bounty"


def test_errors_keep_the_connection_usable(client):
    assert client.error("no.such.op")["code"] == "unknown_operation"
    assert client.error("order.publish", {})["code"] == "unauthenticated"
    client.send_raw("{not json")
    reply = client.receive()
    assert reply == {"id": None, "ok": False, "error": reply["error"]} and reply["error"]["code"] == "bad_request"
    assert client.ok("auth.request_code", {"phone": fresh_phone()})["dev_code"]
