//! Shrinking: one-step simplifications of a fuzz input, simplest first. The
//! driver keeps a candidate when the server still shows the same finding
//! (same signature), and starts over from it, until no candidate does.
//! Simpler means: a plain counter id, fewer keys and items, shorter
//! strings, smaller numbers.

use serde_json::{json, Value};

use super::inputs::{FuzzInput, IdStyle};

/// The one-step simplifications of `input`, simplest first.
pub fn candidates(input: &FuzzInput) -> Vec<FuzzInput> {
    let mut out = Vec::new();
    if input.id_style != IdStyle::Counter {
        out.push(FuzzInput {
            id_style: IdStyle::Counter,
            ..input.clone()
        });
    }
    for params in smaller(&input.params, 0) {
        out.push(FuzzInput {
            params,
            ..input.clone()
        });
    }
    out
}

/// Keys that say what the request is aimed at: removing them changes the
/// request's kind, not its size.
fn keeps(key: &str, depth: usize) -> bool {
    depth == 0 && matches!(key, "name" | "uri" | "_meta" | "arguments")
}

fn smaller(v: &Value, depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    match v {
        Value::Object(o) => {
            for k in o.keys().filter(|k| !keeps(k, depth)) {
                let mut x = o.clone();
                x.remove(k);
                out.push(Value::Object(x));
            }
            for (k, child) in o {
                // What the request aims at stays as it is; its arguments shrink.
                if keeps(k, depth) && k != "arguments" {
                    continue;
                }
                for c in smaller(child, depth + 1) {
                    let mut x = o.clone();
                    x.insert(k.clone(), c);
                    out.push(Value::Object(x));
                }
            }
        }
        Value::Array(a) => {
            if a.len() > 1 {
                out.push(Value::Array(a[..a.len() / 2].to_vec()));
            }
            for i in 0..a.len() {
                let mut x = a.clone();
                x.remove(i);
                out.push(Value::Array(x));
            }
            for (i, child) in a.iter().enumerate() {
                for c in smaller(child, depth + 1) {
                    let mut x = a.clone();
                    x[i] = c;
                    out.push(Value::Array(x));
                }
            }
        }
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len();
            if n > 0 {
                out.push(json!(""));
            }
            if n > 1 {
                out.push(json!(chars[..n / 2].iter().collect::<String>()));
                out.push(json!(chars[n / 2..].iter().collect::<String>()));
                // Longer cuts too, so a length threshold is neared in a few
                // steps, not one character at a time.
                for keep in [n * 3 / 4, n * 7 / 8] {
                    if keep > n / 2 && keep < n - 1 {
                        out.push(json!(chars[..keep].iter().collect::<String>()));
                    }
                }
                out.push(json!(chars[1..].iter().collect::<String>()));
                out.push(json!(chars[..n - 1].iter().collect::<String>()));
            }
            // A plain letter for a special character, one at a time.
            if let Some(i) = chars
                .iter()
                .position(|c| !c.is_ascii_alphanumeric() && *c != 'a')
            {
                let mut x = chars.clone();
                x[i] = 'a';
                out.push(json!(x.into_iter().collect::<String>()));
            }
        }
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if i.unsigned_abs() <= 256 {
                    // Small numbers: every smaller one of the same sign, smallest
                    // first, so the first that keeps the finding is the minimum
                    // (a deviation at multiples of 7 above 50 shrinks to 56).
                    out.extend((0..i.abs()).map(|c| json!(c * i.signum())));
                } else {
                    for c in [0, i / 2, i - i.signum()] {
                        out.push(json!(c));
                    }
                }
            } else if let Some(f) = n.as_f64() {
                if f.fract() != 0.0 {
                    out.push(json!(f.trunc() as i64));
                }
            }
        }
        _ => {}
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::inputs::Class;

    fn shrink_while(mut input: FuzzInput, keeps_finding: impl Fn(&FuzzInput) -> bool) -> FuzzInput {
        'outer: loop {
            for c in candidates(&input) {
                if keeps_finding(&c) {
                    input = c;
                    continue 'outer;
                }
            }
            return input;
        }
    }

    fn tool_call(arguments: Value, id_style: IdStyle) -> FuzzInput {
        FuzzInput {
            method: "tools/call".into(),
            params: json!({"name": "t", "arguments": arguments}),
            envelope: true,
            id_style,
            class: Class::InvalidCall("x".into()),
            target: "t".into(),
        }
    }

    #[test]
    fn a_multiple_of_seven_above_fifty_shrinks_to_56() {
        let big = tool_call(json!({"limit": 147, "note": "zz"}), IdStyle::Above53);
        let out = shrink_while(big, |i| {
            i.params["arguments"]["limit"]
                .as_i64()
                .is_some_and(|l| l > 50 && l % 7 == 0)
        });
        assert_eq!(out.params, json!({"name": "t", "arguments": {"limit": 56}}));
        assert_eq!(out.id_style, IdStyle::Counter);
    }

    #[test]
    fn a_non_ascii_title_shrinks_to_one_character() {
        let big = tool_call(json!({"title": "ab日本x\u{2028}yz"}), IdStyle::Counter);
        let out = shrink_while(big, |i| {
            i.params["arguments"]["title"]
                .as_str()
                .is_some_and(|t| !t.is_ascii())
        });
        let t = out.params["arguments"]["title"].as_str().unwrap();
        assert_eq!(t.chars().count(), 1, "{t:?}");
    }
}
