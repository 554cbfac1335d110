#!/usr/bin/env bash
# Runs every test of the project: the README's test command, and what CI runs.
# Installs what the tests need that the machine lacks (each SDK peer of
# fixtures/servers/*/peer.toml by its setup.sh: venvs under target/, npm ci
# under fixtures/servers/*/node_modules, the rmcp Bookshop built under
# target/rust-peers; the SARIF schema under fixtures/tools, cargo-insta and cargo-fuzz under
# target/tools, Debian's chromium for the matrix page's browser test), then
# runs the workspace's tests, the snapshot suite through `cargo insta test
# --check` (a changed, missing or unreferenced snapshot fails it), and the
# cargo-fuzz targets briefly.
set -euo pipefail
cd "$(dirname "$0")/.."

# CI builds everything once from a clean checkout: incremental compilation
# only adds work there (a local run keeps it, for the next run's sake).
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi

# A stage that fails stops the jobs still running in the background (the
# builds and installs below) and reaps them.
trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT

# The SDK peers: every fixtures/servers/<folder> with a peer.toml (its
# manifest, read by the mcperr-peers crate) installs with its setup.sh,
# whose last stdout line the tests read from target/peers/<folder>.setup.
# Each writes its stdout and its log to target/peer-<folder>.{out,log}.
peer_names=()
peer_pids=()
peer() {
    local name="$1" script="$2"
    [ -x "$script" ] || return 0
    echo "== [${SECONDS}s] $name peer: $script (in the background)"
    "$script" >"target/peer-$name.out" 2>"target/peer-$name.log" &
    peer_pids+=("$!")
    peer_names+=("$name")
}
mkdir -p target/peers
# The crates.io peers build first, each from its own lock file into one
# shared target/rust-peers (they share a hundred or so crates; one build at
# a time, under cargo's lock), while the others install (mostly waiting on
# the registries). Under CI at opt-level 0: the tests need a
# working server, not its top speed, and setup is CPU-bound on this build
# and the tools' (109 s at opt-level 3 alone on 2 cores, 79 s at 1, less at
# 0). Benchmarks build it as a user does.
for manifest in fixtures/servers/*/peer.toml; do
    folder="$(basename "$(dirname "$manifest")")"
    if grep -q '^registry = "crates.io"' "$manifest"; then
        if [ -n "${CI:-}" ]; then
            CARGO_PROFILE_RELEASE_OPT_LEVEL=0 peer "$folder" "fixtures/servers/$folder/setup.sh"
        else
            peer "$folder" "fixtures/servers/$folder/setup.sh"
        fi
    fi
done

# cargo-insta and cargo-fuzz (pinned, debug builds: they only drive cargo)
# build in the background too, beside rmcp, while the peers' installs wait
# on the registries; they are waited for where they are first needed.
tools="$PWD/target/tools"
install_tools() {
    "$tools/bin/cargo-insta" --version >/dev/null 2>&1 ||
        cargo install --locked --debug --version 1.49.0 --root "$tools" cargo-insta
    if [ "${MCPERR_SKIP_CARGO_FUZZ:-}" != "1" ] || [ -n "${CI:-}" ]; then
        "$tools/bin/cargo-fuzz" --version >/dev/null 2>&1 ||
            cargo install --locked --debug --version 0.13.2 --root "$tools" cargo-fuzz
    fi
}
echo "== [${SECONDS}s] cargo-insta and cargo-fuzz into target/tools (in the background)"
mkdir -p target
install_tools >target/tools-setup.log 2>&1 &
tools_pid=$!

# The other peers install side by side: each mostly waits on its registry
# (PyPI or npm); one after the other they took 160 s.
for manifest in fixtures/servers/*/peer.toml; do
    folder="$(basename "$(dirname "$manifest")")"
    grep -q '^registry = "crates.io"' "$manifest" || peer "$folder" "fixtures/servers/$folder/setup.sh"
