"""The monitoring an operator imports (deploy/grafana-dashboard.json, deploy/prometheus-rules.yml),
tested with the real thing: Debian's `prometheus` scrapes a running server over TLS and a node of
a NATS cluster, loads the rules, and answers every query of the dashboard and of the rules through
its HTTP API. `promtool check rules` passes on the rules file. A query that names a metric the
servers do not export (a typo, a metric renamed) fails: every metric it names must be among what
Prometheus scraped, and every dashboard query must return at least one series."""
import json
import os
import pathlib
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from bbclient import Client, ServerProcess, fresh_phone
from conftest import server_binary
from nats_cluster import NatsCluster, free_ports, nats_request
from test_cluster_failover import Node, wait_until

ROOT = pathlib.Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana-dashboard.json"
RULES = ROOT / "deploy" / "prometheus-rules.yml"
METRIC = re.compile(r"\bbangbang_[a-z0-9_]+\b")


def tool(name):
    for candidate in (shutil.which(name), f"/usr/bin/{name}", f"/usr/sbin/{name}"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(f"{name} not found: scripts/bootstrap.sh installs Debian's prometheus")


def dashboard_queries():
    """(panel title, expression) of every target, with Grafana's variables as the import sets them."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    queries = []
    for panel in panels:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "30s").replace('=~"$instance"', '=~".+"')
            assert "$" not in expr.replace("$1", ""), f"{panel['title']}: a variable the test does not know: {expr}"
            queries.append((panel["title"], expr))
    return queries


def rule_expressions():
    """(alert, expression) of every rule, read from the file as promtool reads it."""
    rules, name = [], None
    for line in RULES.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("- alert:"):
            name = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("expr:"):
            rules.append((name, stripped.split(":", 1)[1].strip()))
    return rules


@pytest.fixture(scope="module")
def monitored():
    """A single server over TLS with some traffic, a clustered node owning its partition, and a
    Prometheus scraping both every second with the rules loaded."""
    with tempfile.TemporaryDirectory(prefix="bangbang-monitoring-") as folder:
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-days", "30", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        server = ServerProcess.start(server_binary(), folder, ["--dev", "--sms-per-ip-hourly", "0", "--tls-cert", cert, "--tls-key", key])
        nats = NatsCluster.start()
        node = None
        prometheus = None
        clients = []
        try:
            node = Node("watched", free_ports(1)[0], folder, nats.urls)
            wait_until(node.is_ready, 20, "the clustered node to own the partition", node)
            prometheus_port = free_ports(1)[0]
            config = os.path.join(folder, "prometheus.yml")
            with open(config, "w") as file:
                file.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["{RULES}"]
scrape_configs:
  - job_name: bangbang
    scheme: https
    tls_config: {{ca_file: "{cert}", server_name: localhost}}
    static_configs: [{{targets: ["127.0.0.1:{server.port}"]}}]
  - job_name: bangbang-cluster
    static_configs: [{{targets: ["127.0.0.1:{node.port}"]}}]
""")
            log = open(os.path.join(folder, "prometheus.log"), "ab")
            prometheus = subprocess.Popen([tool("prometheus"), f"--config.file={config}",
                                           f"--storage.tsdb.path={os.path.join(folder, 'tsdb')}",
                                           f"--web.listen-address=127.0.0.1:{prometheus_port}"], stdout=log, stderr=log)
            api = f"http://127.0.0.1:{prometheus_port}"
            clients = traffic(server, node, nats, cert)
            wait_until(lambda: targets_up(api) == 2, 30, "prometheus to scrape both servers")
            # Rates need two samples of every counter after the traffic: a few scrapes more.
            first = time.time()
            wait_until(lambda: time.time() - first > 4 and query(api, "bangbang_logged_in_users")
                       and max(float(r["value"][1]) for r in query(api, "bangbang_logged_in_users")) >= 1,
                       30, "the logged-in user in prometheus")
            yield api
        finally:
            if prometheus is not None:
                prometheus.terminate()
                prometheus.wait(timeout=15)
            for client in clients:
                client.close()
            if node is not None:
                node.stop()
            nats.stop()
            server.stop()


