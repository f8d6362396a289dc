#!/usr/bin/env bash
# Bounded libFuzzer run over every parser, for CI and for people.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      default 20; 0 builds and only replays the corpus
#   FUZZ_TARGETS="json inflate" scripts/fuzz.sh 60     run a subset
#
# How it works. SwiftPM cannot host a libFuzzer entry point without a product of its own, so
# this script drives swiftc directly: the library modules a target needs (Crypto,
# WebSocketProtocol, BangbangCore, JSON, BangbangProtocol, Forwarding, NATSProtocol, RelayProtocol,
# InboxProtocol, JournalProtocol) are compiled once, instrumented with
# `-sanitize=fuzzer,address`, into `.build/fuzz/modules/`; each target in `fuzz/<name>/main.swift`
# is then compiled and linked against them with libFuzzer's own `main`, together with any test
# support file it shares with the tests (`target_sources`: one implementation, not a copy of it
# in the target). Builds are cached under
# `.build/fuzz/` keyed on a hash of every source file and of the compiler flags, so a second run
# with unchanged sources starts fuzzing at once.
#
# Each target starts from a work copy of `fuzz/corpus/<name>/` under `.build/fuzz/work/<name>/`
# (new inputs land there, never in the repository) and first replays every file in
# `fuzz/regressions/<name>/`, the inputs that once crashed it. A crash, leak, timeout, OOM or
# sanitizer report fails the run; the offending input is left as `.build/fuzz/artifacts/<name>/`
# crash-… and the log as `.build/fuzz/logs/<name>.log`.
#
# Output: one line per target with its execution count, then
#   fuzz: N targets, M executions, K crashes
# and a non-zero exit status when K > 0 or a build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
case $seconds in ''|*[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET]" >&2; exit 2 ;; esac
all_targets="http-request http-response websocket-frames inflate json forwarding nats-protocol relay-protocol inbox-protocol record-batch"
targets=${FUZZ_TARGETS:-$all_targets}

root=.build/fuzz
modules=$root/modules
bin=$root/bin
mkdir -p "$modules" "$bin" "$root/logs"

swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
# -O: the fuzzer's throughput is the point, and preconditions stay checked at -O. -g keeps the
# sanitizer's stack traces readable.
flags=(-O -g -sanitize=fuzzer,address -parse-as-library -swift-version 6
       -I Sources/CZlib -I Sources/COpenSSL -I "$modules")
# lld: the system's gold linker warns about every ASan helper symbol; the toolchain ships lld.
link=(-use-ld=lld -lz -lssl -lcrypto)

# Each module with the modules it imports; the cache key of a module covers its imports' keys.
declare -A module_deps=([Crypto]="" [WebSocketProtocol]="Crypto" [BangbangCore]="Crypto"
                        [JSON]="" [BangbangProtocol]="BangbangCore JSON" [Forwarding]="" [NATSProtocol]="" [RelayProtocol]="" [InboxProtocol]="" [JournalProtocol]="")

# Files of Tests/TestSupport a target compiles in beside its main.swift.
declare -A target_sources=([websocket-frames]="Tests/TestSupport/SeededGenerator.swift")

hash_of() { cat "$@" | sha256sum | cut -c1-16; }
flags_hash=$( { "$swiftc" --version 2>&1; echo "${flags[*]} ${link[*]}"; } | sha256sum | cut -c1-16)
sources_of() { find "Sources/$1" -name '*.swift' | LC_ALL=C sort; }

