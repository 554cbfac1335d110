//! Stale baseline entries as a report carries them: one note per entry a
//! baseline lists that did not fail (`RunReport::stale_baseline`), with
//! [`NAMES_NO_CASE`] after an entry that names no case at all. An entry is
//! stale for a set of runs (eras, transports) only when every run finds it
//! stale. The baseline writes these notes; the renderers and the matrix's
//! gate read them.

/// What a note adds after an entry that names no case.
pub const NAMES_NO_CASE: &str = " (names no case)";

/// The note for `entry`, which names no case.
pub fn names_no_case(entry: &str) -> String {
    format!("{entry}{NAMES_NO_CASE}")
}

/// The entry a stale note names, without the reason the note may add.
pub fn stale_entry(note: &str) -> &str {
    note.trim_end_matches(NAMES_NO_CASE)
}

/// The entries stale in every one of `runs` (each run's stale notes): an
/// entry may fail in one era or transport only, and is stale only when it
/// fails in none of them.
pub fn stale_in_all<'a>(runs: impl IntoIterator<Item = &'a [String]>) -> Vec<String> {
    let mut runs = runs.into_iter();
    let Some(first) = runs.next() else {
        return vec![];
    };
    let rest: Vec<&[String]> = runs.collect();
    first
        .iter()
        .map(|note| stale_entry(note))
        .filter(|entry| {
            rest.iter()
                .all(|run| run.iter().any(|note| stale_entry(note) == *entry))
        })
        .map(String::from)
        .collect()
}
