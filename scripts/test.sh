#!/usr/bin/env bash
# The one command that passes the tests on a fresh machine: installs what is missing, builds,
# runs the unit tests (`swift test`), the end-to-end and interop tests against a real server
# process (pytest, Tests/e2e), then the bounded fuzz and load-test smoke runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
python=.build/pyenv/bin/python
export BANGBANG_PYTHON="$PWD/$python"   # the interop tests' independent peer

swift build --build-tests
# The exit tests (a child process per test, for `precondition` traps) run on their own: while one
# runs, the test runner watches every child of the process, and a Foundation `Process` of another
# test (a server, a nats-server) that exits meanwhile can be left unreaped, the watcher spinning on
# it and that test waiting forever.
# One test at a time (about 3 minutes here, against under 1 in parallel): run in parallel on two
# cores, the integration tests (three-node NATS clusters, server processes, timing-sensitive
# sockets) starved one another past their own timeouts, each run failing a different one. A run
# still going after 25 minutes is hung, and fails here with the tests it was in (Swift Testing
# prints each test's start) rather than at CI's own limit.
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
run_unit_tests .build/unit-tests.log \
    timeout --kill-after=10 1500 swift test --skip-build --skip ConnectionMisuseTests --no-parallel
run_unit_tests .build/unit-tests-exit.log \
    timeout --kill-after=10 300 swift test --skip-build --filter ConnectionMisuseTests

export BANGBANG_BINARY="$PWD/.build/debug/bangbang"
"$python" -m pytest -q -p no:cacheprovider Tests/e2e

if [ -x scripts/fuzz.sh ]; then scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; fi
if [ -x scripts/loadtest-smoke.sh ]; then scripts/loadtest-smoke.sh; fi
echo "test.sh: all passed"
