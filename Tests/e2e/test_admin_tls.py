"""`bangbang admin` against a server that serves only TLS (as deploy/bangbang.conf.example sets it
up): the CLI reaches it over wss:// on loopback (where the admin secret is accepted), trusts the
server's own certificate or a given CA, checks the certificate's name, and never turns
verification off."""
import json
import os
import ssl
import subprocess
import tempfile

import pytest

from bbclient import Client, ServerProcess, fresh_phone
from conftest import server_binary

ARGUMENTS = ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0"]


def openssl(*arguments, cwd):
    subprocess.run(["openssl", *arguments], check=True, capture_output=True, timeout=60, cwd=cwd)


def make_ca_and_leaf(directory, names):
    """A private CA and a server certificate it signed for `names` (a subjectAltName list)."""
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *curve, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=directory)
    openssl("req", *curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=server", cwd=directory)
    with open(os.path.join(directory, "server.ext"), "w") as extensions:
        extensions.write(f"subjectAltName={names}\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "server.ext", cwd=directory)
    return os.path.join(directory, "ca.pem"), os.path.join(directory, "server.pem"), os.path.join(directory, "server.key")


def make_self_signed(directory):
    cert, key = os.path.join(directory, "self.pem"), os.path.join(directory, "self.key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", key, "-out", cert, cwd=directory)
    return cert, key


def admin(server, tls, *arguments):
    """`bangbang admin …` given the server's own settings (as an operator would pass --config)."""
    cert, key = tls
    command = [server_binary(), "admin", *arguments, "--data-dir", os.path.join(server.data_dir, "data"),
               "--port", str(server.port), "--tls-cert", cert, "--tls-key", key]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    output = json.loads(result.stdout) if "--json" in arguments and result.returncode == 0 else result.stdout
    return result.returncode, output, result.stderr


@pytest.fixture(scope="module")
def self_signed_server():
    with tempfile.TemporaryDirectory(prefix="bangbang-admin-tls-") as data:
        tls = make_self_signed(data)
        server = ServerProcess.start(server_binary(), data, ARGUMENTS + ["--tls-cert", tls[0], "--tls-key", tls[1]])
        try:
            yield server, tls
        finally:
            server.stop()


@pytest.fixture(scope="module")
def public_style_server():
    """A certificate for the server's public name only, from a CA the system does not know."""
    with tempfile.TemporaryDirectory(prefix="bangbang-admin-ca-") as data:
        ca, cert, key = make_ca_and_leaf(data, "DNS:bangbang.example.edu")
        server = ServerProcess.start(server_binary(), data, ARGUMENTS + ["--tls-cert", cert, "--tls-key", key])
        try:
            yield server, (cert, key), ca
        finally:
            server.stop()


def wss_client(server, cafile):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile)
    return Client(f"wss://127.0.0.1:{server.port}/ws", ssl=context)


def test_a_tls_only_server_is_administered_with_no_extra_flag(self_signed_server):
    server, tls = self_signed_server
    with wss_client(server, tls[0]) as applicant:
        applicant.login(fresh_phone())
        applicant.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": "S1", "school": "North"})
        status, pending, error = admin(server, tls, "pending", "--json")
        assert status == 0, error
        assert applicant.user["id"] in [user["id"] for user in pending["users"]]
        status, decided, error = admin(server, tls, "approve", str(applicant.user["id"]), "--json")
        assert status == 0, error
        assert decided["user"]["verification"]["status"] == "approved"
        event = applicant.wait_event(lambda e: e["event"] == "runner.verification_decided")
        assert event["data"] == {"status": "approved"}
    # Over TLS to 127.0.0.1 is still loopback: the secret was accepted.
    assert "event=admin_logged_in" in server.log()


def test_an_explicit_wss_url_and_ca_file_work_and_plain_ws_does_not(self_signed_server):
    server, tls = self_signed_server
    url = f"wss://127.0.0.1:{server.port}/ws"
    assert admin(server, tls, "feedback", "--url", url, "--ca-file", tls[0])[0] == 0
    status, _, error = admin(server, tls, "feedback", "--url", f"ws://127.0.0.1:{server.port}/ws")
    assert status == 69, error


def test_the_certificate_is_checked_against_its_name_and_a_private_ca(public_style_server):
    server, tls, ca = public_style_server
    # The system store does not know the CA: refused, and the reason is given.
    status, _, error = admin(server, tls, "pending")
    assert status == 69 and "certificate verify failed" in error, error
    # With the CA, the name comes from the server's certificate although the URL is 127.0.0.1.
    status, _, error = admin(server, tls, "pending", "--ca-file", ca)
    assert status == 0, error
    status, _, error = admin(server, tls, "pending", "--ca-file", ca, "--server-name", "other.example.edu")
    assert status == 69 and "mismatch" in error, error
    status, _, error = admin(server, tls, "pending", "--ca-file", ca, "--url", f"ws://127.0.0.1:{server.port}/ws")
    assert status == 64 and "--ca-file" in error, error


def make_bare_self_signed(directory, name):
    """The most common self-signed certificate: a CN and no subjectAltName, made exactly so."""
    cert, key = os.path.join(directory, f"{name}.pem"), os.path.join(directory, f"{name}.key")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-keyout", key, "-out", cert, cwd=directory)
    return cert, key


@pytest.fixture(scope="module")
def bare_self_signed_server():
    with tempfile.TemporaryDirectory(prefix="bangbang-admin-bare-") as data:
        tls = make_bare_self_signed(data, "bare")
        other = make_bare_self_signed(data, "other")
        server = ServerProcess.start(server_binary(), data, ARGUMENTS + ["--tls-cert", tls[0], "--tls-key", tls[1]])
        try:
            yield server, tls, other
        finally:
            server.stop()


def test_a_certificate_with_a_cn_and_no_subject_alt_name_just_works(bare_self_signed_server):
    server, tls, _ = bare_self_signed_server
    text = subprocess.run(["openssl", "x509", "-in", tls[0], "-noout", "-text"], capture_output=True, text=True).stdout
    assert "Subject Alternative Name" not in text and "CN = localhost" in text
    status, pending, error = admin(server, tls, "pending", "--json")
    assert status == 0, error
    assert pending["users"] == []


def test_that_certificate_is_still_verified_and_its_name_checked(bare_self_signed_server):
    server, tls, other = bare_self_signed_server
    # Another certificate with the same CN is not the server's: its chain does not verify.
    status, _, error = admin(server, other, "pending")
    assert status == 69 and "certificate verify failed" in error, error
    status, _, error = admin(server, tls, "pending", "--server-name", "bangbang.example.edu")
    assert status == 69 and "mismatch" in error, error
