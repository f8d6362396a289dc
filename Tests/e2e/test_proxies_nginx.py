"""Behind nginx, as deploy/nginx.conf.example sets it up: the server takes the client's address
from X-Forwarded-For only because nginx's address is a --trusted-proxy, so every client gets its
own per-address limits; what a client writes into the header itself is never believed; a
connection relayed for a client off this machine is not loopback; and the server's pings keep
a WebSocket alive past nginx's read timeout."""
import os
import socket
import subprocess
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from bbclient import Client, fresh_phone
from proxies import binary, nginx
from test_operations import running, scrape, value

# 127.0.0.1 is nginx; 127.0.0.200 plays a CDN in front of it (a trusted hop too). Every other
# 127.x address is a client.
CDN = "127.0.0.200"
READ_TIMEOUT = 3


@pytest.fixture(scope="module")
def proxied():
    with running(["--dev", "--fsync", "never", "--trusted-proxy", "127.0.0.1", "--trusted-proxy", CDN,
                  "--sms-per-ip-hourly", "2", "--max-connections-per-address", "2", "--ping-interval", "1"]) as server, \
         running(["--dev", "--fsync", "never", "--trusted-proxy", "127.0.0.1", "--ping-interval", "60"]) as quiet, \
         nginx({"/": server.port, "/quiet/": quiet.port}, read_timeout=f"{READ_TIMEOUT}s") as proxy:
        yield server, quiet, proxy


def through(proxy, source, path="/ws", **options):
    return Client(f"ws://127.0.0.1:{proxy.port}{path}", source_address=(source, 0), **options)


def request_codes(client, count):
    return [client.call("auth.request_code", {"phone": fresh_phone()}) for _ in range(count)]


def test_clients_behind_nginx_each_get_their_own_sms_limit(proxied):
    server, _, proxy = proxied
    with through(proxy, "127.0.0.2") as first, through(proxy, "127.0.0.3") as second:
        assert all(reply["ok"] for reply in request_codes(first, 2))
        assert first.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"
        # Were nginx's address the client's, this one would be refused too.
        assert all(reply["ok"] for reply in request_codes(second, 2))
        assert second.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"
    assert value(scrape(server), "bangbang_client_address_source_total", '{source="x_forwarded_for"}') >= 2


def test_clients_behind_nginx_each_get_their_own_connection_limit(proxied):
    server, _, proxy = proxied
    held = [through(proxy, "127.0.0.4"), through(proxy, "127.0.0.4")]
    try:
        with pytest.raises(InvalidStatus) as refused:
            through(proxy, "127.0.0.4")
        assert refused.value.response.status_code == 429
        with through(proxy, "127.0.0.5") as other:
            assert other.ok("info.get")
    finally:
        for client in held:
            client.close()
    assert value(scrape(server), "bangbang_handshake_failures_total", '{reason="too_many_connections_from_address"}') >= 1


def test_a_spoofed_x_forwarded_for_straight_to_the_server_changes_nothing(proxied):
    server, _, _ = proxied
    before = value(scrape(server), "bangbang_forwarding_headers_ignored_total")
    spoofs = [{"X-Forwarded-For": "203.0.113.50"}, {"X-Forwarded-For": "203.0.113.51", "Forwarded": "for=203.0.113.52"}]
    with Client(server.url, source_address=("127.0.0.6", 0), additional_headers=spoofs[0]) as first:
        assert all(reply["ok"] for reply in request_codes(first, 2))
    with Client(server.url, source_address=("127.0.0.6", 0), additional_headers=spoofs[1]) as second:
        error = second.error("auth.request_code", {"phone": fresh_phone()})
        assert error["code"] == "rate_limited", "both are 127.0.0.6, whatever they claim"
    assert value(scrape(server), "bangbang_forwarding_headers_ignored_total") == before + 2
    lines = [line for line in server.log().splitlines() if "event=forwarding_headers_ignored" in line]
    assert len([line for line in lines if "remote=127.0.0.6" in line]) == 1, "logged once per peer"


