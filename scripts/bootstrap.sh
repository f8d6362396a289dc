#!/usr/bin/env bash
# Installs what building and testing Bangbang needs, and nothing that is already there:
# the C libraries (OpenSSL, zlib) from Debian, Debian's nats-server (the NATS client's
# integration tests start a 3-node JetStream cluster of it), and a private Python environment
# with the independent WebSocket client and the JSON Schema validator used by the interop tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! pkg-config --exists openssl zlib 2>/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libssl-dev zlib1g-dev pkg-config
    else
        echo "bootstrap: missing libssl-dev / zlib1g-dev / pkg-config; run: sudo apt-get install libssl-dev zlib1g-dev pkg-config" >&2
        exit 1
    fi
fi

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nats-server
    else
        echo "bootstrap: missing nats-server; run: sudo apt-get install nats-server" >&2
        exit 1
    fi
fi

venv=.build/pyenv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websockets, jsonschema, pytest" 2>/dev/null; then
    mkdir -p .build
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/e2e/requirements.txt
fi
echo "bootstrap: ready (python: $venv/bin/python)"
