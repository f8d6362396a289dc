"""The web app's files as a browser gets them: from a real server, over raw sockets, so that
paths reach the server exactly as written (no client-side normalisation of `..`)."""
import gzip
import os
import pathlib
import socket
import tempfile

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

from test_operations import running

PAGE = b"<!doctype html><title>web</title><script type=module src=/js/app.js></script>\n"
SCRIPT = b"export const answer = 42;\n" * 100


@pytest.fixture(scope="module")
def web_dir():
    with tempfile.TemporaryDirectory(prefix="bangbang-web-") as folder:
        root = pathlib.Path(folder, "web")
        (root / "js").mkdir(parents=True)
        (root / "admin").mkdir()
        (root / "index.html").write_bytes(PAGE)
        (root / "admin" / "index.html").write_bytes(b"<!doctype html><title>console</title>\n")
        (root / "js" / "app.js").write_bytes(SCRIPT)
        (root / ".hidden.js").write_bytes(b"secret")
        pathlib.Path(folder, "outside.txt").write_bytes(b"outside the web folder")
        os.symlink(pathlib.Path(folder, "outside.txt"), root / "link.txt")
        yield str(root)


@pytest.fixture(scope="module")
def web(web_dir):
    with running(["--fsync", "never", "--web-dir", web_dir, "--allowed-origin", "https://other.example"]) as server:
        yield server