def test_what_a_client_writes_into_the_headers_through_nginx_is_not_believed(proxied):
    server, _, proxy = proxied
    # nginx appends the real peer to the client's X-Forwarded-For and drops its Forwarded; the
    # walk from the right stops at 127.0.0.7, the first address that is not a trusted proxy.
    with through(proxy, "127.0.0.7", additional_headers={"X-Forwarded-For": "127.0.0.1, 203.0.113.60"}) as first:
        assert all(reply["ok"] for reply in request_codes(first, 2))
    with through(proxy, "127.0.0.7", additional_headers={"Forwarded": "for=203.0.113.61"}) as second:
        assert second.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"


def test_a_proxied_connection_presenting_the_admin_secret_is_refused_as_not_loopback(proxied):
    server, _, proxy = proxied
    secret = open(os.path.join(server.data_dir, "data", "admin-secret")).read().strip()
    # A client on the internet reaches nginx through the CDN: the walk skips the CDN (trusted)
    # and lands on 198.51.100.7.
    with through(proxy, CDN, additional_headers={"X-Forwarded-For": "198.51.100.7"}) as remote:
        error = remote.error("auth.admin_secret", {"secret": secret})
        assert error["code"] == "forbidden" and "loopback" in error["message"]
    assert "event=admin_secret_refused" in server.log() and "remote=198.51.100.7" in server.log()
    # The same secret from this machine, not proxied, is accepted: the refusal above is the address.
    with Client(server.url, source_address=("127.0.0.8", 0)) as local:
        assert "administrator" in local.ok("auth.admin_secret", {"secret": secret})
    assert value(scrape(server), "bangbang_admin_secret_logins_total", '{result="not_loopback"}') >= 1


def test_a_malformed_forwarding_header_from_the_trusted_proxy_is_400(proxied):
    server, _, _ = proxied
    # Straight from 127.0.0.1, which is the trusted proxy's address: its headers count.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    b"X-Forwarded-For: 203.0.113.7, not-an-address\r\n\r\n")
        response = b""
        while chunk := raw.recv(4096):
            response += chunk
    assert response.startswith(b"HTTP/1.1 400 ") and b"X-Forwarded-For" in response
    assert value(scrape(server), "bangbang_handshake_failures_total", '{reason="bad_forwarding_header"}') >= 1


def test_a_long_lived_connection_through_nginx_outlives_its_read_timeout_thanks_to_pings(proxied):
    _, _, proxy = proxied
    with through(proxy, "127.0.0.9") as client:
        assert client.ok("info.get")
        # Nothing from the application for longer than nginx's read timeout; the server's pings
        # (every idle second) are all nginx sees, and they keep the connection.
        with pytest.raises(TimeoutError):
            client.ws.recv(timeout=READ_TIMEOUT + 1.5)
        assert client.ok("info.get")


def test_without_pings_nginx_cuts_an_idle_connection_at_its_read_timeout(proxied):
    # The control for the test above: the same nginx in front of a server that pings only after a minute.
    _, _, proxy = proxied
    with through(proxy, "127.0.0.10", path="/quiet/ws") as client:
        assert client.ok("info.get")
        started = time.monotonic()
        with pytest.raises(ConnectionClosed):
            client.ws.recv(timeout=READ_TIMEOUT + 10)
        assert time.monotonic() - started >= READ_TIMEOUT - 0.5


def test_the_deployment_example_is_a_valid_nginx_configuration(tmp_path):
    # The example is a conf.d file: wrap it in a main configuration, with a certificate of our
    # own where it names Let's Encrypt's, and let nginx check it.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "1", "-subj", "/CN=bangbang.example.edu", "-keyout", tmp_path / "key.pem",
                    "-out", tmp_path / "cert.pem"], check=True, capture_output=True, timeout=60)
    example = open(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "nginx.conf.example")).read()
    live = "/etc/letsencrypt/live/bangbang.example.edu/"
    assert live + "fullchain.pem" in example and live + "privkey.pem" in example
    site = example.replace(live + "fullchain.pem", str(tmp_path / "cert.pem")).replace(live + "privkey.pem",
                                                                                      str(tmp_path / "key.pem"))
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(f"""
pid {tmp_path}/nginx.pid;
events {{ }}
http {{
    access_log {tmp_path}/access.log;
    include {tmp_path}/site.conf;
}}
""")
    result = subprocess.run([binary("nginx"), "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"),
                             "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
