#!/usr/bin/env bash
# Runs every test of the project: the README's test command, and what CI runs.
# Installs what the tests need that the machine lacks (the Python SDK peer in a
# venv under target/), then runs the whole Cargo workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x fixtures/servers/python/setup.sh ]; then
    echo "== python peer: installing the MCP Python SDK into target/py-venv"
    MCPERR_PYTHON="$(fixtures/servers/python/setup.sh | tail -n 1)"
    export MCPERR_PYTHON
fi

echo "== cargo test (workspace)"
cargo test --workspace --locked
