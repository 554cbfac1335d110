//! The `mcperr` binary: a thin edge over the `mcperr` library.

/// mimalloc instead of the system allocator: fuzzing and judging build and
/// drop many small JSON values per request, and glibc's malloc and free were
/// a quarter of a campaign's time (`perf`); see the README's performance table.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    mcperr::no_huge_pages();
    std::process::exit(mcperr::cli::main());
}
