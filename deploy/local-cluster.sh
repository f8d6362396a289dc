#!/usr/bin/env bash
# A whole cluster on this machine, to try one by hand: three nats-server processes forming a
# JetStream cluster (clients on 4222-4224, routes on 6222-6224, monitoring on 8222-8224, where
# /healthz and /jsz answer) and three Bangbang nodes on 8081-8083, each node told of every NATS
# server. Everything lives under DIR (default ./cluster-data) and stops on Ctrl-C.
#
#   deploy/local-cluster.sh [DIR]            with BANGBANG (default: .build/debug/bangbang)
#   PARTITIONS=4 LEASE_MS=6000 deploy/local-cluster.sh
#
# Try: open http://127.0.0.1:8081/ and http://127.0.0.1:8082/ as two users; `kill -9` the
# node that owns a pair (`curl -s 127.0.0.1:8081/metrics | grep bangbang_pair_owned`) and
# watch another take it within about a lease time; `kill -9` a nats-server and watch nothing
# happen to the clients.
set -euo pipefail
dir=${1:-./cluster-data}
bangbang=${BANGBANG:-.build/debug/bangbang}
partitions=${PARTITIONS:-4}
lease_ms=${LEASE_MS:-6000}
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$bangbang" ] || { echo "local-cluster: no $bangbang; run: swift build" >&2; exit 1; }
[ -x "$nats_server" ] || { echo "local-cluster: no nats-server; run: apt-get install nats-server" >&2; exit 1; }
mkdir -p "$dir"
pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

for i in 1 2 3; do
    routes=""
    for j in 1 2 3; do [ "$j" = "$i" ] || routes+="nats://127.0.0.1:$((6221 + j)), "; done
    mkdir -p "$dir/nats-$i"
    cat > "$dir/nats-$i.conf" <<EOF
server_name: n$i
listen: 127.0.0.1:$((4221 + i))
http: 127.0.0.1:$((8221 + i))
jetstream { store_dir: "$dir/nats-$i" }
cluster {
  name: bangbang
  listen: 127.0.0.1:$((6221 + i))
  routes: [${routes%, }]
}
EOF
    "$nats_server" -c "$dir/nats-$i.conf" > "$dir/nats-$i.log" 2>&1 &
    pids+=($!)
done
for i in 1 2 3; do
    "$bangbang" --dev --port 808$i --data-dir "$dir/node-$i" --node-id "node$i" \
        --nats nats://127.0.0.1:4222 --nats nats://127.0.0.1:4223 --nats nats://127.0.0.1:4224 \
        --partitions "$partitions" --lease-ms "$lease_ms" > "$dir/node-$i.log" 2>&1 &
    pids+=($!)
done
echo "local-cluster: NATS on 4222-4224 (monitoring 8222-8224), nodes on http://127.0.0.1:8081-8083/, logs in $dir; Ctrl-C stops"
wait
