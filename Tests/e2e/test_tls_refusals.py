"""TLS refusals are visible: a client that offers only TLS 1.0/1.1 is told why with a
protocol_version alert (not just a closed TCP connection), and the refusal is logged and
counted in `bangbang_handshake_failures_total` by reason, like every other handshake failure."""
import http.client
import os
import re
import socket
import ssl
import subprocess
import tempfile
import time
import warnings

import pytest

from bbclient import ServerProcess
from conftest import server_binary


@pytest.fixture(scope="module")
def tls_server():
    with tempfile.TemporaryDirectory(prefix="bangbang-tls-refusals-") as data:
        cert, key = os.path.join(data, "cert.pem"), os.path.join(data, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=60)
        process = ServerProcess.start(server_binary(), data, ["--fsync", "never", "--tls-cert", cert, "--tls-key", key])
        try:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.load_verify_locations(cert)
            yield process, context
        finally:
            process.stop()


def old_tls_context():
    """A client that offers TLS 1.0 and 1.1 only, or None if this OpenSSL cannot."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            context.set_ciphers("DEFAULT:@SECLEVEL=0")
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
        except (ValueError, ssl.SSLError):
            return None
    return context


def failures(server, context, reason):
    connection = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    match = re.search(r'^bangbang_handshake_failures_total\{reason="%s"\} (\d+)$' % re.escape(reason), text, re.M)
    return int(match.group(1)) if match else 0


def counted(server, context, reason, expected, timeout=10):
    """The count reaches `expected`: the refused connection is counted when the server has
    finished closing it, a moment after the client saw the alert."""
    deadline = time.monotonic() + timeout
    while True:
        value = failures(server, context, reason)
        if value >= expected or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_tls_1_1_client_gets_a_protocol_version_alert_and_the_refusal_is_counted(tls_server):
    server, context = tls_server
    old = old_tls_context()
    if old is None:
        pytest.skip("this OpenSSL cannot offer TLS 1.1 at all")
    before = failures(server, context, "tls_protocol_version")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError) as refused:
            old.wrap_socket(raw)
    # Without the alert the client would see an EOF ("unexpected eof" / connection reset).
    assert refused.value.reason == "TLSV1_ALERT_PROTOCOL_VERSION", refused.value
    assert counted(server, context, "tls_protocol_version", before + 1) == before + 1
    log = server.log()
    assert re.search(r"event=handshake_refused .*reason=tls_protocol_version .*unsupported protocol", log), log


def test_bytes_that_are_not_tls_count_as_a_tls_handshake_failure(tls_server):
    server, context = tls_server
    before = failures(server, context, "tls_handshake")
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        raw.settimeout(10)
        answer = raw.recv(100)
    assert not answer.startswith(b"HTTP/"), "a plain request on the TLS port must not be served"
    assert counted(server, context, "tls_handshake", before + 1) == before + 1
