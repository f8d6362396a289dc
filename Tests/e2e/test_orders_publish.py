"""order.publish: every type accepted with its own fields, and every bad input refused with
`invalid_field` naming the field by its path in the request."""
import copy

import pytest

from test_orders_support import HOUR, bounty, express, group, now_ms, purchase, request_validator, user


@pytest.fixture(scope="module")
def publisher(server):
    with user(server) as connection:
        yield connection


def test_each_type_is_published_with_its_own_fields(publisher):
    ids = set()
    for draft in (express(), purchase(), bounty(), group(capacity=3, minimum_fill=2)):
        order = publisher.ok("order.publish", draft)["order"]
        assert order["type"] == draft["type"] and order["status"] == "open"
        assert order["publisher"] == publisher.user["id"] and order["deadline"] == draft["deadline"]
        assert order["timeline"] == [{"status": "open", "at": order["created_at"], "actor": publisher.user["id"]}]
        ids.add(order["id"])
    assert len(ids) == 4, "every order gets its own id"


def test_defaults_fill_optional_fields(publisher):
    draft = express()
    del draft["details"]["parcel_size"], draft["details"]["pickup_code"]
    order = publisher.ok("order.publish", draft)["order"]
    assert order["details"]["parcel_size"] == "small" and "pickup_code" not in order["details"]
    assert "delivery_code" not in order
    assert publisher.ok("order.publish", group())["order"]["tip"] == 0, "a group order needs no tip"


def edited(draft, path, value=...):
    """A copy of `draft` with the member at `path` (a list of keys) set, or removed when no value is given."""
    copied = copy.deepcopy(draft)
    target = copied
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copied


BAD_INPUTS = [
    # (draft, path, value or ... to remove, field named in the error)
    (express(), ["type"], ..., "type"),
    (express(), ["type"], "parcel", "type"),
    (express(), ["campus"], ..., "campus"),
    (express(), ["campus"], "   ", "campus"),
    (express(), ["campus"], 7, "campus"),
    (express(), ["deadline"], ..., "deadline"),
    (express(), ["deadline"], "tomorrow", "deadline"),
    (express(), ["deadline"], now_ms() - 1000, "deadline"),
    (express(), ["deadline"], now_ms() + 40 * 24 * HOUR, "deadline"),
    (express(), ["tip"], ..., "tip"),
    (express(), ["tip"], "300", "tip"),
    (express(), ["tip"], 2.5, "tip"),
    (express(), ["tip"], -1, "tip"),
    (express(), ["tip"], 50_001, "tip"),
    (express(), ["tips"], 300, "tips"),
    (express(), ["delivery_code"], "yes", "delivery_code"),
    (express(), ["details"], ..., "details"),
    (express(), ["details"], "parcel", "details"),
    (express(), ["details", "pickup_station"], ..., "details.pickup_station"),
    (express(), ["details", "pickup_station"], "x" * 61, "details.pickup_station"),
    (express(), ["details", "parcel_size"], "huge", "details.parcel_size"),
    (express(), ["details", "contact_phone"], "12345", "details.contact_phone"),
    (express(), ["details", "weight"], 3, "details.weight"),
    (purchase(), ["details", "items"], [], "details.items"),
    (purchase(), ["details", "items"], "milk", "details.items"),
    (purchase(), ["details", "items", 1, "qty"], 0, "details.items[1].qty"),
    (purchase(), ["details", "items", 1, "qty"], "2", "details.items[1].qty"),
    (purchase(), ["details", "items", 0, "name"], ..., "details.items[0].name"),
    (purchase(), ["details", "items", 0, "price"], 5, "details.items[0].price"),
    (purchase(), ["details", "goods_budget"], -5, "details.goods_budget"),
    (purchase(), ["details", "drop_off_place"], ..., "details.drop_off_place"),
    (bounty(), ["details", "title"], ..., "details.title"),
    (bounty(), ["details", "description"], "", "details.description"),
    (bounty(), ["details", "description"], "x" * 1001, "details.description"),
    (group(), ["details", "kind"], "taxi", "details.kind"),
    (group(), ["details", "capacity"], 1, "details.capacity"),
    (group(), ["details", "capacity"], 51, "details.capacity"),
    (group(), ["details", "minimum_fill"], 5, "details.minimum_fill"),
    (group(), ["details", "closes_at"], now_ms() + 3 * HOUR, "details.closes_at"),
    (group(), ["details", "closes_at"], now_ms() - 1, "details.closes_at"),
    (group(), ["details", "price_per_share"], -1, "details.price_per_share"),
    (group(), ["tip"], -1, "tip"),
    (group(), ["details", "pickup_station"], "A", "details.pickup_station"),
]


@pytest.mark.parametrize("draft,path,value,field", BAD_INPUTS,
                         ids=[f"{d['type']}:{'.'.join(map(str, p))}" for d, p, _, _ in BAD_INPUTS])
def test_bad_input_names_the_field(publisher, draft, path, value, field):
    error = publisher.error("order.publish", edited(draft, path, value))
    assert error["code"] == "invalid_field", error
    assert error["field"] == field, error
    assert error["message"]


def test_publish_data_must_be_an_object(publisher):
    reply = publisher.call("order.publish", [])
    assert not reply["ok"] and reply["error"]["code"] in ("invalid_field", "bad_request")
    assert publisher.ok("order.publish", bounty())["order"]["status"] == "open", "the connection stays usable"


# Checks that depend on the clock or on other fields, which a JSON Schema cannot express.
NOT_IN_SCHEMA = {("express", "campus", "   "), ("bounty", "details.description", ""),
                 ("express", "deadline"), ("group", "details.minimum_fill"), ("group", "details.closes_at")}


def _schema_exempt(draft, path, value):
    dotted = ".".join(map(str, path))
    return ((draft["type"], dotted) in NOT_IN_SCHEMA and isinstance(value, int)) \
        or (isinstance(value, str) and (draft["type"], dotted, value) in NOT_IN_SCHEMA)


def test_the_spec_schema_agrees_with_the_server():
    """Every draft the server accepts matches `order.publish`'s request schema, and every bad
    input above that a schema can express is refused by it too."""
    validator = request_validator("order.publish")
    for draft in (express(code=True), purchase(), bounty(), group(minimum_fill=2)):
        validator.validate(draft)
    for draft, path, value, field in BAD_INPUTS:
        if not _schema_exempt(draft, path, value):
            assert not validator.is_valid(edited(draft, path, value)), field
