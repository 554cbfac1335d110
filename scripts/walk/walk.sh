#!/usr/bin/env bash
# Walks one `mcperr run` case through the code: the order in which the run
# first enters each function of mcperr's own crates, from the case's
# execution (`execute::execute`) to its result, and how often that walk
# returns to a source file it had already left (issue 49's measure of a
# plan that circles back into the client and the exchange). Needs gdb and
# addr2line (binutils); a debug build (line tables, as the dev profile has).
#
#   scripts/walk/walk.sh [BIN] [CASE] [ERA]     # e.g. target/debug/mcperr tools/unknown-tool 2025-11-25
#
# WALK_MODE=all counts every entry (async polls and the stdout reader's
# task included), not only the first of each function.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-target/debug/mcperr}"
case_id="${2:-tools/unknown-tool}"
era="${3:-2025-11-25}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# mcperr's own functions (std and crates.io code are not walked).
nm -C --defined-only "$bin" |
    awk '$2 ~ /^[Tt]$/ {a=$1; $1=""; $2=""; sub(/^  /,""); print a" "$0}' |
    grep -E '^[0-9a-f]+ mcperr(_cases|_core|_model|_oracle|_protocol|_render|_wire|_snapshots)?::' \
        > "$work/syms"
WALK_MODE="${WALK_MODE:-first}" WALK_SYMS="$work/syms" WALK_OUT="$work/walk" \
WALK_FROM='mcperr::execute::execute' WALK_TO='mcperr::engine::run::{{closure}}::{{closure}}' \
    timeout 600 gdb -q -batch -x "$here/gdb_walk.py" \
    --args "$bin" run --stdio "$bin reference" --era "$era" --cases "$case_id" > "$work/gdb.log" 2>&1 ||
    { tail -5 "$work/gdb.log" >&2; exit 2; }
python3 "$here/stays.py" "$bin" "$work/walk" ${WALK_LIST:+--list} || exit 2
