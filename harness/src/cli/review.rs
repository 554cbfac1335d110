//! `mcperr review DIR`: the pending snapshots a run left (`.snap.new`), each
//! with its diff against the accepted one, accepted, rejected or skipped:
//! what `cargo insta review` does, for a server whose repository has no
//! Cargo.toml (cargo-insta needs `cargo metadata` to find the files).

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;
use similar::{ChangeTag, TextDiff};

use super::{out, CliError, Usage};
use crate::snapshots::{self, Pending};

#[derive(Debug, Args)]
pub(crate) struct ReviewArgs {
    /// The snapshots folder `mcperr run --snapshots DIR` wrote.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Accept every pending snapshot without asking.
    #[arg(long, conflicts_with_all = ["reject", "list"])]
    accept: bool,
    /// Reject every pending snapshot without asking (the accepted ones stay).
    #[arg(long, conflicts_with = "list")]
    reject: bool,
    /// Only list the pending snapshots, new or changed, one per line.
    #[arg(long)]
    list: bool,
}

pub(crate) fn review(args: ReviewArgs) -> Result<i32, CliError> {
    if !args.dir.is_dir() {
        return Err(CliError::file(
            "mcperr review",
            args.dir.display(),
            "not a folder (the DIR given to `mcperr run --snapshots DIR`)",
        ));
    }
    let pending = snapshots::pending(&args.dir)?;
    let rel = |p: &Pending| {
        p.path
            .strip_prefix(&args.dir)
            .unwrap_or(&p.path)
            .display()
            .to_string()
    };
    if args.list {
        for p in &pending {
            let kind = if p.old.is_some() { "changed" } else { "new" };
            out(&format!("{kind:<8}{}\n", rel(p)));
        }
        return Ok(0);
    }
    if pending.is_empty() {
        out(&format!("no pending snapshots in {}\n", args.dir.display()));
        return Ok(0);
    }
    if args.accept || args.reject {
        for p in &pending {
            if args.accept {
                p.accept()?;
            } else {
                p.reject()?;
            }
        }
        let done = if args.accept { "accepted" } else { "rejected" };
        out(&format!(
            "{done} {} snapshots in {}\n",
            pending.len(),
            args.dir.display()
        ));
        return Ok(0);
    }
    if !io::stdin().is_terminal() {
        return Err(Usage(format!(
            "{} pending snapshots and no terminal to ask: pass --accept, --reject or --list",
            pending.len()
        )));
    }
    interactive(&pending, &rel)
}

/// One snapshot at a time: its description, the diff, then a choice.
fn interactive(pending: &[Pending], rel: &dyn Fn(&Pending) -> String) -> Result<i32, CliError> {
    let (mut accepted, mut rejected, mut skipped) = (0, 0, 0);
    let mut stdin = io::stdin().lock();
    for (i, p) in pending.iter().enumerate() {
        out(&format!(
            "\n[{}/{}] {} ({})\n{}\n",
            i + 1,
            pending.len(),
            rel(p),
            if p.old.is_some() { "changed" } else { "new" },
            p.new.description
        ));
        out(&diff(
            p.old.as_ref().map_or("", |o| &o.contents),
            &p.new.contents,
        ));
        loop {
            print!("  a accept · r reject · s skip · q quit > ");
            let _ = io::stdout().flush();
            let mut line = String::new();
            if stdin.read_line(&mut line).unwrap_or(0) == 0 {
                line = "q".into();
            }
            match line.trim() {
                "a" => {
                    p.accept()?;
                    accepted += 1;
                }
                "r" => {
                    p.reject()?;
                    rejected += 1;
                }
                "s" | "" => skipped += 1,
                "q" => {
                    skipped += pending.len() - i;
                    out(&format!(
                        "\naccepted {accepted}, rejected {rejected}, skipped {skipped}\n"
                    ));
                    return Ok(0);
                }
                _ => continue,
            }
            break;
        }
    }
    out(&format!(
        "\naccepted {accepted}, rejected {rejected}, skipped {skipped}\n"
    ));
    Ok(0)
}

/// A line diff, `-` for the accepted snapshot's lines, `+` for the new
/// one's, three lines of context around each change.
pub(crate) fn diff(old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut text = String::new();
    for group in diff.grouped_ops(3) {
        text.push_str("  @@\n");
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                    ChangeTag::Equal => ' ',
                };
                let line = change.value();
                text.push_str(&format!("  {sign} {}", line));
                if !line.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn a_diff_marks_what_went_and_what_came() {
        let d = diff(
            "{\n  \"a\": 1,\n  \"b\": 2\n}",
            "{\n  \"a\": 1,\n  \"b\": 3\n}",
        );
        assert!(d.contains("  -   \"b\": 2\n"), "{d}");
        assert!(d.contains("  +   \"b\": 3\n"), "{d}");
        assert!(d.contains("      \"a\": 1,\n"), "{d}");
    }
}
