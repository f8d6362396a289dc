"""Behind HAProxy in TCP mode with `send-proxy-v2`, as deploy/haproxy.cfg.example sets it up:
with --proxy-protocol the server reads the PROXY header before anything else (before TLS too),
takes the client's address from it, and refuses every connection that does not start with a
valid header from a trusted proxy by closing it without a byte in reply."""
import json
import os
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import types
import urllib.request

import pytest
from websockets.sync.client import connect as ws_connect

from bbclient import Client, fresh_phone
from proxies import binary, haproxy
from test_operations import running, scrape, value

INTERNET_CLIENT = "198.51.100.7"
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"


def v2_header(source="203.0.113.9", command=0x21, family=0x11, body=None, length=None):
    if body is None:
        body = socket.inet_aton(source) + socket.inet_aton("127.0.0.1") + struct.pack(">HH", 40000, 443)
    return V2_SIGNATURE + bytes([command, family]) + struct.pack(">H", len(body) if length is None else length) + body


@pytest.fixture(scope="module")
def cluster():
    with tempfile.TemporaryDirectory(prefix="bangbang-haproxy-tls-") as keys:
        cert, key = os.path.join(keys, "cert.pem"), os.path.join(keys, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=60)
        common = ["--dev", "--fsync", "never", "--proxy-protocol", "--trusted-proxy", "127.0.0.1"]
        with running(common + ["--sms-per-ip-hourly", "2", "--max-connections-per-address", "2"]) as server, \
             running(common + ["--tls-cert", cert, "--tls-key", key,
                               # The server's own limit on the opening handshake as generous as the
                               # TLS tests' client side: a debug build's first TLS handshakes are slow
                               # on a busy machine, and 10 s once ran out (408).
                               "--handshake-timeout", "60"]) as tls_server, \
             haproxy([{"upstream": server.port},
                      {"upstream": server.port, "rules": [f"tcp-request connection set-src ipv4({INTERNET_CLIENT})"]},
                      {"upstream": tls_server.port}]) as proxy:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.load_verify_locations(cert)
            yield types.SimpleNamespace(server=server, tls_server=tls_server, proxy=proxy, plain=proxy.ports[0],
                                        internet=proxy.ports[1], tls=proxy.ports[2], context=context)


def through(port, source="127.0.0.1"):
    return Client(f"ws://127.0.0.1:{port}/ws", source_address=(source, 0))