def traffic(server, node, nats, cert):
    """What makes each series exist: a logged-in user kept connected, a publish (a durable
    commit), a refused request, a TLS handshake that fails, and a request routed to the node's
    partition. Returns the connections, kept open while Prometheus scrapes."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cert)
    client = Client(f"wss://127.0.0.1:{server.port}/ws", ssl=context)
    client.login(fresh_phone())
    client.ok("order.publish", {"type": "bounty", "campus": "North", "tip": 300, "deadline": int(time.time() * 1000) + 3600_000,
                                "details": {"title": "搬箱子", "description": "从东门到 3 号楼"}})
    client.error("order.publish", {"type": "bounty"})
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b"\x16\x03\x01\x00\x05hello")        # not a ClientHello: a TLS handshake failure
        raw.settimeout(5)
        try:
            raw.recv(100)
        except OSError:
            pass
    member = Client(node.url)
    member.login(fresh_phone())
    request = {"id": 1, "op": "profile.update", "data": {"nickname": "监控"}, "actor": {"user": member.user["id"], "runner": False}}
    answer = nats_request(nats.client_ports[0], "bb.req.a0", json.dumps(request).encode(), timeout=5)
    assert answer[0] == 0 and json.loads(answer[1:])["ok"], answer
    return [client, member]


def query(api, expr):
    url = f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", (expr, body)
    return body["data"]["result"]


def targets_up(api):
    try:
        with urllib.request.urlopen(f"{api}/api/v1/targets", timeout=2) as response:
            targets = json.loads(response.read())["data"]["activeTargets"]
    except OSError:
        return 0
    return sum(target["health"] == "up" for target in targets)


def scraped_names(api):
    with urllib.request.urlopen(f"{api}/api/v1/label/__name__/values", timeout=10) as response:
        return set(json.loads(response.read())["data"])


def test_promtool_checks_the_rules():
    result = subprocess.run([tool("promtool"), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rule_expressions())} rules found" in result.stdout, result.stdout


def test_the_dashboard_and_rules_cover_what_an_operator_watches():
    text = DASHBOARD.read_text() + RULES.read_text()
    for metric in ("bangbang_connections_open", "bangbang_logged_in_users", "bangbang_requests_total",
                   "bangbang_journal_fsync_seconds_bucket", "bangbang_journal_bytes", "bangbang_snapshot_bytes",
                   "bangbang_pushes_sent_total", "bangbang_slow_consumer_disconnects_total", "bangbang_handshake_failures_total",
                   "bangbang_cluster_owner", "bangbang_relay_frames_total", "bangbang_ready",
                   "bangbang_data_directory_free_bytes", "bangbang_tls_certificate_expiry_timestamp_seconds"):
        assert metric in text, metric
    alerts = {name for name, _ in rule_expressions()}
    assert {"BangbangNotReady", "BangbangCommitFailures", "BangbangFsyncSlow", "BangbangDiskNearlyFull",
            "BangbangNoPartitionOwner", "BangbangCertificateExpiring"} <= alerts, alerts


def test_every_dashboard_query_evaluates_to_series_of_scraped_metrics(monitored):
    names = scraped_names(monitored)
    empty = []
    for title, expr in dashboard_queries():
        unknown = {name for name in METRIC.findall(expr) if name not in names}
        assert not unknown, f"{title}: {expr} names metrics no server exports: {unknown}"
        if not query(monitored, expr):
            empty.append((title, expr))
    assert not empty, f"queries with no series: {empty}"


def test_every_rule_evaluates_and_prometheus_loaded_them_all_healthy(monitored):
    names = scraped_names(monitored)
    for alert, expr in rule_expressions():
        unknown = {name for name in METRIC.findall(expr) if name not in names}
        assert not unknown, f"{alert}: {expr} names metrics no server exports: {unknown}"
        query(monitored, expr)
        # The expression without its threshold has a value now: it reads live series.
        # The expression without its threshold, and without the label values only trouble
        # brings (storage_unavailable), has a value now: it reads live series.
        left = re.sub(r"\{[^}]*\}", "", re.split(r"\s(?:==|<|>)\s", expr)[0])
        assert query(monitored, left), f"{alert}: {left} has no series"
    with urllib.request.urlopen(f"{monitored}/api/v1/rules", timeout=10) as response:
        groups = json.loads(response.read())["data"]["groups"]
    loaded = {rule["name"]: rule for group in groups for rule in group["rules"]}
    assert set(loaded) == {name for name, _ in rule_expressions()}
    wait_until(lambda: all(rule.get("lastEvaluation", "").startswith("20") for rule in rules(monitored)), 10,
               "every rule to be evaluated once")
    assert all(rule["health"] == "ok" for rule in rules(monitored)), [(r["name"], r.get("lastError")) for r in rules(monitored)]
    firing = [rule["name"] for rule in rules(monitored) if rule["state"] != "inactive"]
    assert firing == [], f"healthy servers raise no alert: {firing}"


def rules(api):
    with urllib.request.urlopen(f"{api}/api/v1/rules", timeout=10) as response:
        return [rule for group in json.loads(response.read())["data"]["groups"] for rule in group["rules"]]
