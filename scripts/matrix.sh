#!/usr/bin/env bash
# Writes the published matrix page, docs/matrix/index.html: `mcperr matrix`
# over the reference server and the Bookshop of every SDK column
# (fixtures/servers/*/peer.toml), over stdio and Streamable HTTP where each
# serves them, in every era each speaks, under the `model` profile (every
# deviation from the error model a verdict). Each column's name carries the
# package and version its manifest pins.
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

cargo build --release --locked -p mcperr -p mcperr-peers --bin mcperr --example mcperr-peers >&2
mcperr="$PWD/target/release/mcperr"

. scripts/lib/peers.sh
. scripts/lib/http-servers.sh
setup_peers

# Each column as its manifest says: over stdio and Streamable HTTP where it
# serves them; its title carries the package and the version pinned.
servers=(--server "reference=reference")
columns=0
while IFS=$'\t' read -r _name title _eras transports cmd; do
    eval "argv=($cmd)"
    if [[ ",$transports," == *,stdio,* ]]; then
        servers+=(--server "$title=stdio:$cmd")
    fi
    if [[ ",$transports," == *,http,* ]]; then
        start_http "${#pids[@]}" "${argv[@]}"
        servers+=(--server "$title=http:$url")
    fi
    columns=$((columns + 1))
done < <(peer_columns)

mkdir -p "$(dirname "$out")"
log "judging $columns SDK columns and the reference server"
# Exit 0 or 1 both wrote the page (1: a gated server failed; none is gated here).
code=0
"$mcperr" matrix "${servers[@]}" --profile model --timeout-ms 10000 --html "$out" || code=$?
if [ "$code" -gt 1 ]; then
    log "mcperr matrix exited $code"
    exit "$code"
fi
log "wrote $out"
