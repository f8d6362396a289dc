#!/usr/bin/env bash
# The one command that passes the tests on a fresh machine: installs what is missing, builds,
# runs the unit tests (`swift test`), the end-to-end and interop tests against a real server
# process (pytest, Tests/e2e), with the bounded fuzz run beside them, then the load-test smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
python=.build/pyenv/bin/python
export BANGBANG_PYTHON="$PWD/$python"   # the interop tests' independent peer

swift build --build-tests
# Where the time goes: each stage's end, in seconds since the start.
stage() { echo "test.sh: $1 done at ${SECONDS} s"; }
stage build

# The unit tests run in parallel, in three runs of their own:
# - the NATS suites (those that start nats-server: each NATS suite shares one cluster, and at most
#   three hold clusters at once, NATSTestSupport/NATSCluster.swift), found in the sources here;
#   within a suite that shares a cluster the tests run one at a time (`.serialized`), since each
#   finds it emptied of what the one before made;
# - every other test;
# - the exit tests (a child process per test, for `precondition` traps): while one runs, the test
#   runner watches every child of the process, and a Foundation `Process` of another test (a
#   server) that exits meanwhile can be left unreaped, the watcher spinning on it and that test
#   waiting forever.
# The NATS suites and the rest measured about 50 and 30 seconds here, each on its own; in one run
# together, at a load of other builds on the two cores, one run hung past 15 minutes.
# A run still going after its timeout is hung, and fails here with the tests it was in (Swift
# Testing prints each test's start) rather than at CI's own limit.
# Each run's output is kept and, when it fails, its failures are printed again at the end, where a
# reader of a long log looks first.
run_unit_tests() {
    local log="$1"; shift
    if ! "$@" 2>&1 | tee "$log"; then
        echo "test.sh: unit tests failed; what failed, from $log:"
        grep -E '✘|error:|failed|Fatal error' "$log" | grep -v ' started\.$' | tail -60
        return 1
    fi
}
nats_suites=$(grep -rlE 'withCluster|withSharedCluster|NATSCluster\.|sharedNATSCluster' Tests --include='*.swift' \
    | xargs grep -h '^@Suite' | sed -E 's/.*(struct|class|enum) ([A-Za-z0-9_]+).*/\2/' | sort -u | paste -sd '|')
nats_filter="\.($nats_suites)\b"
run_unit_tests .build/unit-tests-nats.log \
    timeout --kill-after=10 600 swift test --skip-build --filter "$nats_filter"
stage "unit tests (NATS suites)"

# Fuzzing (its build, then one libFuzzer process at a time, a core's worth of work) runs beside
# the tests from here on, which spend most of their time waiting on sockets, servers and leases;
# its report is printed after them. Not beside the NATS suites: with its build on both cores
# there, a lease test's bound on a clean hand-over (2 s) was missed. Its own process group, so
# that a failure here stops it and all its fuzzers.
fuzz_pid=""
stop_fuzz() { if [ -n "$fuzz_pid" ]; then kill -- "-$fuzz_pid" 2>/dev/null || true; fuzz_pid=""; fi; }
trap stop_fuzz EXIT
if [ -x scripts/fuzz.sh ]; then
    setsid scripts/fuzz.sh "${FUZZ_SECONDS:-20}" > .build/fuzz-run.log 2>&1 < /dev/null &
    fuzz_pid=$!
fi
run_unit_tests .build/unit-tests.log \
    timeout --kill-after=10 600 swift test --skip-build --skip ConnectionMisuseTests --skip "$nats_filter"
stage "unit tests (the rest)"
run_unit_tests .build/unit-tests-exit.log \
    timeout --kill-after=10 300 swift test --skip-build --filter ConnectionMisuseTests
stage "unit tests (exit tests)"

export BANGBANG_BINARY="$PWD/.build/debug/bangbang"
# The end-to-end tests in parallel, one file to a worker (a module shares its fixtures' servers).
"$python" -m pytest -q -p no:cacheprovider -n 4 --dist loadfile Tests/e2e
stage "end-to-end tests"

if [ -n "$fuzz_pid" ]; then
    fuzz_status=0
    wait "$fuzz_pid" || fuzz_status=$?
    fuzz_pid=""
    cat .build/fuzz-run.log
    [ "$fuzz_status" = 0 ] || { echo "test.sh: fuzzing failed (exit $fuzz_status)"; exit 1; }
    stage fuzzing
fi
if [ -x scripts/loadtest-smoke.sh ]; then scripts/loadtest-smoke.sh; stage "load-test smoke"; fi
echo "test.sh: all passed"