done
peer sarif-schema fixtures/tools/sarif-schema/setup.sh  # the SARIF 2.1.0 schema --sarif is validated against
echo "== [${SECONDS}s] peers: waiting for their installs"
for i in "${!peer_pids[@]}"; do
    if ! wait "${peer_pids[$i]}"; then
        cat "target/peer-${peer_names[$i]}.log" >&2
        echo "test.sh: the ${peer_names[$i]} peer did not install (target/peer-${peer_names[$i]}.log)" >&2
        exit 1
    fi
done
echo "== [${SECONDS}s] peers installed"
peer_out() { [ -s "target/peer-$1.out" ] && tail -n 1 "target/peer-$1.out"; }
# What each peer's setup printed last, where the tests look for it; and
# the variable its manifest names for it (`setup_env`), for the tests that
# start a peer's interpreter themselves (the Recipes servers run on the
# Python SDK's venv).
for manifest in fixtures/servers/*/peer.toml; do
    folder="$(basename "$(dirname "$manifest")")"
    peer_out "$folder" >"target/peers/$folder.setup"
    var="$(sed -n 's/^setup_env = "\([A-Z_]*\)"$/\1/p' "$manifest")"
    if [ -n "$var" ]; then
        export "$var=$(cat "target/peers/$folder.setup")"
    fi
done
# The TypeScript SDK's setup.sh prints the Recipes server by default.
if MCPERR_TS_SERVER="$(peer_out typescript)"; then export MCPERR_TS_SERVER; fi
if MCPERR_SARIF_SCHEMA="$(peer_out sarif-schema)"; then export MCPERR_SARIF_SCHEMA; fi

echo "== [${SECONDS}s] cargo-insta and cargo-fuzz: waiting for their builds"
if ! wait "$tools_pid"; then
    cat target/tools-setup.log >&2
    echo "test.sh: cargo-insta or cargo-fuzz did not install (target/tools-setup.log)" >&2
    exit 1
fi
export PATH="$tools/bin:$PATH"

echo "== [${SECONDS}s] chromium (the matrix page is checked in a real browser)"
if MCPERR_CHROMIUM="$(scripts/chromium.sh | tail -n 1)"; then
    export MCPERR_CHROMIUM
elif [ -n "${CI:-}" ]; then
    echo "test.sh: CI needs chromium for the matrix page's browser test (see scripts/chromium.sh)" >&2
    exit 1
else
    echo "test.sh: warning: no chromium here; the matrix page's browser test is skipped (set MCPERR_CHROMIUM)" >&2
    export MCPERR_SKIP_BROWSER=1
fi

echo "== [${SECONDS}s] cargo test (workspace, the snapshot suite apart)"
cargo test --workspace --locked --exclude mcperr-snapshots
# The example crate (examples/rmcp-bookshop: mcperr inside a Rust server's
# own cargo test) passed above against the rmcp Bookshop; against the same
# server broken on purpose it must fail, on the snapshot the break changes.
# (`--workspace … --test conformance`, the example's one test target, and
# not `-p`: the workspace's feature resolution, so nothing is rebuilt.)
echo "== [${SECONDS}s] examples/rmcp-bookshop against a broken server (BOOKSHOP_BREAK=1): must fail"
if env -u INSTA_FORCE_PASS CI=true INSTA_UPDATE=no BOOKSHOP_BREAK=1 \
    cargo test --workspace --exclude mcperr-snapshots --locked --test conformance >target/example-broken.log 2>&1; then
    echo "test.sh: examples/rmcp-bookshop passed against a broken server" >&2
    exit 1
fi
if ! grep -q "Snapshot: error-returned-as-success" target/example-broken.log; then
    cat target/example-broken.log >&2
    echo "test.sh: examples/rmcp-bookshop failed, but not on the snapshot the break changes" >&2
    exit 1
fi
MCPERR_BIN=target/debug/mcperr scripts/action/test.sh   # the GitHub Action's run step, run as a runner runs it (docs/github-action.md)

# Every case against every server as insta snapshots (snapshots/), and the
# matrix page of the same run opened in headless chromium. --check: insta
# writes no .snap.new, and a changed or missing snapshot fails.
echo "== [${SECONDS}s] snapshots (ours, and the example crate's): cargo insta test --check"
# `--workspace` with the two snapshot test targets, not `-p`: the feature
# resolution of the stage above, so no dependency is rebuilt (29 s with -p).
cargo insta test --check --unreferenced=reject --workspace --test transcripts --test conformance

# The Python wheel first, while target/debug still holds the workspace's
# debug build that maturin reuses (the packaging below cleans it).
echo "== [${SECONDS}s] the Python wheel (maturin, bindings = bin; a debug build)"
scripts/wheel.sh

# Installable as users expect: the crates `cargo install mcperr` needs package
# cleanly (the embedded fixtures inside mcperr-model's package, built from its
# tarball), and the wheel installs into a fresh venv and runs.
echo "== [${SECONDS}s] cargo package (every member packaged; mcperr-model, whose build reads fixtures/, built from its tarball)"
# cargo verifies each crate against the others' tarballs through a temporary
# registry, and takes a registry crate's version as immutable: it unpacks it
# under $CARGO_HOME/registry/src/-<hash of the registry's path>/ once, and
# builds it into target/debug once. A second run from the same folder would
# build the first run's sources (CI's second run on one machine failed so).
# Both copies go first; the workspace's own builds of these crates with them.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf "$cargo_home"/registry/src/-*/mcperr-* "$cargo_home"/registry/cache/-*/mcperr-*
cargo clean -p mcperr-protocol -p mcperr-model -p mcperr-wire -p mcperr-cases -p mcperr-oracle -p mcperr-core -p mcperr-render -p mcperr-reference -p mcperr -p mcperr-snapshots
# Every member packages (`--no-verify`: manifests and the packaged lock
# files; a path dependency without a version fails here, the test-only
# snapshots package's included). Built from its tarball: mcperr-model, the
# one crate whose build reads files outside its src/ (its build script
# embeds fixtures/, listed in its `include`), with mcperr-protocol, its
# one dependency of ours. The other crates are src/ only (their one
# include_str!, render's, reads src/; the reference's build script gathers
# its faults from its own src/) and build from their tarballs as
# they do here; verifying each of them compiled every member and many
# dependencies several times over (104 s of a 2-core CI run, against
# 37 s for these two), and CI has 20 minutes.
cargo package --workspace --locked --no-verify
# Without debug info: the verification only proves that the crate builds.
CARGO_PROFILE_DEV_DEBUG=false cargo package -p mcperr-protocol -p mcperr-model --locked

# Coverage-guided fuzzing: build every cargo-fuzz target through the
# ClusterFuzzLite build script and run each briefly (MCPERR_SKIP_CARGO_FUZZ=1
# skips it for a quick local run; CI always runs it).
if [ "${MCPERR_SKIP_CARGO_FUZZ:-}" != "1" ] || [ -n "${CI:-}" ]; then
    echo "== [${SECONDS}s] cargo fuzz (scripts/fuzz-ci.sh)"
    # 6 s a target: a smoke run from the seeds on every change (longer
    # campaigns: FUZZ_SECONDS=300 scripts/fuzz-ci.sh, or ClusterFuzzLite).
    # Built at opt-level 0: the smoke proves each target builds and runs
    # its seeds and more, and the build is most of
    # the stage: 65 s at opt-level 0, 114-137 s at 1 on 2 cores.
    # ClusterFuzzLite builds its own, optimized.
    CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-0}" \
        FUZZ_SECONDS="${FUZZ_SECONDS:-6}" scripts/fuzz-ci.sh
fi
# Each stage above prints the seconds since the start: CI must stay under 20 minutes.
echo "== [${SECONDS}s] all passed"
