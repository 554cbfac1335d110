//! The fuzz inputs: requests drawn from what a server publishes (its tools'
//! `inputSchema`s, its resource templates and static resources, its prompts'
//! arguments), envelope mutations of `tools/call`, `resources/read` and
//! `prompts/get`, unknown methods, and ids of every legal kind. Each input
//! carries its [`Class`]: what the request is, so the judge knows what a
//! correct answer looks like without a scripted expectation.

use mcperr_protocol::Era;
use serde_json::{json, Value};

use mcperr_wire::text::LONE_SURROGATE;

/// What kind of request an input is, for the judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Schema-valid arguments to a read-only tool.
    ValidCall,
    /// Arguments that break exactly one constraint (named) of the tool's `inputSchema`.
    InvalidCall(String),
    /// A template read with a value that cannot exist.
    ResourceMissing,
    /// Other reads: near misses, escapes, empty variables, static resources.
    ResourceOther,
    /// A prompt name the server does not list.
    UnknownPrompt,
    /// A prompt without one of its required arguments.
    PromptMissingArgument,
    /// Other prompt requests: extra or mistyped arguments, hostile values.
    PromptOther,
    /// Params that break the request's own schema (what is broken).
    Envelope(String),
    /// A method the protocol does not define.
    UnknownMethod,
    /// A request a host sent (`mcperr proxy`) whose kind the traffic does
    /// not show: only the invariants judge its answer.
    Observed,
}

/// How a request's id is written (JSON-RPC allows strings and numbers; MCP
/// forbids null). Each style draws unique ids from the connection's counter.
///
/// The numeric styles live in disjoint bands, chosen so that the id faults
/// servers have (the sign dropped, the number wrapped to 32 bits, rounded to
/// the nearest double, a string read as a number or a number written as a
/// string) never turn the id of one request into the id of another that may
/// be in flight, and turn no two ids in flight into the same one: a wrong id
/// then matches nothing, and leads back to the one request it came from,
/// judged there as the id fault it is, never as another request's answer.
/// (Faults that merge many ids, clamping to an `i32` or cutting a string
/// short, still match nothing in flight; their answers are sent again alone.)
/// With `n` the request number modulo [`ID_BAND`] (2^28):
///
/// | style | ids | as a server with that fault answers them |
/// |---|---|---|
/// | `Counter` | `n`, in `[0, 2^28)` | itself (a string `"n"` when retyped: no `Text` id is all digits) |
/// | `Negative` | `-(3·2^29 + n)` | sign dropped: `[3·2^29, 3·2^29 + 2^28)`, sent by no style |
/// | `Above31` | `3·2^30 + n` | wrapped to 32 bits: `[-2^30, -2^30 + 2^28)`, sent by no style |
/// | `Above53` | `2^53 + 2^30 + 1 + 4n` (≡ 1 mod 4) | rounded to a double: itself − 1; wrapped: `[2^30, 2^31)` |
/// | `Text` | `"fz-<n>-é"` | read as a number: none |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdStyle {
    /// 0, 1, 2, 3, … (below 2^28).
    Counter,
    /// A string, with a non-ASCII character.
    Text,
    /// A negative integer of -100 or less (`-(3·2^29 + n)`, within an `i32`).
    Negative,
    /// An integer above 2^31 (beyond a 32-bit int, within a 32-bit unsigned one).
    Above31,
    /// An integer above 2^53, one more than a multiple of 4 (beyond what a
    /// double holds exactly: it rounds to the multiple of 4 below it).
    Above53,
}

/// The size of each numeric id style's band: request numbers are taken
/// modulo it (a connection would need 2^28 requests to wrap, and the few
/// thousand in flight at most are never that far apart).
pub const ID_BAND: u64 = 1 << 28;

impl IdStyle {
    /// The id for the connection's `n`th request in this style.
    pub fn id(self, n: u64) -> Value {
        let n = n % ID_BAND;
        match self {
            IdStyle::Counter => json!(n),
            IdStyle::Text => json!(format!("fz-{n}-é")),
            IdStyle::Negative => json!(-(((3u64 << 29) + n) as i64)),
            IdStyle::Above31 => json!((3u64 << 30) + n),
            IdStyle::Above53 => json!((1u64 << 53) + (1u64 << 30) + 1 + 4 * n),
        }
    }
}

