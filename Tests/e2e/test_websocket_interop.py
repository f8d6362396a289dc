"""Interop: the independent `websockets` client against our server's /echo and /ws.

Every test runs with and without permessage-deflate where compression can matter, so both the
plain and the inflate/deflate paths of the server are exercised by a second implementation."""
import os
import signal
import ssl
import struct
import subprocess
import tempfile
import time
import warnings

import pytest
from websockets.exceptions import ConnectionClosed, ConnectionClosedError
from websockets.sync.client import connect

from bbclient import ServerProcess
from conftest import server_binary

COMPRESSION = [pytest.param(None, id="plain"), pytest.param("deflate", id="deflate")]
BIG = 16 * 1024 * 1024


def echo_url(server, scheme="ws"):
    return f"{scheme}://127.0.0.1:{server.port}/echo"


def open_echo(server, compression, **options):
    return connect(echo_url(server), compression=compression, max_size=2 * BIG, open_timeout=10,
                   close_timeout=10, **options)


def masked_frame(first_byte, payload, key=b"\x01\x02\x03\x04"):
    """A client frame built by hand, for what the library refuses to send."""
    length = len(payload)
    if length < 126:
        header = bytes([first_byte, 0x80 | length])
    elif length < 1 << 16:
        header = bytes([first_byte, 0x80 | 126]) + struct.pack("!H", length)
    else:
        header = bytes([first_byte, 0x80 | 127]) + struct.pack("!Q", length)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def closed_code(ws, timeout=10):
    """Reads until the server ends the connection and returns the close code it sent."""
    with pytest.raises(ConnectionClosed) as closed:
        deadline = time.monotonic() + timeout
        while True:
            ws.recv(timeout=max(0.01, deadline - time.monotonic()))
    assert closed.value.rcvd is not None, "the server dropped the connection without a close frame"
    return closed.value.rcvd.code


# MARK: messages

@pytest.mark.parametrize("compression", COMPRESSION)
def test_text_and_binary_messages_echo_unchanged(server, compression):
    with open_echo(server, compression) as ws:
        for text in ["", "hello", "帮帮 ✓ 🚀", "x" * 125, "y" * 126, "z" * 65_536]:
            ws.send(text)
            assert ws.recv(timeout=10) == text
        for data in [b"", b"\x00\xff" * 10, os.urandom(70_000)]:
            ws.send(data)
            assert ws.recv(timeout=10) == data


@pytest.mark.parametrize("compression", COMPRESSION)
def test_fragmented_messages_come_back_whole(server, compression):
    with open_echo(server, compression) as ws:
        ws.send(iter(["frag", "ment", "ed ✓", ""]))
        assert ws.recv(timeout=10) == "fragmented ✓"
        pieces = [os.urandom(1000) for _ in range(50)]
        ws.send(iter(pieces))
        assert ws.recv(timeout=10) == b"".join(pieces)


