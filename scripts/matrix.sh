#!/usr/bin/env bash
# Writes the published matrix page, docs/matrix/index.html: `mcperr matrix`
# over the reference server and the Bookshop on every SDK column (the MCP
# Python SDK, the TypeScript SDK 2.x and 1.x, FastMCP (as shipped, and with
# mask_error_details), punkpeye's fastmcp,
# mcp-framework, rmcp), over stdio and Streamable HTTP, in every era each speaks,
# under the `model` profile (every deviation from the error model a verdict).
# Each column's name carries the package and version that were run.
#
# Installs what it needs as scripts/test.sh does (venvs under target/, npm ci
# from the committed lock files), builds mcperr in release mode, starts one
# HTTP server per SDK on a free loopback port, and stops them on exit.
#
#   scripts/matrix.sh [OUT]     (default: docs/matrix/index.html)
#
# To compare two versions of one SDK, run `mcperr matrix` with a --server for
# each (docs/matrix-and-snapshots.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/matrix/index.html}"

log() { printf 'matrix.sh: %s\n' "$*" >&2; }

cargo build --release --locked -p mcperr >&2
mcperr="$PWD/target/release/mcperr"

# Relative paths: the page names the commands it ran, not this checkout.
py="$(fixtures/servers/python/setup.sh | tail -n 1)"
py="${py#"$PWD"/}"
fm="$(fixtures/servers/fastmcp/setup.sh | tail -n 1)"
fm="${fm#"$PWD"/}"
for f in typescript typescript-v1 fastmcp-ts mcp-framework; do
    "fixtures/servers/$f/setup.sh" >/dev/null
done
rmcp="$(fixtures/servers/rust/setup.sh | tail -n 1)"
rmcp="${rmcp#"$PWD"/}"
rmcp_version="$(sed -n 's/^rmcp = { version = "=\([^"]*\)".*/\1/p' fixtures/servers/rust/Cargo.toml)"

# The version of a package as installed.
py_version() { "$1" -c "import importlib.metadata as m; print(m.version('$2'))"; }
npm_version() {
    node -e "console.log(require('./fixtures/servers/$1/node_modules/$2/package.json').version)"
}

. scripts/lib/http-servers.sh

servers=(--server "reference=reference")
add() {
    local name="$1"
    shift
    servers+=(--server "$name=stdio:$*")
    start_http "${#pids[@]}" "$@"
    servers+=(--server "$name=http:$url")
}
add "mcp $(py_version "$py" mcp) (Python SDK)" "$py" fixtures/servers/python/bookshop.py
add "@modelcontextprotocol/server $(npm_version typescript @modelcontextprotocol/server)" node fixtures/servers/typescript/bookshop.mjs
add "@modelcontextprotocol/sdk $(npm_version typescript-v1 @modelcontextprotocol/sdk)" node fixtures/servers/typescript-v1/bookshop.mjs
add "fastmcp $(py_version "$fm" fastmcp) (PyPI)" "$fm" fixtures/servers/fastmcp/bookshop.py
add "fastmcp $(py_version "$fm" fastmcp) (PyPI, mask_error_details)" "$fm" fixtures/servers/fastmcp/bookshop.py --mask-errors
add "fastmcp $(npm_version fastmcp-ts fastmcp) (npm)" node fixtures/servers/fastmcp-ts/bookshop.mjs
add "mcp-framework $(npm_version mcp-framework mcp-framework)" node fixtures/servers/mcp-framework/bookshop.mjs
add "rmcp $rmcp_version (Rust SDK)" "$rmcp"

mkdir -p "$(dirname "$out")"
log "judging $(( (${#servers[@]} - 2) / 4 )) SDKs and the reference server"
# Exit 0 or 1 both wrote the page (1: a gated server failed; none is gated here).
code=0
"$mcperr" matrix "${servers[@]}" --profile model --timeout-ms 10000 --html "$out" || code=$?
if [ "$code" -gt 1 ]; then
    log "mcperr matrix exited $code"
    exit "$code"
fi
log "wrote $out"