/// One fuzz request, before its id and era envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct FuzzInput {
    /// The method.
    pub method: String,
    /// The params, without the 2026-07-28 envelope.
    pub params: Value,
    /// Whether the era's envelope is added (not when the input breaks it).
    pub envelope: bool,
    /// How the id is written.
    pub id_style: IdStyle,
    /// What kind of request it is.
    pub class: Class,
    /// The tool, template, prompt or method aimed at (for findings).
    pub target: String,
}

/// The method of the input stray output is blamed on: it answers no request.
pub const STRAY_OUTPUT: &str = "(stdout)";

impl FuzzInput {
    /// The input a finding on stray output (a line answering no request)
    /// is recorded under, in fuzzing and in the proxy alike.
    pub fn stray_output() -> FuzzInput {
        FuzzInput {
            method: STRAY_OUTPUT.into(),
            params: Value::Null,
            envelope: false,
            id_style: IdStyle::Counter,
            class: Class::UnknownMethod,
            target: "stdout".into(),
        }
    }

    /// Whether this is [`FuzzInput::stray_output`]: no request to save or replay.
    pub fn is_stray_output(&self) -> bool {
        self.method == STRAY_OUTPUT
    }

    /// The JSON-RPC request for era `era`, with the `n`th id of its style.
    pub fn message(&self, era: Era, n: u64) -> Value {
        self.message_with_id(era, self.id_style.id(n))
    }

    /// The JSON-RPC request with a given id.
    pub fn message_with_id(&self, era: Era, id: Value) -> Value {
        let params = crate::plan::params_for(era, Some(self.params.clone()), self.envelope);
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": self.method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        msg
    }

    /// Whether the request carries a lone surrogate: a JSON text a strict
    /// parser may refuse (RFC 8259 §8.2), so an id-null error may answer it.
    pub fn has_lone_surrogate(&self) -> bool {
        fn any(v: &Value) -> bool {
            match v {
                Value::String(s) => s.contains(LONE_SURROGATE),
                Value::Array(a) => a.iter().any(any),
                Value::Object(o) => o.values().any(any),
                _ => false,
            }
        }
        any(&self.params)
    }
}

/// Parses one line a server wrote (see [`mcperr_wire::text::decode`]).
pub use mcperr_wire::text::decode as parse_line;

/// How every run's canary starts (then 16 hex digits): in a fuzz campaign,
/// where it is planted in valid calls' arguments, an answer's text that
/// carries it is an echo of the request that planted it. (`mcperr run`
/// plants the same shape as a crash's secret, which must never come back.)
pub const CANARY_PREFIX: &str = "mcperrcanary";

/// What the values mcperr makes up for a template's variable start with (a
/// fuzz input's [`Class::ResourceMissing`] read, a generated not-found read):
/// no server names an item so, so a read of a URI holding one is a read of
/// something missing, wherever it is judged (the oracle's row checks).
pub const MADE_UP_VALUES: [&str; 2] = ["mcperr-nx-", "mcperr-no-such-"];

/// Whether `uri` holds a value mcperr made up ([`MADE_UP_VALUES`]).
pub fn names_made_up_value(uri: &str) -> bool {
    MADE_UP_VALUES.iter().any(|v| uri.contains(v))
}

