//! The `mcperr` binary: a thin edge over the `mcperr` library.

fn main() {
    std::process::exit(mcperr::cli::main());
}
