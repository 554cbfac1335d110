#!/usr/bin/env bash
# Builds mcperr as a Python wheel with maturin (pyproject.toml, bindings =
# "bin"), installs it into a fresh venv and runs `mcperr run` from there, as
# a Python server author would after `pipx install` or `uvx`.
#
#   scripts/wheel.sh            a debug build (reuses target/debug: what CI runs)
#   scripts/wheel.sh --release  the wheel one would publish
#
# maturin comes from PyPI into target/wheel-venv (pinned); the wheel is
# written to target/wheels/.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=(--profile dev)
if [ "${1:-}" = "--release" ]; then
    profile=(--release)
fi

tools=target/wheel-venv
if ! "$tools/bin/maturin" --version >/dev/null 2>&1; then
    echo "== maturin: installing 1.16.0 into $tools"
    python3 -m venv "$tools"
    "$tools/bin/pip" install --quiet --disable-pip-version-check "maturin==1.16.0"
fi

echo "== maturin build ${profile[*]}"
rm -rf target/wheels
"$tools/bin/maturin" build --locked "${profile[@]}" --out target/wheels
wheel="$(ls target/wheels/mcperr-*.whl)"
echo "built $wheel"

echo "== the wheel in a fresh venv"
venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
test -x "$venv/bin/mcperr" || { echo "wheel.sh: the wheel put no mcperr on the venv's PATH" >&2; exit 1; }
"$venv/bin/mcperr" --version
# The main job from the installed binary, away from the checkout: the
# embedded reference server, both eras, over stdio and HTTP.
(cd "$(dirname "$venv")" && PATH="$venv/bin:$PATH" mcperr run -q --cases 'tools/*')
echo "wheel.sh: the wheel installs and runs"
