//! `mcperr list`: what a server offers and which cases apply to it, a dry
//! run that sends no case.

use clap::Args;
use mcperr_protocol::Era;

use crate::engine::{self};

use super::args::{SelectArgs, TargetArgs};
use super::setup::{check_auth, era_choice, resolve_target, runtime, selection, settings};
use super::{out, CliError, Usage};

#[derive(Debug, Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    select: SelectArgs,
}

pub(super) fn list(args: ListArgs) -> Result<i32, CliError> {
    let (target, _) = resolve_target(&args.target)?;
    let choice = era_choice(&args.target.era)?;
    check_auth(&args.select, &target)?;
    let selection = selection(&args.select)?;
    let settings = settings(&args.target, target, 1, String::new());
    let rt = runtime()?;
    // --era auto lists every era the server speaks, each on its own process.
    let eras: Vec<engine::EraChoice> = match choice {
        engine::EraChoice::Auto => vec![
            engine::EraChoice::Pinned(Era::Modern),
            engine::EraChoice::Pinned(Era::Legacy),
        ],
        pinned => vec![pinned],
    };
    rt.block_on(async {
        let mut listed = Vec::new();
        let mut unspoken = Vec::new();
        for choice in eras {
            match engine::open(&settings, choice, &selection).await {
                Ok(opened) => {
                    let era = opened.client.era;
                    opened.client.conn.close().await;
                    let how = mcperr_core::report::negotiated(
                        opened.versions.0.as_deref(),
                        &opened.versions.1,
                    );
                    let shown = if how.is_empty() {
                        era.to_string()
                    } else {
                        format!("{era} ({how})")
                    };
                    let text = render_listing(
                        &settings.target.display(),
                        &shown,
                        &opened.discovery,
                        &opened.plan,
                    );
                    listed.push(text);
                }
                // A server that cannot start, or a selection that cannot
                // plan, fails every era alike.
                Err(engine::EngineError::Setup(e)) if !e.spawn => {
                    let era = match choice {
                        engine::EraChoice::Pinned(e) => e.to_string(),
                        engine::EraChoice::Auto => "auto".into(),
                    };
                    unspoken.push(format!("{era}: {e}"));
                }
                Err(e) => return Err(e.into()),
            }
        }
        if listed.is_empty() {
            return Err(Usage(unspoken.join("; ")));
        }
        let mut text = listed.join("\n");
        for n in unspoken {
            text.push_str(&format!("\nnot listed: {}\n", n.replace('\n', " ")));
        }
        out(&text);
        Ok(0)
    })
}

/// The `mcperr list` text: what the server offers and which cases apply;
/// `era`: the era with how the server agreed its version.
pub(super) fn render_listing(
    shown: &str,
    era: &str,
    discovery: &mcperr_cases::discovery::Discovery,
    plan: &mcperr_cases::select::RunPlan,
) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(text, "server: {shown} · era {era}");
    let _ = writeln!(text, "serverInfo: {}", discovery.server_info);
    let names = |list: &[serde_json::Value], key: &str| -> String {
        let v: Vec<&str> = list
            .iter()
            .filter_map(|x| x.get(key).and_then(|n| n.as_str()))
            .collect();
        if v.is_empty() {
            "(none)".to_string()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(text, "tools:      {}", names(&discovery.tools, "name"));
    let _ = writeln!(text, "resources:  {}", names(&discovery.resources, "uri"));
    let _ = writeln!(
        text,
        "templates:  {}",
        names(&discovery.templates, "uriTemplate")
    );
    let _ = writeln!(text, "prompts:    {}", names(&discovery.prompts, "name"));
    let planned = &plan.cases;
    let _ = write!(
        text,
        "\n{}",
        mcperr_cases::select::tool_calls_block(&plan.tool_calls, &plan.left_out)
    );
    text.push_str(&parts_block(discovery, planned));
    let runs = planned.iter().filter(|(_, v)| v.is_ok()).count();
    let _ = writeln!(
        text,
        "\ncases: {runs} would run, {} would be skipped",
        planned.len() - runs
    );
    for (case, verdict) in planned.iter() {
        match verdict {
            Ok(()) => {
                let _ = writeln!(text, "  run   {:<4} {}", case.rule, case.id);
            }
            Err(why) => {
                let _ = writeln!(text, "  skip  {:<4} {}  ({why})", case.rule, case.id);
            }
        }
    }
    text
}

/// The parts the selected cases need: what plays each and how it was
/// found, or why nothing does and the flag that would name a player.
fn parts_block(
    discovery: &mcperr_cases::discovery::Discovery,
    planned: &[mcperr_cases::select::Planned],
) -> String {
    use mcperr_cases::case::Need;
    use mcperr_cases::parts::{unfound, PARTS};
    use std::fmt::Write as _;
    let needed: Vec<&str> = PARTS
        .iter()
        .map(|p| p.name)
        .filter(|name| {
            planned.iter().any(|(c, _)| {
                c.needs()
                    .unwrap_or_default()
                    .contains(&Need::Part(name.to_string()))
            })
        })
        .collect();
    if needed.is_empty() {
        return String::new();
    }
    let mut text = String::from("\nParts:\n");
    for name in needed {
        match discovery.parts.get(name) {
            Some(p) => {
                let args = if p.arguments == serde_json::json!({}) {
                    String::new()
                } else {
                    format!(" {}", p.arguments)
                };
                let _ = writeln!(text, "  {name:<19} {}{args}  ({})", p.plays, p.found);
            }
            None => {
                let def = mcperr_cases::parts::PartDef::named(name).expect("listed in PARTS");
                let flag = match def.finder {
                    mcperr_cases::parts::Finder::Contract => String::new(),
                    _ => format!("; name one with {}", def.flag_hint()),
                };
                let _ = writeln!(text, "  {name:<19} none: {}", def.what);
                let _ = writeln!(text, "  {:<19} ({}{flag})", "", unfound(def));
            }
        }
    }
    text
}