@pytest.mark.parametrize("compression", COMPRESSION)
def test_sixteen_mebibyte_messages_round_trip(server, compression):
    with open_echo(server, compression) as ws:
        binary = os.urandom(BIG)
        ws.send(binary)
        assert ws.recv(timeout=60) == binary
        text = ("campus errand " * (BIG // 14 + 1))[:BIG]
        ws.send(text)
        assert ws.recv(timeout=60) == text


@pytest.mark.parametrize("compression", COMPRESSION)
def test_ping_is_answered_with_its_payload(server, compression):
    with open_echo(server, compression) as ws:
        for payload in [b"", b"are you there", os.urandom(125)]:
            assert ws.ping(payload).wait(5), "no pong within 5 s"
        ws.send("still open")
        assert ws.recv(timeout=10) == "still open"


# MARK: close paths

@pytest.mark.parametrize("compression", COMPRESSION)
def test_client_close_code_is_echoed(server, compression):
    with open_echo(server, compression) as ws:
        ws.close(code=4000, reason="done for today")
    assert ws.protocol.close_rcvd is not None and ws.protocol.close_rcvd.code == 4000
    assert ws.protocol.close_sent.code == 4000


def test_reserved_bit_fails_the_connection_with_1002(server):
    with open_echo(server, None) as ws:
        ws.socket.sendall(masked_frame(0x80 | 0x20 | 0x1, b"rsv2"))
        assert closed_code(ws) == 1002


def test_continuation_without_a_message_fails_with_1002(server):
    with open_echo(server, None) as ws:
        ws.socket.sendall(masked_frame(0x80 | 0x0, b"orphan"))
        assert closed_code(ws) == 1002


@pytest.mark.parametrize("compression", COMPRESSION)
def test_invalid_utf8_text_fails_with_1007(server, compression):
    with open_echo(server, compression) as ws:
        ws.send(b"valid until \xff here", text=True)
        assert closed_code(ws) == 1007


def test_message_over_the_limit_fails_with_1009(server):
    with connect(f"ws://127.0.0.1:{server.port}/ws", compression=None, max_size=2 ** 24) as ws:
        ws.send("x" * (64 * 1024 + 1))
        assert closed_code(ws) == 1009
    with open_echo(server, None) as ws:
        ws.send(b"\x00" * (BIG + 1))
        assert closed_code(ws, timeout=30) == 1009


def test_inflated_size_over_the_limit_fails_with_1009(server):
    # Compresses to a few kilobytes: the limit must apply to what it inflates to.
    with connect(f"ws://127.0.0.1:{server.port}/ws", max_size=2 ** 24) as ws:
        ws.send("a" * (1024 * 1024))
        assert closed_code(ws) == 1009


def test_server_shutdown_closes_with_1001():
    with tempfile.TemporaryDirectory(prefix="bangbang-interop-") as data:
        process = ServerProcess.start(server_binary(), data, ["--echo", "--fsync", "never"])
        try:
            with connect(echo_url(process), open_timeout=10) as ws:
                ws.send("before")
                assert ws.recv(timeout=10) == "before"
                process.process.send_signal(signal.SIGTERM)
                assert closed_code(ws, timeout=15) == 1001
            assert process.process.wait(timeout=15) == 0
        finally:
            process.stop()


# MARK: subprotocols

def test_ws_selects_the_bangbang_subprotocol(server):
    with connect(f"ws://127.0.0.1:{server.port}/ws", subprotocols=["other.v9", "bangbang.v1"]) as ws:
        assert ws.subprotocol == "bangbang.v1"
    with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
        assert ws.subprotocol is None


def test_ws_selects_nothing_from_an_unknown_offer(server):
    # Answering without a subprotocol is the RFC's way to decline; choosing one we did not offer
    # would make the client refuse the handshake.
    with connect(f"ws://127.0.0.1:{server.port}/ws", subprotocols=["other.v9"]) as ws:
        assert ws.subprotocol is None


# MARK: TLS

@pytest.fixture(scope="module")
def tls_server():
    with tempfile.TemporaryDirectory(prefix="bangbang-tls-") as data:
        cert, key = os.path.join(data, "cert.pem"), os.path.join(data, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=60)
        # The server waits as long for the opening handshake as the clients below do (its default
        # is 10 s): beside the other tests' workers and fuzzing, a debug build's TLS handshake
        # has taken longer.
        process = ServerProcess.start(server_binary(), data,
                                      ["--echo", "--fsync", "never", "--tls-cert", cert, "--tls-key", key,
                                       "--handshake-timeout", "30"])
        try:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.load_verify_locations(cert)
            yield process, context
        finally:
            process.stop()


@pytest.mark.parametrize("compression", COMPRESSION)
def test_wss_echoes_over_tls(tls_server, compression):
    process, context = tls_server
    # A generous opening timeout: on a busy shared machine a debug build's TLS handshake has
    # taken over 10 s once; a real stall would still hang past it.
    with connect(echo_url(process, "wss"), ssl=context, compression=compression, max_size=2 * BIG,
                 open_timeout=30) as ws:
        ws.send("over tls ✓")
        assert ws.recv(timeout=10) == "over tls ✓"
        data = os.urandom(1024 * 1024)
        ws.send(data)
        assert ws.recv(timeout=30) == data
        assert ws.ping(b"tls").wait(5)
        ws.close(code=1000)
        assert ws.protocol.close_rcvd.code == 1000


def test_wss_refuses_tls_below_1_2(tls_server):
    process, _ = tls_server
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():             # offering the old versions is the point
            warnings.simplefilter("ignore", DeprecationWarning)
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
    except (ValueError, ssl.SSLError):
        pytest.skip("this OpenSSL cannot even offer TLS 1.1")
    with pytest.raises((ssl.SSLError, OSError, ConnectionClosedError)):
        with connect(echo_url(process, "wss"), ssl=context, open_timeout=10) as ws:
            ws.send("should not get here")


def test_plain_websocket_on_the_tls_port_is_refused(tls_server):
    process, _ = tls_server
    with pytest.raises(Exception):
        with connect(echo_url(process), open_timeout=5) as ws:
            ws.send("plain")
