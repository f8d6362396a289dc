"""The history archive over real connections: with `--rating-window-days 0` a closed order leaves
memory for `archive.sqlite` at once, and from then on every query that reaches history (order.get,
orders.mine pages, runner.earnings) answers from the archive exactly as it did from memory, across
a `kill -9` and restart; the archive file is plain SQLite that an operator can query; a foreign
file in its place is refused at start with a clear message, and the server never starts over it."""
import os
import shutil
import sqlite3
import time
import urllib.request

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary
from test_orders_support import approve, connect, express

ADMIN_PHONE = "+8613000000000"
ARGUMENTS = ["--dev", "--fsync", "always", "--admin-phone", ADMIN_PHONE, "--rating-window-days", "0",
             "--sms-per-ip-hourly", "0", "--requests-per-second", "0", "--user-requests-per-second", "0"]


def start(data_dir):
    return ServerProcess.start(server_binary(), data_dir, ARGUMENTS)


def metric(server, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not in /metrics")


def wait_until_archived(server, count, timeout=15):
    """Until `count` orders are in the archive and gone from the boards' memory."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (metric(server, "bangbang_archived_orders_total") >= count
                and metric(server, "bangbang_archive_pending_orders") == 0
                and metric(server, "bangbang_orders_moved_to_archive_total") >= count):
            return
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} orders reached the archive in {timeout} s")


def history_pages(client, role, limit):
    """Every order of the caller's history, page by page, checking the pages do not overlap."""
    seen, cursor = [], None
    while True:
        request = {"role": role, "scope": "history", "limit": limit}
        if cursor:
            request["cursor"] = cursor
        page = client.ok("orders.mine", request)
        assert len(page["orders"]) <= limit
        seen.extend(page["orders"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    ids = [order["id"] for order in seen]
    assert len(ids) == len(set(ids)), f"an order appears on two pages: {ids}"
    return seen


def comparable(order):
    """What must not change when an order moves from memory to the archive."""
    return {key: order.get(key) for key in ("id", "type", "status", "tip", "runner", "publisher", "revision",
                                             "created_at", "timeline", "details")}


@pytest.fixture
def archived_world(tmp_path):
    """A server where a runner completed two errands and a third was cancelled unaccepted; a
    fourth stays open. Yields (server, what each party saw of each order when it closed, tokens)."""
    server = start(str(tmp_path))
    try:
        with connect(server) as publisher, connect(server) as courier:
            publisher.login(fresh_phone())
            courier.login(fresh_phone())
            approve(server, courier)
            closed = {}
            for tip in (300, 450):
                order = publisher.ok("order.publish", express(code=True, tip=tip))["order"]
                courier.ok("order.accept", {"order_id": order["id"]})
                courier.ok("order.pick_up", {"order_id": order["id"]})
                done = courier.ok("order.deliver", {"order_id": order["id"], "code": order["delivery_code"]})["order"]
                assert done["status"] == "completed"
                closed[order["id"]] = publisher.ok("order.get", {"order_id": order["id"]})["order"]
            cancelled = publisher.ok("order.publish", express())["order"]
            closed[cancelled["id"]] = publisher.ok("order.cancel", {"order_id": cancelled["id"]})["order"]
            assert closed[cancelled["id"]]["status"] == "cancelled"
            still_open = publisher.ok("order.publish", express())["order"]
            tokens = (publisher.token, courier.token, still_open["id"])
        wait_until_archived(server, 3)
        yield server, closed, tokens
    finally:
        server.stop()


def check_history(server, closed, tokens):
    publisher_token, courier_token, open_id = tokens
    with server.client() as publisher, server.client() as courier:
        publisher.ok("auth.resume", {"token": publisher_token})
        courier.ok("auth.resume", {"token": courier_token})
        for order_id, before in closed.items():
            now = publisher.ok("order.get", {"order_id": order_id})["order"]
            assert comparable(now) == comparable(before), f"order {order_id} changed on its way to the archive"
        history = history_pages(publisher, "published", limit=1)
        assert sorted(order["id"] for order in history) == sorted(closed)
        created = [(order["created_at"], order["id"]) for order in history]
        assert created == sorted(created, reverse=True), "history is newest first"
        assert open_id in [order["id"] for order in publisher.ok("orders.mine", {"scope": "active"})["orders"]]
        ran = history_pages(courier, "accepted", limit=1)
        assert sorted(order["status"] for order in ran) == ["completed", "completed"]
        earnings = courier.ok("runner.earnings")
        assert earnings["completed_count"] == 2 and earnings["tips"] == 750
        completed = next(order_id for order_id, order in closed.items() if order["status"] == "completed")
        refused = publisher.error("order.rate", {"order_id": completed, "stars": 5})
        assert refused["code"] == "invalid_transition" and "rating window" in refused["message"]


def test_closed_orders_answer_from_the_archive_before_and_after_a_crash(archived_world):
    server, closed, tokens = archived_world
    check_history(server, closed, tokens)
    server.process.kill()
    server.process.wait()
    with open(server.log_path, "rb") as log, open(server.log_path + ".previous", "ab") as kept:
        kept.write(log.read())
    open(server.log_path, "wb").close()
    restarted = start(server.data_dir)
    try:
        check_history(restarted, closed, tokens)
        assert metric(restarted, "bangbang_archive_pending_orders") == 0
    finally:
        restarted.stop()


def test_the_archive_is_plain_sqlite_an_operator_can_query(archived_world):
    server, closed, _ = archived_world
    path = os.path.join(server.data_dir, "data", "archive.sqlite")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as database:
        rows = dict(database.execute("SELECT id, status FROM orders").fetchall())
        earned = database.execute("SELECT SUM(runner_earning) FROM orders WHERE status = 'completed'").fetchone()[0]
    assert rows == {str(order_id): order["status"] for order_id, order in closed.items()}
    assert earned == 750


def test_a_foreign_file_in_place_of_the_archive_is_refused(archived_world, tmp_path):
    server, _, _ = archived_world
    server.stop()
    copy = tmp_path / "copy"
    shutil.copytree(server.data_dir + "/data", copy / "data", ignore=shutil.ignore_patterns("*.log"))
    archive = copy / "data" / "archive.sqlite"
    for leftover in ("archive.sqlite-wal", "archive.sqlite-shm"):
        (copy / "data" / leftover).unlink(missing_ok=True)
    with sqlite3.connect(archive.with_name("foreign.sqlite")) as other:
        other.execute("CREATE TABLE notes(text TEXT)")
    os.replace(archive.with_name("foreign.sqlite"), archive)
    with pytest.raises(RuntimeError) as refused:
        start(str(copy)).stop()
    message = str(refused.value)
    assert "archive" in message and "exited with 70" in message, message
    with sqlite3.connect(archive) as still_foreign:
        assert still_foreign.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)], \
            "the refused file was changed"
