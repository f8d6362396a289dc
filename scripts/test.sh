#!/usr/bin/env bash
# The one command that passes the tests on a fresh machine: installs what is missing, builds,
# runs every unit, end-to-end and interop test (`swift test`), then the fuzz and load-test smoke runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
export BANGBANG_PYTHON="$PWD/.build/pyenv/bin/python"

swift build --build-tests
swift test --skip-build 2>&1 | tee .build/test-output.txt
status=${PIPESTATUS[0]}
if [ "$status" != 0 ]; then exit "$status"; fi

if [ -x scripts/fuzz.sh ]; then scripts/fuzz.sh "${FUZZ_SECONDS:-20}"; fi
if [ -x scripts/loadtest-smoke.sh ]; then scripts/loadtest-smoke.sh; fi
echo "test.sh: all passed"
