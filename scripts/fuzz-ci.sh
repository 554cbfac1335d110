#!/usr/bin/env bash
# The coverage-guided half of the fuzzing, as CI runs it (scripts/test.sh
# calls this after the workspace tests):
#   1. installs cargo-fuzz (pinned) under target/tools when it is missing;
#   2. builds every target of fuzz/ with .clusterfuzzlite/build.sh, run
#      directly with the environment ClusterFuzzLite gives it (SRC, OUT), and
#      checks that each fuzzer binary landed in $OUT;
#   3. runs each fuzzer for a bounded time from its committed seed corpus (a
#      crash fails the script and leaves the input under target/fuzz-ci/).
# On stable Rust the targets build without a sanitizer (`-s none`).
#
#   FUZZ_SECONDS  per target (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seconds="${FUZZ_SECONDS:-10}"
tools="$root/target/tools"
targets=(dispatch http_edge stdio_line sse oracle)

if ! "$tools/bin/cargo-fuzz" --version >/dev/null 2>&1; then
    echo "== cargo-fuzz: installing 0.13.2 into target/tools"
    # --debug: it only drives cargo; a debug build takes half the time on 2 cores.
    cargo install --locked --debug --version 0.13.2 --root "$tools" cargo-fuzz
fi
export PATH="$tools/bin:$PATH"

work="$root/target/fuzz-ci"
rm -rf "$work"
mkdir -p "$work/out"
echo "== fuzz: .clusterfuzzlite/build.sh (SRC=$(dirname "$root") OUT=target/fuzz-ci/out)"
SRC="$(dirname "$root")" MCPERR_SRC="$root" OUT="$work/out" bash .clusterfuzzlite/build.sh
for t in "${targets[@]}"; do
    [ -x "$work/out/$t" ] || { echo "fuzz: build.sh left no $t in \$OUT" >&2; exit 1; }
done

# Each fuzzer runs on one core: two at a time (CI has 2 cores), their
# stats printed in the targets' order once both ended.
run_one() {
    local t="$1"
    mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
    cp fuzz/corpus/"$t"/* "$work/corpus/$t/"
    # exec: the background job is the fuzzer itself, so the trap below stops it.
    exec "$work/out/$t" "$work/corpus/$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -artifact_prefix="$work/artifacts/$t/" -print_final_stats=1 2>"$work/$t.log"
}
report() {
    local t="$1" status="$2"
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$work/$t.log" >&2
        echo "fuzz: $t crashed; the input is in $work/artifacts/$t/" >&2
        exit 1
    fi
    echo "== fuzz: $t for ${seconds}s: $(grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "$work/$t.log" | tr -s ' ' | tr '\n' ' ')"
}
trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    pair=("${targets[@]:i:2}")
    pids=()
    for t in "${pair[@]}"; do
        run_one "$t" &
        pids+=($!)
    done
    for j in "${!pair[@]}"; do
        status=0
        wait "${pids[$j]}" || status=$?
        report "${pair[$j]}" "$status"
    done
done
