//! What the generator plants in argument values: the run's canary at the
//! front of a string the schema still takes (a crash or a valid call must
//! not echo it in an error), and a lone surrogate (RFC 8259 §8.2).

use serde_json::Value;

use super::source::Source;
use mcperr_wire::text::LONE_SURROGATE;

/// Puts `canary` at the front of one string argument of `args`, where the
/// schema still takes it (else leaves `args` as they were).
pub(super) fn plant_canary(
    args: &mut Value,
    canary: &str,
    validator: &jsonschema::Validator,
    src: &mut dyn Source,
) {
    /// The JSON pointer of every string in `v`.
    fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::String(_) => out.push(at),
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().take(8) {
                    leaves(x, format!("{at}/{i}"), out);
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let k = k.replace('~', "~0").replace('/', "~1");
                    leaves(x, format!("{at}/{k}"), out);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    leaves(args, String::new(), &mut found);
    if found.is_empty() {
        return;
    }
    // A few strings are tried: a format, a pattern or a short maxLength
    // refuses the canary, a free string takes it.
    for _ in 0..4 {
        let at = &found[src.index(found.len())];
        let Some(Value::String(s)) = args.pointer_mut(at) else {
            return;
        };
        let before = std::mem::replace(s, format!("{canary}{s}"));
        if validator.is_valid(args) {
            return;
        }
        if let Some(v) = args.pointer_mut(at) {
            *v = Value::String(before);
        }
    }
}

/// Puts a lone surrogate in the first string value of `v`, if any.
pub(super) fn plant_surrogate(v: &mut Value) -> bool {
    match v {
        Value::String(s) => {
            s.push_str(LONE_SURROGATE);
            true
        }
        Value::Array(a) => a.iter_mut().any(plant_surrogate),
        Value::Object(o) => o.values_mut().any(plant_surrogate),
        _ => false,
    }
}
