"""Real reverse proxies from Debian in front of a server, for the end-to-end tests: nginx and
HAProxy with configuration generated into a temporary directory, listening on free loopback
ports, run in the foreground (never as daemons) and stopped by their PID. scripts/bootstrap.sh
installs both; a missing one fails the test rather than skipping it."""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def binary(name):
    path = shutil.which(name) or f"/usr/sbin/{name}"
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{name} is not installed; scripts/bootstrap.sh installs it (apt-get install {name})")
    return path


class ProxyProcess:
    def __init__(self, process, ports, log_path):
        self.process = process
        self.ports = ports
        self.log_path = log_path

    @property
    def port(self):
        return self.ports[0]

    def log(self):
        try:
            return open(self.log_path, encoding="utf-8", errors="replace").read()
        except FileNotFoundError:
            return ""

    def stop(self, timeout=10):
        if self.process.poll() is None:
            self.process.terminate()   # SIGTERM to this PID: both proxies shut down at once on it
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _wait_listening(process, ports, describe, timeout=15):
    deadline = time.monotonic() + timeout
    pending = list(ports)
    while pending:
        if process.poll() is not None:
            raise RuntimeError(f"proxy exited with {process.returncode}:\n{describe()}")
        try:
            socket.create_connection(("127.0.0.1", pending[0]), timeout=1).close()
            pending.pop(0)
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"proxy did not listen on {pending[0]} in time:\n{describe()}")
            time.sleep(0.05)


def nginx_location(upstream, read_timeout):
    """What deploy/nginx.conf.example does for the server, with a short read timeout."""
    return f"""
            proxy_pass http://127.0.0.1:{upstream}/;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header Forwarded "";
            proxy_read_timeout {read_timeout};
            proxy_send_timeout {read_timeout};"""


@contextlib.contextmanager
def nginx(locations, read_timeout="3s"):
    """nginx on a free port, `locations` mapping a path prefix to an upstream port."""
    with tempfile.TemporaryDirectory(prefix="bangbang-nginx-") as directory:
        port = free_port()
        # As root the master hands its workers to `user`; they must reach the files here.
        user = "user root root;" if os.geteuid() == 0 else ""
        blocks = "".join(f"""
        location {prefix} {{{nginx_location(upstream, read_timeout)}
        }}""" for prefix, upstream in locations.items())
        config = os.path.join(directory, "nginx.conf")
        log = os.path.join(directory, "error.log")
        with open(config, "w") as f:
            f.write(f"""
{user}
worker_processes 1;
pid {directory}/nginx.pid;
error_log {log} info;
events {{ worker_connections 512; }}
http {{
    access_log {directory}/access.log;
    client_body_temp_path {directory}/client_body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{port};{blocks}
    }}
}}
""")
        output = open(os.path.join(directory, "stderr.log"), "ab")
        process = subprocess.Popen([binary("nginx"), "-p", directory, "-e", log, "-c", config, "-g", "daemon off;"],
                                   stdout=output, stderr=output)
        proxy = ProxyProcess(process, [port], log)
        try:
            _wait_listening(process, [port], lambda: proxy.log() + open(output.name, errors="replace").read())
            yield proxy
        finally:
            proxy.stop()
            output.close()


@contextlib.contextmanager
def haproxy(frontends):
    """HAProxy in TCP mode on free ports, one frontend per entry of `frontends`: a dict with the
    upstream port and optional extra `tcp-request` lines. Each sends PROXY v2 to its server."""
    with tempfile.TemporaryDirectory(prefix="bangbang-haproxy-") as directory:
        ports = [free_port() for _ in frontends]
        sections = []
        for index, (frontend, port) in enumerate(zip(frontends, ports)):
            extra = "".join(f"\n    {line}" for line in frontend.get("rules", []))
            sections.append(f"""
frontend front{index}
    bind 127.0.0.1:{port}{extra}
    default_backend back{index}

backend back{index}
    server node 127.0.0.1:{frontend["upstream"]} send-proxy-v2
""")
        config = os.path.join(directory, "haproxy.cfg")
        with open(config, "w") as f:
            f.write(f"""
global
    maxconn 512

defaults
    mode tcp
    timeout connect 5s
    timeout client 60s
    timeout server 60s
{"".join(sections)}""")
        log = os.path.join(directory, "haproxy.log")
        output = open(log, "ab")
        process = subprocess.Popen([binary("haproxy"), "-f", config, "-db"], stdout=output, stderr=output)
        proxy = ProxyProcess(process, ports, log)
        try:
            _wait_listening(process, ports, proxy.log)
            yield proxy
        finally:
            proxy.stop()
            output.close()
