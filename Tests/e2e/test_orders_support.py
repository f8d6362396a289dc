"""Shared helpers of the order, board and feed end-to-end tests (no tests of its own).

Every user gets a connection from its own loopback source address (127.1.x.y), so the per-IP
SMS-code limit and any per-address connection cap see 50 runners as 50 phones, as in real life."""
import itertools
import time

import pytest

import jsonschema

from bbclient import _REGISTRY, Client, admin, fresh_phone

HOUR = 3_600_000
_addresses = itertools.count(1)


def now_ms():
    return int(time.time() * 1000)


def connect(server):
    """A new connection from a loopback address no other connection of this run uses."""
    n = next(_addresses)
    return Client(server.url, source_address=(f"127.1.{n // 250}.{n % 250 + 1}", 0))


def user(server):
    """A logged-in connection of a brand-new user."""
    connection = connect(server)
    connection.login(fresh_phone())
    return connection


# --- Runner approval ------------------------------------------------------------------------
# Approval goes through the account side's operations; the request shapes are kept here, in
# one place, so they can follow that side's spec.
SUBMIT_OP = "runner.submit_verification"
DECIDE_OP = "admin.decide_verification"


class Administrator:
    """One administrator connection per server: the admin phone may ask for a code only once a
    minute, so it logs in once and approves everyone."""

    _by_server = {}

    @classmethod
    def of(cls, server):
        if server not in cls._by_server:
            cls._by_server[server] = admin(server)
        return cls._by_server[server]


def approve(server, runner):
    """Makes `runner` a verified runner; skips the test when the server has no verification
    operations yet."""
    submitted = runner.call(SUBMIT_OP, {"real_name": "Li Lei", "student_id": f"S{runner.user['id']}",
                                        "school": "North"})
    if not submitted["ok"] and submitted["error"]["code"] == "unknown_operation":
        pytest.skip(f"{SUBMIT_OP} is not on this server yet: runners cannot be approved")
    assert submitted["ok"], submitted
    administrator = Administrator.of(server)
    decided = administrator.call(DECIDE_OP, {"user_id": runner.user["id"], "decision": "approve"})
    if not decided["ok"] and decided["error"]["code"] == "unknown_operation":
        pytest.skip(f"{DECIDE_OP} is not on this server yet: runners cannot be approved")
    assert decided["ok"], decided
    runner.wait_event(lambda e: e["event"] == "runner.verification_decided")
    return runner


def runner(server):
    return approve(server, user(server))


# --- Drafts of the four types ----------------------------------------------------------------

def express(deadline=None, tip=300, code=False, campus="North"):
    request = {"type": "express", "campus": campus, "deadline": deadline or now_ms() + HOUR, "tip": tip,
               "details": {"pickup_station": "Cainiao station 3", "pickup_code": "8-2-1043",
                           "parcel_size": "medium", "drop_off_place": "Dorm 7", "drop_off_room": "512",
                           "contact_phone": "+8613812345678"}}
    if code:
        request["delivery_code"] = True
    return request


def purchase(tip=200, campus="North"):
    return {"type": "purchase", "campus": campus, "deadline": now_ms() + HOUR, "tip": tip,
            "details": {"items": [{"name": "Oat milk", "qty": 2, "note": "cold"}, {"name": "Bread", "qty": 1}],
                        "store": "FamilyMart", "goods_budget": 2500, "drop_off_place": "Library",
                        "drop_off_room": "B2-14"}}


def bounty(tip=500, title="Lost umbrella", campus="South", deadline=None):
    return {"type": "bounty", "campus": campus, "deadline": deadline or now_ms() + HOUR, "tip": tip,
            "details": {"title": title, "description": "Black, near the gym", "place": "Gym"}}


def group(capacity=2, minimum_fill=None, closes_in=HOUR, deadline_in=2 * HOUR):
    details = {"kind": "carpool", "subject": "Campus to airport", "closes_at": now_ms() + closes_in,
               "capacity": capacity, "price_per_share": 3000}
    if minimum_fill is not None:
        details["minimum_fill"] = minimum_fill
    return {"type": "group", "campus": "North", "deadline": now_ms() + deadline_in, "details": details}


def changed(order_id, change=None):
    """A predicate for the personal `order.changed` event of one order (and one change)."""
    def matches(event):
        return (event["event"] == "order.changed" and event["data"]["order"]["id"] == order_id
                and (change is None or event["data"]["change"] == change))
    return matches


def feed(name, order_id):
    """A predicate for a board feed event about one order."""
    def matches(event):
        if event["event"] != name:
            return False
        data = event["data"]
        return (data["order"]["id"] if "order" in data else data["order_id"]) == order_id
    return matches


def no_event(connection, predicate, wait=0.5):
    """Asserts that nothing matching `predicate` arrives within `wait` seconds."""
    try:
        event = connection.wait_event(predicate, timeout=wait)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected event {event}")


def request_validator(op):
    """A validator of `op`'s request schema in protocol/schemas/ops-orders.json."""
    return jsonschema.Draft202012Validator({"$ref": f"ops-orders.json#/$defs/{op}/properties/request"},
                                           registry=_REGISTRY)
