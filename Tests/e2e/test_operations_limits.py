"""Every limit tripped once, with the status or close code it promises and the metric that
counts it: connections overall and per address, handshake rate, Origin allow-list, message
size, request rate per connection and per user (and the close of a connection that floods on),
and the SMS limits."""
import json
import socket
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import connect as ws_connect

from bbclient import Client, fresh_phone
from test_operations import running, scrape, value


def refused_status(server, **options):
    """Opens a WebSocket that the server must refuse; returns the HTTP status it answered."""
    with pytest.raises(InvalidStatus) as refused:
        with ws_connect(server.url, open_timeout=10, **options):
            pass
    return refused.value.response.status_code


def test_max_connections_refuses_the_one_too_many():
    with running(["--dev", "--fsync", "never", "--max-connections", "3"]) as server:
        held = [Client(server.url) for _ in range(3)]
        with pytest.raises((InvalidHandshake, ConnectionClosed, OSError, EOFError)):
            Client(server.url)
        held.pop().close()
        time.sleep(0.2)
        with Client(server.url) as fourth:
            assert fourth.ok("info.get")
        assert value(scrape_once_admitted(server), "bangbang_connections_rejected_total") >= 1


def scrape_once_admitted(server, timeout=5.0):
    """Scrapes /metrics while the server may still be at its connection limit: a closed client's
    slot is free only once the server has seen its end of stream, and until then a new
    connection is refused (reset) as it should be."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return scrape(server)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_connections_per_address_are_capped_with_429():
    with running(["--dev", "--fsync", "never", "--max-connections-per-address", "2"]) as server:
        held = [Client(server.url), Client(server.url)]
        assert raw_handshake_status(server) == 429
        other = Client(server.url, source_address=("127.0.0.2", 0))
        assert other.ok("info.get")
        for connection in held + [other]:
            connection.close()
        assert value(scrape(server), "bangbang_handshake_failures_total",
                     '{reason="too_many_connections_from_address"}') >= 1


def raw_handshake_status(server, source="127.0.0.1"):
    """Sends an opening handshake over a plain socket and returns the response's status code."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(source, 0)) as raw:
        raw.sendall(b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = b""
        while b"\r\n" not in head:
            chunk = raw.recv(4096)
            assert chunk, "closed before a status line"
            head += chunk
        return int(head.split(b" ", 2)[1])


def test_handshakes_per_address_are_rate_limited_with_429():
    with running(["--dev", "--fsync", "never", "--handshakes-per-second-per-address", "1"]) as server:
        # ServerProcess.start made no connection, so the address starts with a full burst of 2.
        statuses = [raw_handshake_status(server) for _ in range(6)]
        assert statuses[:2] == [101, 101], "a burst of twice the rate is allowed"
        assert statuses[2:] == [429] * 4, statuses
        assert raw_handshake_status(server, source="127.0.0.3") == 101, "another address has its own budget"
        time.sleep(1.1)
        assert raw_handshake_status(server) == 101, "the budget comes back at the rate"
        time.sleep(2.1)
        assert value(scrape(server), "bangbang_handshake_failures_total", '{reason="handshake_rate"}') == 4


@pytest.fixture(scope="module")
def limited():
    with running(["--dev", "--fsync", "never", "--allowed-origin", "https://app.example.edu",
                  "--max-message-bytes", "2048", "--requests-per-second", "5", "--user-requests-per-second", "2",
                  "--sms-per-ip-hourly", "3"]) as server:
        yield server


def test_an_origin_not_allowed_is_refused_with_403(limited):
    assert refused_status(limited, origin="https://evil.example.com") == 403
    with Client(limited.url, origin="https://app.example.edu") as allowed:
        assert allowed.ok("info.get")
    with Client(limited.url) as native:
        assert native.ok("info.get"), "native apps send no Origin"
    assert value(scrape(limited), "bangbang_handshake_failures_total", '{reason="status_403"}') >= 1


def test_a_message_above_the_size_limit_closes_1009(limited):
    with Client(limited.url) as client:
        client.send_raw(json.dumps({"id": 1, "op": "info.get", "data": {"pad": "x" * 3000}}))
        with pytest.raises(ConnectionClosed) as closed:
            client.ws.recv(timeout=10)
        assert closed.value.rcvd.code == 1009


def burst(client, count, op="info.get"):
    """Sends `count` requests without waiting, then reads every reply (ids 1…count)."""
    for n in range(count):
        client.send_raw(json.dumps({"id": f"b{n}", "op": op}))
    replies = {}
    while len(replies) < count:
        message = client.receive()
        if "id" in message:
            replies[message["id"]] = message
    return [replies[f"b{n}"] for n in range(count)]


def test_requests_above_the_connection_rate_are_refused_then_a_flood_is_closed_1008(limited):
    before = scrape(limited)
    with Client(limited.url, source_address=("127.0.0.4", 0)) as client:
        replies = burst(client, 14)
        assert all(reply["ok"] for reply in replies[:10]), "a burst of twice the rate passes"
        refused = [reply for reply in replies if not reply["ok"]]
        assert refused and all(reply["error"]["code"] == "rate_limited" for reply in refused)
        assert "connection" in refused[0]["error"]["message"]
        time.sleep(1.0)
        assert client.ok("info.get"), "tokens come back at the configured rate"
        # Flooding on through a whole burst of refusals is not waiting one's turn.
        with pytest.raises(ConnectionClosed) as closed:
            for n in range(200):
                client.send_raw(json.dumps({"id": n, "op": "info.get"}))
            while True:
                client.ws.recv(timeout=10)
        assert closed.value.rcvd.code == 1008
    after = scrape(limited)
    assert value(after, "bangbang_rate_limited_total", '{limit="connection"}') >= \
        value(before, "bangbang_rate_limited_total", '{limit="connection"}') + 4
    assert value(after, "bangbang_rate_limited_total", '{limit="flood"}') >= 1
    assert value(after, "bangbang_requests_total", '{operation_result="info.get:rate_limited"}') >= 4


def test_a_user_is_limited_across_their_connections(limited):
    phone = fresh_phone()
    first = Client(limited.url, source_address=("127.0.0.5", 0))
    second = Client(limited.url, source_address=("127.0.0.6", 0))
    try:
        first.login(phone)
        time.sleep(1.0)
        token = first.token
        second.ok("auth.resume", {"token": token})
        time.sleep(2.0)  # both connection buckets and the user's bucket are full again
        replies = burst(first, 5, "profile.get") + burst(second, 5, "profile.get")
        refused = [reply for reply in replies if not reply["ok"]]
        # Each connection allows 10 at once; the user only 4 (and 2 more per second).
        assert 4 <= len(refused) <= 6, replies
        assert all(reply["error"]["code"] == "rate_limited" and "user" in reply["error"]["message"] for reply in refused)
    finally:
        first.close()
        second.close()
    assert value(scrape(limited), "bangbang_rate_limited_total", '{limit="user"}') >= 2


def test_sms_codes_are_limited_per_phone_and_per_address(limited):
    with Client(limited.url, source_address=("127.0.0.7", 0)) as client:
        phone = fresh_phone()
        client.ok("auth.request_code", {"phone": phone})
        again = client.error("auth.request_code", {"phone": phone})
        assert again["code"] == "rate_limited" and "just sent" in again["message"]
        client.ok("auth.request_code", {"phone": fresh_phone()})
        client.ok("auth.request_code", {"phone": fresh_phone()})
        assert client.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"
    assert value(scrape(limited), "bangbang_requests_total", '{operation_result="auth.request_code:rate_limited"}') >= 2
