"""Bad input over raw sockets: whatever a client sends, the server answers with the right status
or close code, within its timeout, and keeps serving everyone else afterwards."""
import base64
import os
import re
import socket
import struct
import tempfile
import time

import pytest

from bbclient import ServerProcess
from conftest import server_binary

KEY = base64.b64encode(b"0123456789abcdef").decode()


@pytest.fixture(scope="module")
def strict_server():
    """A server with a short handshake timeout and a small output cap, so the timeout and
    slow-consumer cases finish in seconds."""
    with tempfile.TemporaryDirectory(prefix="bangbang-bad-input-") as data:
        process = ServerProcess.start(server_binary(), data,
                                      ["--echo", "--fsync", "never", "--handshake-timeout", "2",
                                       "--max-output-bytes", "65536"])
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture(autouse=True)
def still_serving_afterwards(strict_server):
    """After every case, a fresh client must still get a WebSocket echo and a health check."""
    yield
    assert strict_server.process.poll() is None, "the server died"
    sock = upgrade(strict_server, "/echo")
    sock.sendall(masked_frame(0x81, b"still there?"))
    opcode, payload = read_frame(sock)
    assert (opcode, payload) == (0x1, b"still there?")
    sock.close()
    assert http_exchange(strict_server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")


# MARK: helpers

def dial(server, timeout=10):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_to_end(sock, limit=1 << 20):
    chunks = []
    total = 0
    while total < limit:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def http_exchange(server, request, timeout=10):
    """Sends a raw request and returns everything the server sent before closing."""
    with dial(server, timeout) as sock:
        sock.sendall(request)
        return read_to_end(sock)


def status_of(response):
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", response)
    assert match, f"not an HTTP response: {response[:200]!r}"
    return int(match.group(1))


def handshake_request(path="/echo", version="13", extra=""):
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: {version}\r\n{extra}\r\n").encode()


def upgrade(server, path, extra=""):
    sock = dial(server)
    sock.sendall(handshake_request(path, extra=extra))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        assert chunk, f"closed during the handshake: {head!r}"
        head += chunk
    assert status_of(head) == 101, head
    return sock


def masked_frame(first_byte, payload, key=b"\x11\x22\x33\x44", length=None):
    length = len(payload) if length is None else length
    if length < 126:
        header = bytes([first_byte, 0x80 | length])
    elif length < 1 << 16:
        header = bytes([first_byte, 0x80 | 126]) + struct.pack("!H", length)
    else:
        header = bytes([first_byte, 0x80 | 127]) + struct.pack("!Q", length)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError(f"connection ended after {len(data)} of {count} bytes")
        data += chunk
    return data


def read_frame(sock):
    first, second = read_exact(sock, 2)
    assert second & 0x80 == 0, "server frames must not be masked"
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", read_exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", read_exact(sock, 8))[0]
    return first & 0x0F, read_exact(sock, length)


def close_code_after(sock, timeout=5):
    """Reads frames until the server's close frame; returns its code and checks the TCP end."""
    sock.settimeout(timeout)
    while True:
        opcode, payload = read_frame(sock)
        if opcode == 0x8:
            assert len(payload) >= 2
            code = struct.unpack("!H", payload[:2])[0]
            try:
                # Complete the handshake as a client must; after a protocol error the server
                # may already be gone, which is fine too.
                sock.sendall(masked_frame(0x88, payload[:2]))
            except OSError:
                pass
            assert read_to_end(sock) == b"", "bytes after the close frame"
            return code


# MARK: HTTP

@pytest.mark.parametrize("request_bytes", [
    pytest.param(b"GET /echo\r\n\r\n", id="request-line-without-version"),
    pytest.param(b"GET /echo HTTP/1.1\r\nHost x\r\n\r\n", id="header-without-colon"),
    pytest.param(b"GET /echo HTTP/1.1\r\nHo st: x\r\n\r\n", id="space-in-header-name"),
    pytest.param(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40, id="tls-hello-on-plain-port"),
    pytest.param(handshake_request(extra="Sec-WebSocket-Key: second\r\n"), id="two-keys"),
])
def test_malformed_requests_get_400_with_a_reason(strict_server, request_bytes):
    response = http_exchange(strict_server, request_bytes)
    assert status_of(response) == 400
    body = response.split(b"\r\n\r\n", 1)[1]
    assert len(body.strip()) > 0, "a 400 must say why"


def test_oversized_headers_get_431(strict_server):
    request = b"GET /echo HTTP/1.1\r\nHost: x\r\n" + b"X-Filler: " + b"a" * 100_000 + b"\r\n\r\n"
    assert status_of(http_exchange(strict_server, request)) == 431


def test_too_many_headers_get_431(strict_server):
    request = b"GET /echo HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(500)) + b"\r\n"
    assert status_of(http_exchange(strict_server, request)) == 431


def test_too_long_request_line_gets_414(strict_server):
    request = b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    assert status_of(http_exchange(strict_server, request)) == 414


def test_wrong_websocket_version_gets_426_naming_13(strict_server):
    response = http_exchange(strict_server, handshake_request(version="8"))
    assert status_of(response) == 426
    assert re.search(rb"(?im)^sec-websocket-version:\s*13\s*$", response.split(b"\r\n\r\n")[0])


