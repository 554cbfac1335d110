//! `mcperr-peers`: the peer manifests for shell scripts
//! (`scripts/matrix.sh`, `scripts/official-suite.sh`).
//!
//!   mcperr-peers columns   one line per column, tab-separated: name, title,
//!                          eras (comma-separated), transports, and the stdio
//!                          command shell-quoted (`eval "argv=($cmd)"`), its
//!                          paths relative to the repository's root (the
//!                          scripts run there, and the page names the
//!                          commands, not the checkout)
//!
//!   mcperr-peers findings MCPERR
//!                          the findings table (SDK × rule, under `spec`)
//!                          from runs of the mcperr binary MCPERR
//!                          (scripts/findings-table.sh)
//!
//! An error is one line on stderr and exit status 2.

use std::process::ExitCode;

const USAGE: &str = "usage: mcperr-peers columns | mcperr-peers findings MCPERR";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    if let ["findings", mcperr] = words[..] {
        return match mcperr_peers::findings_table::print_table(&mcperr_peers::root(), mcperr) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcperr-peers: {e}");
                ExitCode::from(2)
            }
        };
    }
    if words != ["columns"] {
        eprintln!("mcperr-peers: {USAGE}");
        return ExitCode::from(2);
    }
    let root = mcperr_peers::root();
    let prefix = format!("{}/", root.display());
    match mcperr_peers::columns(&root) {
        Ok(columns) => {
            for mut c in columns {
                for word in &mut c.argv {
                    if let Some(relative) = word.strip_prefix(&prefix) {
                        *word = relative.to_string();
                    }
                }
                let transports: Vec<&str> = c
                    .peer
                    .manifest
                    .transports
                    .iter()
                    .map(|t| t.as_str())
                    .collect();
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    c.name,
                    c.title,
                    c.eras().join(","),
                    transports.join(","),
                    c.command_line()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcperr-peers: {e}");
            ExitCode::from(2)
        }
    }
}
