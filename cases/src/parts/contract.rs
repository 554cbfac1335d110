//! The Bookshop contract's players (DESIGN.md section 3): a part's named
//! tool, template or prompt, cast only where the server lists it and its
//! listing can play the part.

use serde_json::Value;

use super::{Cast, Found, Kind, PartDef, Player, PARTS};
use crate::discovery::Discovery;

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

/// Whether the server lists `part`'s contract player.
fn contract_listed(d: &Discovery, part: &PartDef, plays: &str) -> bool {
    let named = |list: &[Value], key: &str| {
        list.iter()
            .any(|v| v.get(key).and_then(Value::as_str) == Some(plays))
    };
    match part.kind {
        Kind::Tool => named(&d.tools, "name"),
        Kind::Prompt => named(&d.prompts, "name"),
        // A URI the contract names is listed when a template's text before
        // its first variable starts it (`fail://{name}` for `fail://db`).
        Kind::Resource => d.templates.iter().any(|t| {
            let tpl = t.get("uriTemplate").and_then(Value::as_str).unwrap_or("");
            let prefix = &tpl[..tpl.find('{').unwrap_or(tpl.len())];
            !prefix.is_empty() && plays.starts_with(prefix) && prefix.contains("://")
        }),
    }
}

/// Whether the tool `plays`, as the server lists it, can play `part` at
/// all: a name alone does not make a part. The structured-output parts need
/// an `outputSchema` ("If an output schema is provided: Servers **MUST**
/// provide structured results that conform to this schema", server/tools#
/// output-schema: without one nothing is asked), and the task parts the
/// `execution.taskSupport` they are about.
fn contract_fits(d: &Discovery, part: &PartDef, plays: &str) -> bool {
    if part.kind != Kind::Tool {
        return true;
    }
    let Some(tool) = d.tools.iter().find(|t| name(t) == plays) else {
        return false;
    };
    let support = tool
        .pointer("/execution/taskSupport")
        .and_then(Value::as_str);
    // Where tasks are declared for tools/call, a tool runs as one only by
    // its taskSupport; where they are not, the task cases are about a call
    // that carries a task param all the same (it must run as a plain call).
    let tasks_declared = d
        .capabilities
        .pointer("/tasks/requests/tools/call")
        .is_some();
    match part.name {
        "structured" | "bad-output" => tool.get("outputSchema").is_some_and(Value::is_object),
        "task" | "task-fails" if tasks_declared => {
            matches!(support, Some("optional" | "required"))
        }
        "task-required" if tasks_declared => support == Some("required"),
        "task-forbidden" => matches!(support, None | Some("forbidden")),
        _ => true,
    }
}

/// The Bookshop contract's players the server lists, each where its
/// listing fits the part ([`contract_fits`]).
pub fn from_contract(d: &Discovery) -> Cast {
    let mut cast = Cast::new();
    for part in PARTS {
        let Some((plays, args)) = part.contract else {
            continue;
        };
        if !contract_listed(d, part, plays) || !contract_fits(d, part, plays) {
            continue;
        }
        let mut arguments: Value = serde_json::from_str(args).expect("the table's JSON parses");
        let extra = arguments
            .as_object_mut()
            .and_then(|o| o.remove("$extra"))
            .and_then(|e| e.as_object().cloned())
            .unwrap_or_default();
        let mut p = Player::new(plays, arguments, Found::Contract);
        p.extra.extend(extra);
        cast.insert(part.name.into(), p);
    }
    cast
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool named as the contract's is cast only where its listing fits
    /// the part: `limited_calls` without an `outputSchema` plays no
    /// structured-output part (nothing is asked of its results), and a
    /// tool without `taskSupport` plays no task part.
    #[test]
    fn a_contract_name_alone_casts_no_part_its_listing_does_not_fit() {
        let tool = |name: &str, extra: Value| {
            let mut t = json!({"name": name, "inputSchema": {"type": "object"}});
            t.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            t
        };
        let schema = json!({"outputSchema": {"type": "object"}});
        let tasks = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
        let bare = Discovery {
            tools: vec![
                tool("limited_calls", json!({})),
                tool("bad_output", json!({})),
                tool("slow", json!({})),
            ],
            capabilities: tasks.clone(),
            ..Discovery::default()
        };
        let cast = from_contract(&bare);
        assert!(!cast.contains_key("structured") && !cast.contains_key("bad-output"));
        assert!(!cast.contains_key("task") && cast.contains_key("progress"));
        // Without the tasks capability a task part is about a call with a
        // task param all the same (run as a plain call).
        let undeclared = Discovery {
            capabilities: json!({}),
            ..bare.clone()
        };
        assert!(from_contract(&undeclared).contains_key("task"));
        let fitting = Discovery {
            tools: vec![
                tool("limited_calls", schema.clone()),
                tool("bad_output", schema),
                tool("slow", json!({"execution": {"taskSupport": "optional"}})),
            ],
            capabilities: tasks,
            ..Discovery::default()
        };
        let cast = from_contract(&fitting);
        for part in ["structured", "bad-output", "task", "progress"] {
            assert!(cast.contains_key(part), "{part}: {cast:?}");
        }
    }
}