declare -A module_hash
for name in Crypto WebSocketProtocol BangbangCore JSON BangbangProtocol Forwarding NATSProtocol RelayProtocol InboxProtocol JournalProtocol; do   # dependencies first
    module_hash[$name]=$( { hash_of $(sources_of "$name") Sources/CZlib/* Sources/COpenSSL/*; echo "$flags_hash";
                            for dep in ${module_deps[$name]}; do echo "${module_hash[$dep]}"; done; } | sha256sum | cut -c1-16)
done

build_module() {
    local name=$1 key=${module_hash[$1]}
    if [ -f "$modules/$name.stamp" ] && [ "$(cat "$modules/$name.stamp")" = "$key" ]; then return; fi
    echo "fuzz: building module $name" >&2
    rm -f "$modules/$name.stamp"
    local sources
    mapfile -t sources < <(sources_of "$name")
    "$swiftc" "${flags[@]}" -module-name "$name" -wmo -emit-module -emit-module-path "$modules/$name.swiftmodule" \
        -c "${sources[@]}" -o "$modules/$name.o"
    echo "$key" > "$modules/$name.stamp"
}

build_target() {
    local name=$1 objects=("$modules/Crypto.o") used=(Crypto)
    case $name in
        json) used+=(BangbangCore JSON BangbangProtocol) ;;
        forwarding) used+=(Forwarding) ;;
        nats-protocol) used+=(NATSProtocol) ;;
        relay-protocol) used+=(RelayProtocol) ;;
        inbox-protocol) used+=(InboxProtocol) ;;
        record-batch) used+=(JournalProtocol) ;;
        *) used+=(WebSocketProtocol) ;;
    esac
    local key sources=("fuzz/$name/main.swift")
    for file in ${target_sources[$name]:-}; do sources+=("$file"); done
    key=$( { hash_of "${sources[@]}"; for m in "${used[@]}"; do echo "${module_hash[$m]}"; done;
             echo "$flags_hash"; } | sha256sum | cut -c1-16)
    if [ -x "$bin/$name" ] && [ -f "$bin/$name.stamp" ] && [ "$(cat "$bin/$name.stamp")" = "$key" ]; then return; fi
    echo "fuzz: building target $name" >&2
    rm -f "$bin/$name.stamp"
    for m in "${used[@]:1}"; do objects+=("$modules/$m.o"); done
    "$swiftc" "${flags[@]}" -warnings-as-errors -module-name "Fuzz_${name//-/_}" "${sources[@]}" \
        "${objects[@]}" "${link[@]}" -o "$bin/$name"
    echo "$key" > "$bin/$name.stamp"
}

# Two compiler jobs at a time, matching the two cores CI has: the two independent module
# chains side by side, then the targets in pairs. `wait PID` fails the script if a build failed.
build_started=$SECONDS
build_module Crypto
{ build_module WebSocketProtocol && build_module Forwarding && build_module NATSProtocol && build_module RelayProtocol && build_module InboxProtocol && build_module JournalProtocol; } & wsp=$!
{ build_module BangbangCore && build_module JSON && build_module BangbangProtocol; } & core=$!
wait $wsp
wait $core
pending=()
for name in $targets; do
    build_target "$name" & pending+=($!)
    if [ ${#pending[@]} = 2 ]; then wait "${pending[0]}"; wait "${pending[1]}"; pending=(); fi
done
for pid in "${pending[@]}"; do wait "$pid"; done
echo "fuzz: build ready in $((SECONDS - build_started))s" >&2

max_len() {
    case $1 in
        http-request|http-response) echo 20000 ;;   # past the 8 KiB start line / 16 KiB header limits
        websocket-frames) echo 16384 ;;
        inflate) echo 8192 ;;
        json) echo 4096 ;;
        forwarding) echo 4400 ;;   # past the 16 + 4096 bytes of the longest v2 header accepted
        nats-protocol) echo 8192 ;;   # past its 512-byte line and 2 KiB payload limits
        relay-protocol) echo 4096 ;;   # envelopes of many small frames; lengths are u8/u16/u32
        inbox-protocol) echo 4096 ;;   # messages and states of many small events or entries; lengths are u8/u16/u32
        record-batch) echo 4096 ;;   # batches of many small records; every length is a u32
    esac
}

# The Swift runtime's own crash backtracer reads the stack in ways ASan reports as an error of
# its own, burying the real one; libFuzzer and ASan print the stack trace anyway.
export SWIFT_BACKTRACE=enable=no
count=0 executions=0 crashes=0
for name in $targets; do
    count=$((count + 1))
    work=$root/work/$name artifacts=$root/artifacts/$name log=$root/logs/$name.log
    rm -rf "$work" "$artifacts"
    mkdir -p "$work" "$artifacts"
    if [ -d "fuzz/corpus/$name" ]; then cp -R "fuzz/corpus/$name/." "$work/"; fi
    common=(-rss_limit_mb=2048 -max_len="$(max_len "$name")" -timeout=10 -artifact_prefix="$artifacts/")

    status=0
    : > "$log"
    # Old crashers first: each must now run clean.
    if [ -d "fuzz/regressions/$name" ] && [ -n "$(ls -A "fuzz/regressions/$name")" ]; then
        "$bin/$name" "${common[@]}" "fuzz/regressions/$name"/* >> "$log" 2>&1 || status=$?
    fi
    if [ "$status" = 0 ]; then
        # libFuzzer reads -max_total_time=0 as "forever"; 0 seconds here means: only replay the corpus.
        if [ "$seconds" = 0 ]; then budget=(-runs=0); else budget=(-max_total_time="$seconds"); fi
        "$bin/$name" "${common[@]}" "${budget[@]}" -print_final_stats=1 "$work" >> "$log" 2>&1 || status=$?
    fi

    runs=$(sed -n 's/^Done \([0-9][0-9]*\) runs in .*/\1/p' "$log" | tail -1)
    # A run cut short by a crash prints no "Done" line; its last status line ("#N ...") counts.
    [ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -1)
    runs=${runs:-0}
    executions=$((executions + runs))
    corpus=$(find "$work" -type f | wc -l)
    if [ "$status" = 0 ]; then
        echo "fuzz: $name: $runs executions in ${seconds}s, corpus $corpus, ok"
    else
        crashes=$((crashes + 1))
        echo "fuzz: $name: FAILED (exit $status) after $runs executions; log $log, input in $artifacts/"
        grep -m 5 -E 'ERROR: |SUMMARY: |Fatal error|Precondition failed|deadly signal' "$log" | sed 's/^/    /' || true
    fi
done

echo "fuzz: $count targets, $executions executions, $crashes crashes"
[ "$crashes" = 0 ]
