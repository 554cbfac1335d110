#!/usr/bin/env bash
# Writes the findings table of docs/findings/README.md (SDK × rule, the
# verdict under `spec` in every era each column speaks) from runs of mcperr
# against every peer column of fixtures/servers/*/peer.toml, between the
# page's `<!-- findings-table -->` markers; the prose around it is by hand.
#
# Installs what it needs as scripts/test.sh does (the SDK peers), builds
# mcperr and mcperr-peers in release mode.
#
#   scripts/findings-table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/findings/README.md

log() { printf 'findings-table.sh: %s\n' "$*" >&2; }

cargo build --release --locked -p mcperr -p mcperr-peers --bin mcperr --example mcperr-peers >&2
. scripts/lib/peers.sh
setup_peers

table="$(mktemp)"
trap 'rm -f "$table"' EXIT
target/release/examples/mcperr-peers findings "$PWD/target/release/mcperr" >"$table"
grep -q '^<!-- findings-table -->$' "$page" || { log "no <!-- findings-table --> markers in $page"; exit 2; }
python3 - "$page" "$table" <<'PY'
import sys
page, table = sys.argv[1], sys.argv[2]
text = open(page).read()
begin = "<!-- findings-table -->\n"
end = "<!-- /findings-table -->\n"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(page, "w").write(head + begin + open(table).read() + end + tail)
PY
log "wrote the table of $page"