def handshake_status(port, source):
    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as raw:
        try:
            raw.sendall(b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        except OSError:
            pass   # already answered and closed
        head = b""
        while b"\r\n" not in head and (chunk := raw.recv(4096)):
            head += chunk
        return int(head.split(b" ", 2)[1])


def via(port):
    """Something `scrape` can read /metrics through: HAProxy's port."""
    return types.SimpleNamespace(port=port)


def test_clients_behind_haproxy_each_get_their_own_sms_and_connection_limits(cluster):
    with through(cluster.plain, "127.0.0.2") as first, through(cluster.plain, "127.0.0.3") as second:
        for client in (first, second):
            assert client.ok("auth.request_code", {"phone": fresh_phone()})
            assert client.ok("auth.request_code", {"phone": fresh_phone()})
            assert client.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"
    held = [through(cluster.plain, "127.0.0.4"), through(cluster.plain, "127.0.0.4")]
    try:
        # Over a plain socket: with the PROXY header the server knows the client at once and
        # answers 429 before the request is even sent, which the WebSocket client cannot take.
        assert handshake_status(cluster.plain, "127.0.0.4") == 429
        with through(cluster.plain, "127.0.0.5") as other:
            assert other.ok("info.get")
    finally:
        for client in held:
            client.close()
    assert value(scrape(via(cluster.plain)), "bangbang_client_address_source_total", '{source="proxy_protocol"}') >= 4


def test_a_connection_haproxy_relays_from_the_internet_is_not_loopback(cluster):
    secret = open(os.path.join(cluster.server.data_dir, "data", "admin-secret")).read().strip()
    with through(cluster.internet) as remote:
        error = remote.error("auth.admin_secret", {"secret": secret})
        assert error["code"] == "forbidden"
    assert f"remote={INTERNET_CLIENT}" in cluster.server.log()
    # A client on this machine through the proxy on this machine is loopback all the way.
    with through(cluster.plain, "127.0.0.6") as local:
        assert "administrator" in local.ok("auth.admin_secret", {"secret": secret})


def test_the_proxy_header_is_read_before_the_tls_client_hello(cluster):
    # A generous opening timeout, as for the other TLS tests: a debug build's handshake is slow
    # on a busy machine.
    with ws_connect(f"wss://127.0.0.1:{cluster.tls}/ws", ssl=cluster.context, open_timeout=30,
                    source_address=("127.0.0.7", 0)) as ws:
        ws.send(json.dumps({"id": 1, "op": "info.get"}))
        assert json.loads(ws.recv(timeout=10))["ok"]
    status, text = http_get(cluster.tls, "/metrics", context=cluster.context)
    assert status == 200 and 'bangbang_client_address_source_total{source="proxy_protocol"}' in text


def http_get(port, path, context=None):
    scheme = "https" if context else "http"
    with urllib.request.urlopen(f"{scheme}://127.0.0.1:{port}{path}", timeout=30, context=context) as response:
        return response.status, response.read().decode()


def answer_to(server, chunks, source="127.0.0.1", half_close=True, pause=0.0):
    """Sends `chunks` straight to the server (one send each, `pause` apart), then everything it says back."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(source, 0)) as raw:
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for chunk in chunks:
                raw.sendall(chunk)
                if pause:
                    time.sleep(pause)
            if half_close:
                raw.shutdown(socket.SHUT_WR)
            received = b""
            while chunk := raw.recv(4096):
                received += chunk
            return received
        except OSError:   # reset, or not connected any more: the server closed on unread input
            return b""


BAD_HEADERS = {
    "truncated v2": [v2_header()[:20]],
    "truncated v1": [b"PROXY TCP4 203.0.113.9 127.0.0.1 4000"],
    "wrong signature": [b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"],
    "tls without a header": [b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"],
    "v2 signature with a wrong byte": [V2_SIGNATURE[:-1] + b"\r" + v2_header()[12:]],
    "v2 length too short for IPv4": [v2_header(body=b"\x01" * 8)],
    "v2 length longer than accepted": [v2_header(length=0xFFFF)],
    "v2 TLV past the length": [v2_header(body=v2_header()[16:] + b"\x01\x00\x09ab")],
    "v2 version 1": [v2_header(command=0x11)],
    "v1 bad port": [b"PROXY TCP4 203.0.113.9 127.0.0.1 4000 99999\r\nGET /healthz HTTP/1.1\r\n\r\n"],
}


@pytest.mark.parametrize("name", BAD_HEADERS)
def test_a_bad_proxy_header_is_refused_by_closing_without_a_reply(cluster, name):
    assert answer_to(cluster.server, BAD_HEADERS[name]) == b""


def test_a_bad_header_one_byte_at_a_time_is_refused_too(cluster):
    header = b"PROXY TCP4 203.0.113.9 127.0.0.1 4000 99999\r\n"
    assert answer_to(cluster.server, [header[i:i + 1] for i in range(len(header))], pause=0.002) == b""


def test_a_good_header_one_byte_at_a_time_is_read(cluster):
    for header in (v2_header(), b"PROXY TCP4 203.0.113.9 127.0.0.1 4000 443\r\n"):
        chunks = [header[i:i + 1] for i in range(len(header))] + [b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"]
        assert answer_to(cluster.server, chunks, half_close=False, pause=0.002).startswith(b"HTTP/1.1 200 ")


def test_a_valid_header_from_a_peer_that_is_not_a_trusted_proxy_is_refused(cluster):
    request = v2_header() + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    assert answer_to(cluster.server, [request], source="127.0.0.9", half_close=False) == b""
    assert answer_to(cluster.server, [request], half_close=False).startswith(b"HTTP/1.1 200 "), "the same from 127.0.0.1"


def test_refusals_are_counted_and_logged_and_the_server_keeps_serving(cluster):
    # Runs after the refusals above (pytest keeps file order).
    samples = scrape(via(cluster.plain))
    assert value(samples, "bangbang_handshake_failures_total", '{reason="proxy_header_invalid"}') >= len(BAD_HEADERS) + 1
    assert value(samples, "bangbang_handshake_failures_total", '{reason="proxy_untrusted_peer"}') >= 1
    log = cluster.server.log()
    assert "reason=proxy_header_invalid" in log and "PROXY v2 length" in log and "the connection ended inside" in log
    assert cluster.server.process.poll() is None
    assert http_get(cluster.plain, "/healthz") == (200, "ok\n")


def test_the_deployment_example_is_a_valid_haproxy_configuration():
    example = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "haproxy.cfg.example")
    result = subprocess.run([binary("haproxy"), "-c", "-f", example], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
