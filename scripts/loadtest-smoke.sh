#!/usr/bin/env bash
# Smoke run of the load-test driver: every scenario at small scale (seconds, tens of
# connections) against a real server, so the driver keeps working as the server changes.
# Each run must exit 0 with zero violations. Usage: scripts/loadtest-smoke.sh [--release]
# BANGBANG_BINARY=path runs against that server binary instead of building this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=debug
if [ "${1:-}" = "--release" ]; then configuration=release; fi

if [ -z "${BANGBANG_BINARY:-}" ]; then swift build -c "$configuration" --product bangbang; fi
swift build -c "$configuration" --product loadtest
bin="$(swift build -c "$configuration" --show-bin-path)"
server_binary="${BANGBANG_BINARY:-$bin/bangbang}"

admin_phone="+8613800000000"
data_dir="$(mktemp -d -t loadtest-smoke.XXXXXX)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

# Every driver client comes from loopback and a load test floods on purpose: lift the per-address
# and per-connection limits that protect a production server from exactly that.
server_options=(--dev --echo --fsync never --admin-phone "$admin_phone" --sms-per-ip-hourly 0
    --requests-per-second 0 --user-requests-per-second 0 --handshakes-per-second-per-address 0
    --max-connections-per-address 100000)
"$server_binary" --host 127.0.0.1 --port "$port" --data-dir "$data_dir/data" "${server_options[@]}" \
    >"$data_dir/server.log" 2>&1 &
server_pid=$!

tls_pid=""
cleanup() {
    for pid in "$server_pid" $tls_pid; do
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$data_dir"
}
trap cleanup EXIT

# Wait (up to 30 s) until the server accepts TCP connections.
ready=0
for _ in $(seq 1 300); do
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then ready=1; break; fi
    sleep 0.1
done
if [ "$ready" != 1 ]; then
    echo "loadtest-smoke: the server did not start; its log:" >&2
    cat "$data_dir/server.log" >&2
    exit 1
fi

passed=0
failed=0
run() {
    local name="$1"
    shift
    echo "loadtest-smoke: $name: loadtest $*"
    if "$bin/loadtest" "$@" --quiet --json "$data_dir/$name.json" >"$data_dir/$name.out" 2>&1; then
        passed=$((passed + 1))
        grep -E '^(messages_per_second|round_trip_p99_ms|connections_opened|connects_per_second|logins_per_second|server_rss_per_connection_kib|deliveries_per_second|delivery_p99_ms|accept_p99_ms|acknowledged_publishes_per_second|errands_completed|result:)' \
            "$data_dir/$name.out" | sed 's/^/    /' || true
    else
        failed=$((failed + 1))
        echo "loadtest-smoke: $name FAILED; its output:" >&2
        sed 's/^/    /' "$data_dir/$name.out" >&2
    fi
}

ws="ws://127.0.0.1:$port"
run echo echo --url "$ws/echo" --connections 10 --window 8 --duration 2
run echo-compressed echo --url "$ws/echo" --connections 4 --duration 1 --compress
run connections connections --url "$ws/ws" --connections 50 --duration 1 --server-pid "$server_pid"
run connections-compressed connections --url "$ws/ws" --connections 50 --duration 1 --compress --server-pid "$server_pid"
run connections-two-processes connections --url "$ws/ws" --connections 40 --duration 1 --processes 2 --sources 2
run connections-login connections --url "$ws/ws" --connections 20 --duration 1 --login
run durable durable --url "$ws/ws" --publishers 10 --duration 2
run feed feed --url "$ws/ws" --runners 20 --publishers 2 --rate 20 --duration 2 --admin-phone "$admin_phone"
run feed-two-types feed --url "$ws/ws" --runners 10 --publishers 2 --rate 20 --duration 1 --types express,bounty \
    --admin-phone "$admin_phone" --processes 2
run race race --url "$ws/ws" --runners 20 --orders 3 --admin-phone "$admin_phone"
run errand errand --url "$ws/ws" --runners 20 --publishers 4 --rate 20 --duration 3 --admin-phone "$admin_phone"

# wss:// through a second server with a throwaway self-signed certificate, when openssl is here.
if command -v openssl >/dev/null 2>&1 \
    && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$data_dir/key.pem" -out "$data_dir/cert.pem" \
        -days 1 -subj /CN=localhost >/dev/null 2>&1; then
    tls_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$server_binary" --host 127.0.0.1 --port "$tls_port" --data-dir "$data_dir/tls-data" --echo --fsync never \
        --tls-cert "$data_dir/cert.pem" --tls-key "$data_dir/key.pem" >"$data_dir/tls-server.log" 2>&1 &
    tls_pid=$!
    for _ in $(seq 1 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null; then break; fi
        sleep 0.1
    done
    run echo-tls echo --url "wss://localhost:$tls_port/echo" --connections 4 --duration 1
    run connections-tls connections --url "wss://127.0.0.1:$tls_port/ws" --connections 20 --duration 1 --compress
    kill "$tls_pid"
    wait "$tls_pid" 2>/dev/null || true
    tls_pid=""
fi

# Comparing two result files must work too.
if "$bin/loadtest" compare "$data_dir/echo.json" "$data_dir/echo-compressed.json" >"$data_dir/compare.out" 2>&1 \
    && grep -q '^messages_per_second' "$data_dir/compare.out"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "loadtest-smoke: compare FAILED" >&2
    cat "$data_dir/compare.out" >&2
fi

# A graceful stop after all that load: SIGTERM must end the server with status 0.
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
if [ "$status" = 0 ]; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "loadtest-smoke: server exited with $status on SIGTERM" >&2
    tail -20 "$data_dir/server.log" >&2
fi

echo "loadtest-smoke: $passed passed, $failed failed"
[ "$failed" = 0 ]
