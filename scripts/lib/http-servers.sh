# Sourced by scripts/matrix.sh and scripts/official-suite.sh: a scratch
# directory, servers started over Streamable HTTP, and all of them stopped
# (and the scratch directory removed) on exit. The sourcing script defines
# `log`.

tmp="$(mktemp -d)"
pids=()
# Run on exit: stops every server started, then calls `on_exit` if the
# sourcing script defines one, then removes the scratch directory.
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if declare -F on_exit >/dev/null; then on_exit; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# Starts `CMD… --http 127.0.0.1:0` and sets `url` to the endpoint URL it
# prints first (30 s at most). Not in a subshell: its pid must reach
# `pids`, so that the server is stopped on exit.
start_http() {
    local name="$1"
    shift
    "$@" --http 127.0.0.1:0 >"$tmp/$name.url" 2>"$tmp/$name.err" &
    pids+=("$!")
    for _ in $(seq 300); do
        if [ -s "$tmp/$name.url" ] && head -n 1 "$tmp/$name.url" | grep -q '^http://'; then
            url="$(head -n 1 "$tmp/$name.url")"
            return
        fi
        sleep 0.1
    done
    log "$name did not print its URL within 30 s; its stderr:"
    tail -n 20 "$tmp/$name.err" >&2
    exit 2
}
