#!/usr/bin/env bash
# Prints the path of a headless-capable Chromium on the last line of stdout,
# installing Debian's `chromium` package when none is on the machine (the
# matrix page's browser test needs one). Everything else goes to stderr.
#
#   MCPERR_CHROMIUM=/path/to/chrome   use this browser, install nothing
#
# Needs root or password-less sudo to install; says so and exits 2 otherwise.
set -euo pipefail

log() { printf 'chromium.sh: %s\n' "$*" >&2; }

if [[ -n "${MCPERR_CHROMIUM:-}" ]]; then
    [[ -x "$MCPERR_CHROMIUM" ]] || { log "MCPERR_CHROMIUM=$MCPERR_CHROMIUM is not executable"; exit 2; }
    printf '%s\n' "$MCPERR_CHROMIUM"
    exit 0
fi
# A name on PATH must also run (Ubuntu's chromium-browser can be a stub).
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1 && "$c" --headless --version >/dev/null 2>&1; then
        command -v "$c"
        exit 0
    fi
done

if [[ "$(id -u)" == 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    log "no chromium on PATH, and installing Debian's chromium needs root (or set MCPERR_CHROMIUM)"
    exit 2
fi
command -v apt-get >/dev/null 2>&1 || { log "no chromium on PATH and no apt-get to install it (set MCPERR_CHROMIUM)"; exit 2; }
log "installing Debian's chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
# Bounded: a stuck mirror must not hang the test script.
${as_root[@]+"${as_root[@]}"} timeout 300 apt-get update -qq >&2
${as_root[@]+"${as_root[@]}"} timeout 600 apt-get install -y -qq --no-install-recommends chromium >&2
command -v chromium >/dev/null 2>&1 || { log "apt-get installed chromium, but it is not on PATH"; exit 2; }
command -v chromium
