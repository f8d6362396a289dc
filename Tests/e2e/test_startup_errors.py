"""A server that cannot start says so in words: what could not be done, to which address or path,
and what to try, with exit status 70, for every kind of failure an operator meets on the first
day: the port in use, an address that is not the machine's, a data directory that is missing and
cannot be made, not writable, a file, or locked by a running server, and a TLS certificate or key
that cannot be read or do not belong together. None of them prints a Swift value."""
import os
import subprocess
import tempfile

import pytest

from bbclient import ServerProcess
from conftest import server_binary

FLAGS = ["--fsync", "never", "--no-web"]


@pytest.fixture(scope="module")
def running():
    """One server that holds a port and a data directory, for the two failures that need one."""
    with tempfile.TemporaryDirectory(prefix="bangbang-startup-") as folder:
        process = ServerProcess.start(server_binary(), folder, FLAGS)
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture(scope="module")
def pems():
    """Two self-signed certificates with their keys: (cert1, key1, key2)."""
    with tempfile.TemporaryDirectory(prefix="bangbang-startup-tls-") as folder:
        paths = []
        for name in ("one", "two"):
            cert, key = os.path.join(folder, f"{name}.pem"), os.path.join(folder, f"{name}.key")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                            "-days", "2", "-keyout", key, "-out", cert], check=True, capture_output=True)
            paths.append((cert, key))
        yield paths[0][0], paths[0][1], paths[1][1]


def refused(*arguments, data_dir=None):
    """Runs a server that must not start; returns what it said on standard error."""
    with tempfile.TemporaryDirectory(prefix="bangbang-startup-run-") as folder:
        directory = data_dir or os.path.join(folder, "data")
        result = subprocess.run([server_binary(), "--data-dir", directory, *FLAGS, *arguments],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 70, (result.returncode, result.stderr)
    line = next(line for line in result.stderr.splitlines() if line.startswith("bangbang: cannot start: "))
    words = line.removeprefix("bangbang: cannot start: ")
    # A Swift value printed as it is reads `system(call: …)` or `tls("…")`.
    assert "(call:" not in words and 'tls("' not in words and "errno 98" not in words, words
    return words


def test_a_port_in_use_names_the_port_and_the_setting(running):
    words = refused("--port", str(running.port))
    assert words == (f"port {running.port} is in use on 127.0.0.1: is another server running? "
                     f"stop it, or choose another port with --port"), words


def test_an_address_the_machine_does_not_have_names_the_host_setting():
    # 192.0.2.1 is a documentation address (RFC 5737): never one of this machine's, and binding
    # to it fails without sending anything.
    words = refused("--host", "192.0.2.1", "--port", "18999")
    assert words.startswith("192.0.2.1 is not an address of this machine") and "--host" in words, words


def test_a_data_directory_that_cannot_be_made_says_so_not_a_failed_write():
    words = refused("--port", "0", data_dir="/proc/bangbang-nope")
    assert words == ("the data directory /proc/bangbang-nope does not exist and cannot be created "
                     "(No such file or directory): create it, or choose another with --data-dir"), words
    assert "batch" not in words


def test_a_data_directory_this_user_cannot_write_names_it():
    if os.geteuid() == 0:
        # root may write any ordinary directory; sysfs refuses new files even to root.
        words = refused("--port", "0", data_dir="/sys/kernel")
        directory = "/sys/kernel"
    else:
        with tempfile.TemporaryDirectory() as folder:
            directory = os.path.join(folder, "locked-down")
            os.mkdir(directory, 0o500)
            words = refused("--port", "0", data_dir=directory)
    assert words.startswith(f"the data directory {directory} is not writable by this user"), words
    assert "--data-dir" in words


def test_a_data_directory_that_is_a_file_says_so():
    with tempfile.NamedTemporaryFile() as file:
        words = refused("--port", "0", data_dir=file.name)
    assert words.startswith(f"{file.name} exists but is not a directory") and "--data-dir" in words, words


def test_a_data_directory_another_server_holds_is_locked(running):
    words = refused("--port", "0", data_dir=os.path.join(running.data_dir, "data"))
    assert words.startswith("the data directory ") and "is locked by another running server" in words, words
    assert "--data-dir" in words


def test_an_unreadable_certificate_or_key_names_the_file_and_its_setting(pems):
    cert, key, _ = pems
    words = refused("--port", "0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", key)
    assert words == ("the TLS certificate file /nonexistent/cert.pem cannot be read (no such file or directory): "
                     "check --tls-cert, and that the server's user may read it"), words
    words = refused("--port", "0", "--tls-cert", cert, "--tls-key", "/nonexistent/key.pem")
    assert words.startswith("the TLS private key file /nonexistent/key.pem cannot be read") and "--tls-key" in words, words


def test_a_key_of_another_certificate_says_they_do_not_belong_together(pems):
    cert, _, other_key = pems
    words = refused("--port", "0", "--tls-cert", cert, "--tls-key", other_key)
    assert words == (f"the private key {other_key} does not belong to the certificate {cert}: "
                     "give --tls-key the key the certificate was made with"), words


def test_a_file_that_is_not_a_certificate_says_what_openssl_found(pems):
    _, key, _ = pems
    words = refused("--port", "0", "--tls-cert", key, "--tls-key", key)
    assert words.startswith(f"the TLS certificate {key} is not a PEM certificate OpenSSL can read") and "--tls-cert" in words, words
