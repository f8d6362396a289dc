"""A whole errand, message by message: the run that protocol/transcript.md shows. As a test it
checks the errand; with BANGBANG_TRANSCRIPT=path it also writes every message both connections
sent and received, in order, as the Markdown body of that page."""
import json
import os

from test_orders_support import approve, changed, connect, express, feed, fresh_phone


class Recorder:
    """Wraps a connection's socket so every text frame is logged with who sent it."""

    def __init__(self, log, name, ws):
        self.log, self.name, self.ws, self.paused = log, name, ws, False

    def send(self, text):
        if not self.paused:
            self.log.append((self.name, "→", json.loads(text)))
        self.ws.send(text)

    def recv(self, timeout=None):
        text = self.ws.recv(timeout=timeout)
        if not self.paused:
            self.log.append((self.name, "←", json.loads(text)))
        return text

    def __getattr__(self, attribute):
        return getattr(self.ws, attribute)


def pretty(value, depth=0):
    """JSON with short objects and arrays on one line, long ones broken up (same values)."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + 2 * depth <= 100 or not isinstance(value, (dict, list)):
        return flat
    pad = "  " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {pretty(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    return "[\n" + ",\n".join(pad + pretty(v, depth + 1) for v in value) + "\n" + "  " * depth + "]"


def render(log):
    lines = []
    for who, direction, message in log:
        verb = "sends" if direction == "→" else "receives"
        lines.append(f"**{who} {verb}** {direction}\n\n```json\n{pretty(message)}\n```\n")
    return "\n".join(lines)


def test_a_whole_errand_message_by_message(server):
    log = []
    with connect(server) as publisher, connect(server) as runner:
        publisher.ws = Recorder(log, "publisher", publisher.ws)
        runner.ws = Recorder(log, "runner", runner.ws)
        publisher.login(fresh_phone(), device="iPhone 15")
        runner.login(fresh_phone(), device="Redmi K70")
        runner.ws.paused = True
        approve(server, runner)
        runner.ws.paused = False

        runner.ok("board.subscribe", {"types": ["express"], "campus": "North"})
        order = publisher.ok("order.publish", express())["order"]
        publisher.wait_event(changed(order["id"], "published"))
        runner.wait_event(feed("feed.enter", order["id"]))
        runner.ok("order.accept", {"order_id": order["id"]})
        runner.wait_event(changed(order["id"], "accepted"))
        runner.wait_event(feed("feed.leave", order["id"]))
        publisher.wait_event(changed(order["id"], "accepted"))
        runner.ok("order.pick_up", {"order_id": order["id"]})
        runner.wait_event(changed(order["id"], "picked_up"))
        publisher.wait_event(changed(order["id"], "picked_up"))
        runner.ok("order.deliver", {"order_id": order["id"]})
        runner.wait_event(changed(order["id"], "delivered"))
        publisher.wait_event(changed(order["id"], "delivered"))
        final = publisher.ok("order.confirm", {"order_id": order["id"]})["order"]
        publisher.wait_event(changed(order["id"], "confirmed"))
        runner.wait_event(changed(order["id"], "confirmed"))
        assert final["status"] == "completed"
        assert [step["status"] for step in final["timeline"]] == ["open", "accepted", "picked_up", "delivered",
                                                                  "completed"]

    directions = {(who, direction) for who, direction, _ in log}
    assert directions == {("publisher", "→"), ("publisher", "←"), ("runner", "→"), ("runner", "←")}
    path = os.environ.get("BANGBANG_TRANSCRIPT")
    if path:
        with open(path, "w", encoding="utf-8") as output:
            output.write(render(log))
