#!/usr/bin/env bash
# Smoke run of the load-test driver: every scenario at small scale (seconds, tens of
# connections) against a real server, so the driver keeps working as the server changes.
# Each run must exit 0 with zero violations. Usage: scripts/loadtest-smoke.sh [--release]
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=debug
if [ "${1:-}" = "--release" ]; then configuration=release; fi

swift build -c "$configuration" --product bangbang
swift build -c "$configuration" --product loadtest
bin="$(swift build -c "$configuration" --show-bin-path)"

admin_phone="+8613800000000"
data_dir="$(mktemp -d -t loadtest-smoke.XXXXXX)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

"$bin/bangbang" --host 127.0.0.1 --port "$port" --data-dir "$data_dir/data" --dev --echo --fsync never \
    --admin-phone "$admin_phone" >"$data_dir/server.log" 2>&1 &
server_pid=$!

cleanup() {
    if kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
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
        grep -E '^(messages_per_second|round_trip_p99_ms|connections_opened|connects_per_second|server_rss_per_connection_kib|deliveries_per_second|delivery_p99_ms|accept_p99_ms|acks_per_second|result:)' \
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

# Comparing two result files must work too.
if "$bin/loadtest" compare "$data_dir/echo.json" "$data_dir/echo-compressed.json" >"$data_dir/compare.out" 2>&1 \
    && grep -q '^messages_per_second' "$data_dir/compare.out"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "loadtest-smoke: compare FAILED" >&2
    cat "$data_dir/compare.out" >&2
fi

kill "$server_pid"
wait "$server_pid" 2>/dev/null || true

echo "loadtest-smoke: $passed passed, $failed failed"
[ "$failed" = 0 ]
