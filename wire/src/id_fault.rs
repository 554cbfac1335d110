//! What a server did to an id it answered wrongly: the transformation (the
//! sign dropped, the number wrapped to 32 bits, rounded to a double, a
//! string read as a number or the other way round, cut short, or null), so
//! that every wrong id of one kind is one deviation whatever request carried
//! it, and an answer whose id matches nothing in flight can still be tied to
//! the one request whose id it is a transformation of.

use serde_json::Value;

/// The transformation that turns a request's id into the id it was
/// answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdFault {
    /// A negative number answered with its absolute value (an unsigned parse).
    SignDropped,
    /// A number outside 32 bits answered with its low 32 bits, or clamped to
    /// an `i32`'s range (a server that keeps ids in an `i32` or `u32`).
    Wrapped32,
    /// A number answered as the nearest double (JavaScript's numbers).
    Rounded,
    /// A number answered as a string, or a numeric string as a number.
    Retyped,
    /// A string answered cut short.
    Truncated,
    /// `null`, or no id at all.
    Null,
    /// Any other id.
    Other,
}

impl IdFault {
    /// What a report calls it.
    pub fn as_str(self) -> &'static str {
        match self {
            IdFault::SignDropped => "sign dropped",
            IdFault::Wrapped32 => "wrapped to 32 bits",
            IdFault::Rounded => "rounded to a double",
            IdFault::Retyped => "retyped",
            IdFault::Truncated => "cut short",
            IdFault::Null => "null",
            IdFault::Other => "another id",
        }
    }

    /// The transformation from `sent` to `got`; `None` when they are equal.
    pub fn of(sent: &Value, got: Option<&Value>) -> Option<IdFault> {
        let got = match got {
            None | Some(Value::Null) => return (!sent.is_null()).then_some(IdFault::Null),
            Some(g) if g == sent => return None,
            Some(g) => g,
        };
        match (sent, got) {
            (Value::Number(s), Value::Number(g)) => Some(numeric(s, g)),
            (Value::Number(s), Value::String(g)) => {
                let same = wide(s).is_some_and(|n| g.parse::<i128>().ok() == Some(n));
                same.then_some(IdFault::Retyped)
            }
            (Value::String(s), Value::Number(g)) => {
                let same = wide(g).is_some_and(|n| s.parse::<i128>().ok() == Some(n));
                same.then_some(IdFault::Retyped)
            }
            (Value::String(s), Value::String(g)) => {
                (!g.is_empty() && s.starts_with(g.as_str())).then_some(IdFault::Truncated)
            }
            _ => None,
        }
        .or(Some(IdFault::Other))
    }

    /// Whether an id `got` that names no request in flight is `sent` under
    /// a transformation servers are known for (not [`IdFault::Other`] or
    /// [`IdFault::Null`], which say nothing of whose answer it is).
    pub fn ties(sent: &Value, got: &Value) -> bool {
        !matches!(
            IdFault::of(sent, Some(got)),
            None | Some(IdFault::Other | IdFault::Null)
        )
    }
}

fn wide(n: &serde_json::Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn numeric(sent: &serde_json::Number, got: &serde_json::Number) -> IdFault {
    let (Some(s), Some(g)) = (wide(sent), wide(got)) else {
        // A fraction: a double's doing only if it is the sent id's value.
        let same = sent.as_f64().is_some() && sent.as_f64() == got.as_f64();
        return if same {
            IdFault::Rounded
        } else {
            IdFault::Other
        };
    };
    if s < 0 && g == -s {
        return IdFault::SignDropped;
    }
    let clamped = s.clamp(i128::from(i32::MIN), i128::from(i32::MAX));
    if g == i128::from(s as u32 as i32) || g == i128::from(s as u32) || g == clamped {
        return IdFault::Wrapped32;
    }
    if s.unsigned_abs() > (1 << 53) && (s as f64) == (g as f64) {
        return IdFault::Rounded;
    }
    IdFault::Other
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_usual_id_fault_is_named_by_what_it_did() {
        let of = |s: Value, g: Value| IdFault::of(&s, Some(&g));
        assert_eq!(
            of(json!(-1610612737), json!(1610612737)),
            Some(IdFault::SignDropped)
        );
        assert_eq!(
            of(json!(3221225472u64), json!(-1073741824)),
            Some(IdFault::Wrapped32)
        );
        assert_eq!(
            of(json!(9007200328482817u64), json!(1073741825)),
            Some(IdFault::Wrapped32)
        );
        assert_eq!(
            of(json!(3221225472u64), json!(2147483647)),
            Some(IdFault::Wrapped32)
        );
        assert_eq!(
            of(json!(9007200328482817u64), json!(9007200328482816u64)),
            Some(IdFault::Rounded)
        );
        assert_eq!(of(json!(7), json!("7")), Some(IdFault::Retyped));
        assert_eq!(
            of(json!("fz-7-é"), json!("fz-7-")),
            Some(IdFault::Truncated)
        );
        assert_eq!(of(json!(7), json!(null)), Some(IdFault::Null));
        assert_eq!(IdFault::of(&json!(7), None), Some(IdFault::Null));
        assert_eq!(of(json!(7), json!(8)), Some(IdFault::Other));
        // Nothing in common: a fraction, an unparseable string and a float.
        assert_eq!(of(json!(7), json!(3.5)), Some(IdFault::Other));
        assert_eq!(of(json!("abc"), json!(2.5)), Some(IdFault::Other));
        assert_eq!(of(json!(2.5), json!("x")), Some(IdFault::Other));
        assert!(!IdFault::ties(&json!(7), &json!(3.5)));
        assert_eq!(of(json!("a"), json!(1)), Some(IdFault::Other));
        assert_eq!(of(json!(7), json!(7)), None);
        assert!(IdFault::ties(&json!(-1610612737), &json!(1610612737)));
        assert!(!IdFault::ties(&json!(7), &json!(8)));
        assert!(!IdFault::ties(&json!(7), &json!(null)));
    }
}
