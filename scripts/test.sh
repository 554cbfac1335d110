#!/usr/bin/env bash
# Runs every test of the project: the README's test command, and what CI runs.
# Installs what the tests need that the machine lacks (the MCP Python SDK in a
# venv under target/, the TypeScript SDK with npm ci under
# fixtures/servers/typescript/node_modules, cargo-fuzz under target/tools),
# then runs the workspace's tests and the cargo-fuzz targets briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x fixtures/servers/python/setup.sh ]; then
    echo "== python peer: installing the MCP Python SDK into target/py-venv"
    MCPERR_PYTHON="$(fixtures/servers/python/setup.sh | tail -n 1)"
    export MCPERR_PYTHON
fi

if [ -x fixtures/servers/typescript/setup.sh ]; then
    echo "== typescript peer: installing the MCP TypeScript SDK (npm ci)"
    MCPERR_TS_SERVER="$(fixtures/servers/typescript/setup.sh | tail -n 1)"
    export MCPERR_TS_SERVER
fi

echo "== cargo test (workspace)"
cargo test --workspace --locked

# Coverage-guided fuzzing: build every cargo-fuzz target through the
# ClusterFuzzLite build script and run each briefly (MCPERR_SKIP_CARGO_FUZZ=1
# skips it for a quick local run; CI always runs it).
if [ "${MCPERR_SKIP_CARGO_FUZZ:-}" != "1" ] || [ -n "${CI:-}" ]; then
    scripts/fuzz-ci.sh
fi