def exchange(server, raw_request, responses=1):
    """Sends raw request bytes and reads `responses` whole responses (by Content-Length)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(raw_request)
        buffer = b""
        result = []
        while len(result) < responses:
            while b"\r\n\r\n" not in buffer:
                chunk = sock.recv(65536)
                assert chunk, f"connection closed after {len(result)} responses: {buffer!r}"
                buffer += chunk
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            headers = {}
            for line in lines[1:]:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0")) if status not in (204, 304) else 0
            is_head = raw_request.split(b"\r\n\r\n")[len(result)].startswith(b"HEAD ")
            if is_head:
                length = 0
            while len(buffer) < length:
                chunk = sock.recv(65536)
                assert chunk, "connection closed inside a body"
                buffer += chunk
            body, buffer = buffer[:length], buffer[length:]
            result.append((status, headers, body))
        return result


def get(server, target, method="GET", headers=()):
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers)
    request = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
    return exchange(server, request.encode("latin-1"))[0]


def assert_page_headers(headers):
    policy = headers["content-security-policy"]
    for directive in ("default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
                      "frame-ancestors 'none'"):
        assert directive in policy
    assert "unsafe-inline" not in policy
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"


def test_the_app_and_the_console_are_served_with_types_and_security_headers(web):
    status, headers, body = get(web, "/")
    assert (status, body) == (200, PAGE)
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["cache-control"] == "no-cache"
    assert_page_headers(headers)
    status, headers, body = get(web, "/admin/")
    assert status == 200 and b"console" in body
    status, headers, _ = get(web, "/admin")
    assert status == 301 and headers["location"] == "/admin/"
    status, headers, body = get(web, "/js/app.js")
    assert (status, body) == (200, SCRIPT)
    assert headers["content-type"] == "text/javascript; charset=utf-8"


@pytest.mark.parametrize("target", [
    "/../outside.txt", "/js/../../outside.txt", "/%2e%2e/outside.txt", "/%2E%2E%2Foutside.txt",
    "/js%2f..%2f..%2foutside.txt", "/..%5coutside.txt", "/index.html%00.js", "//outside.txt",
    "/" + "a/" * 600,
])
def test_no_target_leaves_the_web_folder(web, target):
    status, headers, body = get(web, target)
    assert status in (400, 414), (target, status)
    assert b"outside the web folder" not in body
    assert_page_headers(headers)


@pytest.mark.parametrize("target", ["/link.txt", "/.hidden.js", "/missing.js"])
def test_symlinks_out_hidden_and_missing_files_are_not_found(web, target):
    status, headers, body = get(web, target)
    assert status == 404
    assert b"outside" not in body and b"secret" not in body
    assert_page_headers(headers)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"])
def test_only_get_and_head_are_served(web, method):
    status, headers, _ = get(web, "/", method=method)
    assert status == 405
    assert headers["allow"] == "GET, HEAD"


def test_head_has_the_headers_of_get_and_no_body(web):
    status, headers, body = get(web, "/js/app.js", method="HEAD")
    assert status == 200 and body == b""
    assert headers["content-length"] == str(len(SCRIPT))


def test_etag_revalidation_answers_304(web):
    _, headers, _ = get(web, "/js/app.js")
    status, again, body = get(web, "/js/app.js", headers=[("If-None-Match", headers["etag"])])
    assert (status, body) == (304, b"")
    assert again["etag"] == headers["etag"]
    assert get(web, "/js/app.js", headers=[("If-None-Match", '"stale"')])[0] == 200


def test_gzip_when_accepted(web):
    status, headers, body = get(web, "/js/app.js", headers=[("Accept-Encoding", "gzip, deflate, br")])
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert headers["vary"] == "Accept-Encoding"
    assert len(body) < len(SCRIPT) and gzip.decompress(body) == SCRIPT
    _, plain, _ = get(web, "/js/app.js", headers=[("Accept-Encoding", "gzip;q=0")])
    assert "content-encoding" not in plain


def test_a_persistent_connection_serves_pipelined_requests_in_order(web):
    request = (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
               b"HEAD /js/app.js HTTP/1.1\r\nHost: x\r\n\r\n"
               b"GET /missing HTTP/1.1\r\nHost: x\r\n\r\n"
               b"GET /admin/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answers = exchange(web, request, responses=4)
    assert [status for status, _, _ in answers] == [200, 200, 404, 200]
    assert answers[0][2] == PAGE and answers[1][2] == b""
    assert answers[3][1]["connection"] == "close"


def test_health_and_metrics_stay_where_they_were(web):
    assert get(web, "/healthz")[2] == b"ok\n"
    assert get(web, "/ws")[0] == 426


def test_the_servers_own_origin_may_open_the_websocket_besides_the_allow_list(web):
    own = f"http://127.0.0.1:{web.port}"
    with ws_connect(web.url, origin=own, open_timeout=10):
        pass
    with ws_connect(web.url, origin="https://other.example", open_timeout=10):
        pass
    with pytest.raises(InvalidStatus) as refused:
        with ws_connect(web.url, origin="https://evil.example", open_timeout=10):
            pass
    assert refused.value.response.status_code == 403


def test_no_web_turns_the_app_off(web_dir):
    with running(["--fsync", "never", "--web-dir", web_dir, "--no-web"]) as server:
        assert get(server, "/")[0] == 404
        assert get(server, "/healthz")[0] == 200


def test_a_web_dir_that_does_not_load_stops_the_start(tmp_path):
    from bbclient import ServerProcess
    from conftest import server_binary
    with pytest.raises(RuntimeError) as failed:
        ServerProcess.start(server_binary(), str(tmp_path), ["--fsync", "never", "--web-dir", str(tmp_path / "nowhere")])
    assert "--web-dir" in str(failed.value)


def test_a_trusted_proxys_connection_serves_one_request(web_dir):
    """A proxy may carry several clients' requests on one connection, each naming its own client;
    the server answers one and closes rather than let the first client's address stick."""
    with running(["--fsync", "never", "--web-dir", web_dir, "--trusted-proxy", "127.0.0.1"]) as server:
        request = (b"GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7\r\n\r\n"
                   b"GET /js/app.js HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
        with pytest.raises(AssertionError, match="closed after 1 responses"):
            exchange(server, request, responses=2)
        (status, headers, _), = exchange(server, request, responses=1)
        assert status == 200 and headers["connection"] == "close"
