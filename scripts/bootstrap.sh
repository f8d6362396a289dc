#!/usr/bin/env bash
# Installs what building and testing Bangbang needs, and nothing that is already there:
# the C libraries (OpenSSL, zlib) from Debian; headless Chromium, its WebDriver and a CJK font
# (so Chinese renders in screenshots) from Debian for the browser tests; and a private Python
# environment with the independent WebSocket client, the JSON Schema validator and Selenium.
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

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
[ -n "$(fc-list 'Noto Sans CJK SC' 2>/dev/null)" ] || missing+=(fonts-noto-cjk)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    else
        echo "bootstrap: missing ${missing[*]} for the browser tests; run: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

venv=.build/pyenv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websockets, jsonschema, pytest, selenium" 2>/dev/null; then
    mkdir -p .build
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/e2e/requirements.txt
fi
echo "bootstrap: ready (python: $venv/bin/python)"
