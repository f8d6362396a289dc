#!/usr/bin/env bash
# Installs what building and testing Bangbang needs, and nothing that is already there:
# the C libraries (OpenSSL, zlib, SQLite) and the reverse proxies the end-to-end tests put in front of
# the server (nginx, HAProxy) from Debian; Debian's nats-server (the NATS client's integration
# tests start a 3-node JetStream cluster of it); headless Chromium, its WebDriver and a CJK font
# (so Chinese renders in screenshots) from Debian for the browser tests; Debian's prometheus (and
# its promtool), which the monitoring tests run against a server; and a private Python
# environment with the independent WebSocket client, the JSON Schema validator, Selenium and
# axe-core (axe-selenium-python).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
pkg-config --exists openssl zlib sqlite3 2>/dev/null || packages+=(libssl-dev zlib1g-dev libsqlite3-dev pkg-config)
for tool in nginx haproxy nats-server prometheus; do
    # /usr/sbin is not on every user's PATH.
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || packages+=("$tool")
done
command -v chromium >/dev/null 2>&1 || packages+=(chromium)
command -v chromedriver >/dev/null 2>&1 || packages+=(chromium-driver)
[ -n "$(fc-list 'Noto Sans CJK SC' 2>/dev/null)" ] || packages+=(fonts-noto-cjk)
if [ ${#packages[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${packages[@]}"
    else
        echo "bootstrap: missing ${packages[*]}; run: sudo apt-get install ${packages[*]}" >&2
        exit 1
    fi
fi

venv=.build/pyenv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websockets, jsonschema, pytest, selenium, axe_selenium_python, xdist" 2>/dev/null; then
    mkdir -p .build
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/e2e/requirements.txt
fi
echo "bootstrap: ready (python: $venv/bin/python)"
