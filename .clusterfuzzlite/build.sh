#!/bin/bash -eu
# Builds mcperr's cargo-fuzz targets into $OUT, as ClusterFuzzLite and
# OSS-Fuzz run it inside their Rust builder image ($SRC holds the checkout,
# $OUT receives the fuzzers and their seed corpora). The builder has nightly
# Rust, where cargo-fuzz's default AddressSanitizer build works; on stable
# Rust (a local run of this script, as our own test does) the sanitizer is
# left out with `-s none`, as cargo-fuzz documents.

: "${SRC:?SRC must name the directory holding the mcperr checkout}"
: "${OUT:?OUT must name the directory the fuzzers go to}"
project="${MCPERR_SRC:-$SRC/mcperr}"
cargo_fuzz="${CARGO_FUZZ:-cargo fuzz}"

cd "$project/fuzz"
if rustc --version | grep -q nightly || [ "${RUSTC_BOOTSTRAP:-}" = "1" ]; then
    $cargo_fuzz build -O
else
    $cargo_fuzz build -O -s none
fi

triple="$(rustc -vV | sed -n 's/^host: //p')"
mkdir -p "$OUT"
for source in fuzz_targets/*.rs; do
    target="$(basename "${source%.rs}")"
    cp "target/$triple/release/$target" "$OUT/"
    # The committed seeds, in the <fuzzer>_seed_corpus.zip form OSS-Fuzz reads.
    if [ -d "corpus/$target" ] && command -v zip >/dev/null 2>&1; then
        (cd "corpus/$target" && zip -q -j "$OUT/${target}_seed_corpus.zip" ./*)
    fi
done
