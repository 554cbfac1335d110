//! The `mcperr` binary: a thin edge over the `mcperr` library.

/// mimalloc instead of the system allocator: fuzzing and judging build and
/// drop many small JSON values per request, and glibc's malloc and free were
/// a quarter of a campaign's time (`perf`); see the README's performance table.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    no_huge_pages();
    std::process::exit(mcperr::cli::main());
}

/// No transparent huge pages for this process: mimalloc asks for them on
/// its arenas, and a 2 MiB page resident for every few bytes touched
/// doubled mcperr's peak memory (49 MB instead of 24 MB for `mcperr run`;
/// 59–63 MB instead of 35–37 MB reading a 300 MiB answer past the cap),
/// for no measurable speed. The servers mcperr starts get it back
/// (transport/stdio.rs), since a child would inherit it.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
