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
timeout --kill-after=10 1500 swift test --skip-build --skip ConnectionMisuseTests --no-parallel
timeout --kill-after=10 300 swift test --skip-build --filter ConnectionMisuseTests

export BANGBANG_BINARY="$PWD/.build/debug/bangbang"
"$python" -m pytest -q -p no:cacheprovider Tests/e2e

if [ -x scripts/fuzz.sh ]; then scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; fi
if [ -x scripts/loadtest-smoke.sh ]; then scripts/loadtest-smoke.sh; fi
echo "test.sh: all passed"
