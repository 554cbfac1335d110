//! One deviation, one finding: the findings of a campaign (or of a proxied
//! session) folded by their group ([`Finding::group`]), so that a server that
//! answers every invalid call, or every request with an id beyond a double,
//! the same wrong way gives one finding that counts its inputs, not one per
//! tool × constraint × id style × era. Each group keeps its smallest example
//! (the shortest request, after shrinking), and lists the causes it folded.

use std::collections::HashMap;

use super::judge::Finding;
use mcperr_cases::fuzz::FuzzInput;

/// A finding with whatever a caller keeps beside it (its input, whether
/// bodies were counted): what [`group`] folds.
pub trait Member {
    /// The finding.
    fn finding(&self) -> &Finding;
    /// The finding, to fold others into.
    fn finding_mut(&mut self) -> &mut Finding;
}

impl Member for (Finding, FuzzInput) {
    fn finding(&self) -> &Finding {
        &self.0
    }
    fn finding_mut(&mut self) -> &mut Finding {
        &mut self.0
    }
}

/// How big an example is: the request as sent, serialized. A group shows
/// its smallest.
fn size(f: &Finding) -> usize {
    f.request.to_string().len()
}

/// Whether `a` makes a better example than `b`: a worse verdict (a group of
/// one id style holds every rule its answers broke, and shows the worst),
/// then a smaller request.
fn better(a: &Finding, b: &Finding) -> bool {
    (std::cmp::Reverse(a.verdict.weight()), size(a))
        < (std::cmp::Reverse(b.verdict.weight()), size(b))
}

/// Folds `members` by group, in their order of first appearance: the
/// worst and then smallest example of each group stands for it (the first
/// of equals), with the hits, eras, methods and causes of all.
pub fn group<T: Member>(members: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for m in members {
        let key = m.finding().group.clone();
        match at.get(&key) {
            Some(&i) => {
                if better(m.finding(), out[i].finding()) {
                    let old = std::mem::replace(&mut out[i], m);
                    let kept = out[i].finding_mut();
                    // The example is the new one; the id stays the group's.
                    kept.absorb(old.finding());
                } else {
                    out[i].finding_mut().absorb(m.finding());
                }
            }
            None => {
                at.insert(key, out.len());
                out.push(m);
            }
        }
    }
    out
}

/// Causes a report line names; the JSON report has them all.
const SHOWN_CAUSES: usize = 8;

/// The line a report prints under a grouped finding: how many more inputs
/// gave the same answer, and the causes they had; `None` for a single one.
pub fn more_inputs(f: &Finding) -> Option<String> {
    let more = f.hits.saturating_sub(1);
    if more == 0 {
        return None;
    }
    let s = if more == 1 { "" } else { "s" };
    let mut line = format!("{more} more input{s} gave the same answer");
    if f.causes.len() > 1 {
        let shown: Vec<&str> = f
            .causes
            .iter()
            .take(SHOWN_CAUSES)
            .map(String::as_str)
            .collect();
        line.push_str(&format!(" (causes: {}", shown.join("; ")));
        if f.causes.len() > SHOWN_CAUSES {
            line.push_str(&format!("; and {} more", f.causes.len() - SHOWN_CAUSES));
        }
        line.push(')');
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcperr_cases::fuzz::inputs::{Class, IdStyle};
    use mcperr_model::rules::AspectId;
    use mcperr_model::verdict::Verdict;
    use serde_json::json;

    fn member(group: &str, cause: &str, request: serde_json::Value) -> (Finding, FuzzInput) {
        let f = Finding {
            id: format!("fuzz/{group}"),
            era: "2025-11-25".into(),
            rule: mcperr_model::rules::RuleId::T4,
            aspect: AspectId::T4Main,
            verdict: Verdict::Fail,
            message: String::new(),
            request,
            response: json!(null),
            http_status: None,
            signature: cause.into(),
            group: group.into(),
            hits: 1,
            causes: vec![cause.into()],
            eras: vec!["2025-11-25".into()],
            methods: vec!["tools/call".into()],
            baselined: false,
            not_reproduced: None,
        };
        let input = FuzzInput {
            method: "tools/call".into(),
            params: json!({}),
            envelope: true,
            id_style: IdStyle::Counter,
            class: Class::ValidCall,
            target: "t".into(),
        };
        (f, input)
    }

    #[test]
    fn one_group_is_one_finding_with_its_smallest_example_and_every_cause() {
        let folded = group(vec![
            member("a", "tool x", json!({"long": "xxxxxxxxxxxxxxxx"})),
            member("b", "tool y", json!({})),
            member("a", "tool z", json!({"s": 1})),
            member("a", "tool x", json!({"longer": "xxxxxxxxxxxxxxxxxxxxxxx"})),
        ]);
        assert_eq!(folded.len(), 2);
        let a = &folded[0].0;
        assert_eq!(a.group, "a");
        assert_eq!(a.request, json!({"s": 1}), "the smallest example");
        assert_eq!(a.hits, 3);
        assert_eq!(a.causes, ["tool z", "tool x"]);
        assert_eq!(
            more_inputs(a).unwrap(),
            "2 more inputs gave the same answer (causes: tool z; tool x)"
        );
        assert_eq!(more_inputs(&folded[1].0), None);
    }
}