def test_slowloris_is_cut_off_with_408_at_the_handshake_timeout(strict_server):
    with dial(strict_server) as sock:
        started = time.monotonic()
        sock.setblocking(False)
        response = b""
        for byte in handshake_request():
            try:
                sock.send(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(1)
            try:
                response += sock.recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                break
            if response:
                break
            assert time.monotonic() - started < 6, "still accepting bytes well past the 2 s timeout"
        sock.setblocking(True)
        sock.settimeout(5)
        response += read_to_end(sock)
        elapsed = time.monotonic() - started
    assert status_of(response) == 408
    assert 1.5 <= elapsed <= 4.5, f"closed after {elapsed:.1f} s, the timeout is 2 s"


def test_plain_get_endpoints_answer(strict_server):
    response = http_exchange(strict_server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(response) == 200 and response.endswith(b"ok\n")
    response = http_exchange(strict_server, b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(response) == 200 and response.endswith(b"ready\n")
    head = http_exchange(strict_server, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(head) == 200 and head.endswith(b"\r\n\r\n"), "HEAD must not carry a body"


def test_metrics_are_prometheus_text(strict_server):
    response = http_exchange(strict_server, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(response) == 200
    body = response.split(b"\r\n\r\n", 1)[1].decode()
    samples = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    assert samples["bangbang_connections_opened_total"] >= 1
    assert samples["bangbang_connections_open"] >= 1  # this very request
    assert samples["bangbang_process_resident_bytes"] > 1_000_000
    assert "# TYPE bangbang_bytes_in_total counter" in body


def test_unknown_path_gets_404_and_upgrade_to_it_too(strict_server):
    assert status_of(http_exchange(strict_server, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")) == 404
    assert status_of(http_exchange(strict_server, handshake_request(path="/nope"))) == 404


# MARK: after the handshake

def test_garbage_after_the_handshake_is_a_protocol_error(strict_server):
    sock = upgrade(strict_server, "/echo")
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # 'G' = 0x47: RSV3 set, opcode 7
    assert close_code_after(sock) == 1002
    sock.close()


def test_unmasked_client_frame_closes_with_1002(strict_server):
    sock = upgrade(strict_server, "/echo")
    sock.sendall(bytes([0x81, 5]) + b"hello")
    assert close_code_after(sock) == 1002
    sock.close()


def test_length_of_two_to_the_63_closes_with_1002(strict_server):
    sock = upgrade(strict_server, "/echo")
    sock.sendall(bytes([0x82, 0x80 | 127]) + struct.pack("!Q", 1 << 63) + b"\x00\x00\x00\x00")
    assert close_code_after(sock) == 1002
    sock.close()


def test_oversize_message_on_ws_closes_with_1009_before_the_payload(strict_server):
    sock = upgrade(strict_server, "/ws")
    # Only the header is sent: the limit must be enforced before any payload arrives.
    sock.sendall(bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 1 << 30) + b"\x00\x00\x00\x00")
    assert close_code_after(sock) == 1009
    sock.close()


def test_binary_message_on_ws_closes_with_1003(strict_server):
    sock = upgrade(strict_server, "/ws")
    sock.sendall(masked_frame(0x82, b"\x00\x01\x02"))
    assert close_code_after(sock) == 1003
    sock.close()


def test_invalid_utf8_text_closes_with_1007(strict_server):
    sock = upgrade(strict_server, "/echo")
    sock.sendall(masked_frame(0x81, "ok so far ".encode() + b"\xc0\xaf"))
    assert close_code_after(sock) == 1007
    sock.close()


def test_invalid_utf8_fails_on_the_first_fragment_not_the_last(strict_server):
    sock = upgrade(strict_server, "/echo")
    sock.sendall(masked_frame(0x01, b"\xed\xa0\x80"))  # a surrogate, in a non-final fragment
    assert close_code_after(sock) == 1007
    sock.close()


def test_slow_consumer_is_closed_and_server_memory_stays_bounded(strict_server):
    def resident():
        with open(f"/proc/{strict_server.process.pid}/status") as status:
            return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1)) * 1024

    before = resident()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(3)
    sock.connect(("127.0.0.1", strict_server.port))
    sock.sendall(handshake_request("/echo"))
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert status_of(head) == 101
    message = masked_frame(0x82, os.urandom(60_000))
    sent = 0
    ended = False
    started = time.monotonic()
    try:
        while sent < 256 * 1024 * 1024 and time.monotonic() - started < 20:
            sock.sendall(message)
            sent += len(message)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        ended = True
    peak = resident()
    if not ended:
        # The server may still be lingering over its close; wait for it to give up.
        sock.settimeout(15)
        received = read_to_end(sock, limit=1 << 30)
        assert len(received) < sent // 2, "the server kept echoing to a client that does not read"
    sock.close()
    assert sent > 512 * 1024, "the server stopped reading long before the output limit mattered"
    assert peak - before < 64 * 1024 * 1024, f"server grew by {(peak - before) >> 20} MiB for one slow reader"
    metrics = http_exchange(strict_server, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").decode()
    assert int(re.search(r"(?m)^bangbang_slow_consumer_disconnects_total (\d+)", metrics).group(1)) >= 1
