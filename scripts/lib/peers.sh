# Sourced by scripts/matrix.sh and scripts/official-suite.sh: the SDK peers
# of fixtures/servers/*/peer.toml (each one manifest, read by the
# mcperr-peers crate). The sourcing script defines `log` and runs from the
# repository's root.

# Runs every peer's setup.sh (installs what is missing; quick when nothing
# is) and keeps its last stdout line in target/peers/<folder>.setup, where
# the manifests' `{setup}` is read from.
setup_peers() {
    local manifest folder
    mkdir -p target/peers
    for manifest in fixtures/servers/*/peer.toml; do
        folder="$(basename "$(dirname "$manifest")")"
        if ! "fixtures/servers/$folder/setup.sh" >"target/peers/$folder.out"; then
            log "fixtures/servers/$folder/setup.sh failed"
            exit 2
        fi
        tail -n 1 "target/peers/$folder.out" >"target/peers/$folder.setup"
        rm -f "target/peers/$folder.out"
    done
}

# Prints one line per peer column, tab-separated: name, title, eras,
# transports (both comma-separated) and the stdio command, shell-quoted,
# with paths relative to the repository's root.
peer_columns() {
    cargo run --quiet --release --locked -p mcperr-peers --example mcperr-peers -- columns
}
