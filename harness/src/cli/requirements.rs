//! `mcperr requirements`: the spec's error requirements per era and what
//! checks each (mcperr_model::requirements renders them).

use std::io::Write;

use clap::Args;
use mcperr_protocol::Era;

use super::error::CliError::{self, Usage};

/// Writes `s` to stdout; a reader that went away (`| head`) ends the output
/// quietly instead of a panic.
pub(crate) fn print_out(s: &str) {
    let _ = std::io::stdout().lock().write_all(s.as_bytes());
}

#[derive(Debug, Args)]
pub(crate) struct RequirementsArgs {
    /// One era (2025-11-25 or 2026-07-28); both when not given.
    #[arg(long, value_name = "ERA")]
    era: Option<String>,
    /// Print JSON (an array with one object per era: era, totals, requirements).
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print Markdown (what docs/requirements/<era>.md holds).
    #[arg(long)]
    markdown: bool,
}

pub(crate) fn requirements(args: RequirementsArgs) -> Result<i32, CliError> {
    use mcperr_model::requirements;
    let eras: Vec<Era> = match &args.era {
        None => vec![Era::Legacy, Era::Modern],
        Some(e) => vec![e
            .parse()
            .map_err(|_| Usage(format!("--era {e:?}: an era is 2025-11-25 or 2026-07-28")))?],
    };
    if args.json {
        let all: Vec<serde_json::Value> = eras.iter().map(|e| requirements::json(*e)).collect();
        print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&all).unwrap_or_default()
        ));
    } else {
        let pages: Vec<String> = eras
            .iter()
            .map(|e| {
                if args.markdown {
                    requirements::page(*e)
                } else {
                    requirements::text(*e)
                }
            })
            .collect();
        print_out(&pages.join("\n"));
    }
    Ok(0)
}