/// The canary a campaign with `seed` plants: the same for the same seed, so
/// a campaign repeats exactly.
pub fn canary_of_seed(seed: u64) -> String {
    format!(
        "{CANARY_PREFIX}{:016x}",
        seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x6d63_7065_7272
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_a_lone_surrogate_escape_still_parses() {
        let v = parse_line(br#"{"t":"a\ud800b","u":"\\ud800"}"#).unwrap();
        assert_eq!(v["t"], "a\u{fffd}b");
        assert_eq!(v["u"], "\\ud800");
        assert!(parse_line(b"{not json").is_err());
        assert!(parse_line("{\"x\":\"\\ud800\",\"y\":\"\\\\u\u{e9}\"}".as_bytes()).is_ok());
    }

    #[test]
    fn ids_of_each_style_are_unique_per_request_and_of_their_kind() {
        assert_eq!(IdStyle::Above31.id(0), json!(3221225472u64));
        assert!(IdStyle::Above31.id(7).as_u64().unwrap() > i32::MAX as u64);
        assert!(IdStyle::Above31.id(7).as_u64().unwrap() <= u32::MAX as u64);
        assert!(IdStyle::Above53.id(3).as_u64().unwrap() > 1 << 53);
        assert!(IdStyle::Negative.id(0).as_i64().unwrap() <= -100);
        assert!(IdStyle::Negative.id(ID_BAND - 1).as_i64().unwrap() > i32::MIN as i64);
        assert_ne!(IdStyle::Text.id(1), IdStyle::Text.id(2));
    }

    /// The id faults servers have, each as the id such a server answers with.
    fn faults(id: &Value) -> Vec<(&'static str, Value)> {
        let mut out = vec![("null", Value::Null)];
        if let Some(s) = id.as_str() {
            if let Ok(n) = s.parse::<i64>() {
                out.push(("string read as a number", json!(n)));
            }
            for (cut, _) in s.char_indices().skip(1) {
                out.push(("string cut short", json!(&s[..cut])));
            }
            return out;
        }
        let wide: i128 = id
            .as_i64()
            .map(i128::from)
            .or(id.as_u64().map(i128::from))
            .unwrap();
        out.push(("number written as a string", json!(wide.to_string())));
        out.push(("sign dropped", json!(wide.unsigned_abs() as u64)));
        out.push(("wrapped to 32 bits", json!(wide as u32 as i32)));
        out.push(("wrapped to 32 bits unsigned", json!(wide as u32)));
        out.push((
            "clamped to an i32",
            json!(wide.clamp(i32::MIN as i128, i32::MAX as i128) as i64),
        ));
        let rounded = wide as f64;
        if rounded < 0.0 {
            out.push(("rounded to a double", json!(rounded as i64)));
        } else {
            out.push(("rounded to a double", json!(rounded as u64)));
        }
        out
    }

    #[test]
    fn each_tying_id_fault_leads_back_to_one_request_in_flight() {
        let styles = [
            IdStyle::Counter,
            IdStyle::Negative,
            IdStyle::Above31,
            IdStyle::Above53,
        ];
        for base in [0u64, 100_000, ID_BAND - 3000] {
            let sent: Vec<Value> = (base..base + 2048)
                .flat_map(|m| styles.map(|s| s.id(m)))
                .collect();
            for fault in [
                "sign dropped",
                "wrapped to 32 bits",
                "rounded to a double",
                "number written as a string",
            ] {
                let mut seen = std::collections::HashMap::new();
                for id in &sent {
                    for (how, got) in faults(id) {
                        if how != fault || got == *id {
                            continue;
                        }
                        if let Some(other) = seen.insert(got.to_string(), id.clone()) {
                            assert_eq!(&other, id, "{fault}: {other} and {id} both give {got}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn no_usual_id_fault_turns_one_request_id_into_another_in_flight() {
        let styles = [
            IdStyle::Counter,
            IdStyle::Text,
            IdStyle::Negative,
            IdStyle::Above31,
            IdStyle::Above53,
        ];
        // Requests near the start, in the middle and at the band's edge,
        // with every request within a window of 4096 in flight beside them.
        for base in [
            0u64,
            1,
            99,
            100_000,
            ID_BAND - 5000,
            ID_BAND,
            3 * ID_BAND + 17,
        ] {
            let in_flight: std::collections::HashSet<String> = (base.saturating_sub(4096)
                ..base + 4096)
                .flat_map(|m| styles.map(|s| s.id(m).to_string()))
                .collect();
            for n in [base, base + 1, base + 4095] {
                for style in styles {
                    let sent = style.id(n);
                    for (how, got) in faults(&sent) {
                        if got == sent {
                            continue;
                        }
                        assert!(
                            !in_flight.contains(&got.to_string()),
                            "{style:?} id {sent} with its {how} ({got}) is another request's id"
                        );
                    }
                }
            }
        }
    }
}
