#!/usr/bin/env bash
# Runs the official MCP conformance suite and mcperr on the same servers and
# lists where their verdicts on error behaviour disagree: the reference server
# and the Bookshop on every SDK, each over Streamable HTTP in 2025-11-25 (the
# newest era the suite speaks). The checks compared, and the mcperr cases each
# maps to, are fixtures/official-suite/checks.toml; docs/official-suite.md
# explains every disagreement of the output.
#
# Installs what it needs as scripts/test.sh does (the SDK peers), plus the
# pinned suite and the Node it needs from the npm registry under
# target/official-suite; builds mcperr in release mode; stops every server on
# exit.
#
#   scripts/official-suite.sh [OUT]     (default: docs/official-suite/latest.md)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/official-suite/latest.md}"
checks=fixtures/official-suite/checks.toml

log() { printf 'official-suite.sh: %s\n' "$*" >&2; }

pkg() { sed -n "s/^$1 = \"\\(.*\\)\"/\\1/p" "$checks"; }
suite="$(pkg suite)"
node_pkg="$(pkg node)"
dir=target/official-suite
if [ ! -x "$dir/node_modules/.bin/node" ] || [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
    log "installing $suite and $node_pkg under $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --no-save "$node_pkg" "$suite" >&2
fi
node22="$PWD/$dir/node_modules/.bin/node"
conformance="$PWD/$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

cargo build --release --locked -p mcperr -p mcperr-peers --bin mcperr --example mcperr-peers >&2
mcperr="$PWD/target/release/mcperr"
. scripts/lib/peers.sh
setup_peers

on_exit() {
    if [ -n "${MCPERR_KEEP_RESULTS:-}" ] && [ -d "$tmp/results" ]; then
        cp -r "$tmp/results" "$MCPERR_KEEP_RESULTS"
    fi
}
. scripts/lib/http-servers.sh

scenarios="$(sed -n 's/^scenario = "\(.*\)"/\1/p' "$checks" | sort -u)"
results="$tmp/results"
judge() {
    local name="$1"
    shift
    start_http "$name" "$@"
    log "$name at $url"
    mkdir -p "$results/$name/official"
    for s in $scenarios; do
        # One checks.json per scenario under --output-dir; a failing scenario
        # exits non-zero, which is its verdict, not ours.
        timeout 120 "$node22" "$conformance" server --url "$url" --scenario "$s" \
            --output-dir "$results/$name/official/$s" >"$results/$name/official/$s.log" 2>&1 || true
    done
    "$mcperr" run --http "$url" --era 2025-11-25 --profile spec --json "$results/$name/mcperr.json" \
        >/dev/null 2>&1 || true
}

judge reference "$mcperr" reference
# Every peer column that serves Streamable HTTP in 2025-11-25.
while IFS=$'\t' read -r name _title eras transports cmd; do
    if [[ ",$transports," == *,http,* && ",$eras," == *,2025-11-25,* ]]; then
        eval "argv=($cmd)"
        judge "$name" "${argv[@]}"
    fi
done < <(peer_columns)

mkdir -p "$(dirname "$out")"
{
    echo "<!-- Written by scripts/official-suite.sh; docs/official-suite.md explains it. -->"
    echo "# Official suite and mcperr, side by side (the script's output)"
    echo
    python3 scripts/official_compare.py "$checks" "$results"
} >"$out"
log "wrote $out"
