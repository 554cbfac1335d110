//! Structural subset matching of a JSON response against a case's pattern.
//!
//! A pattern is JSON (written as TOML in case files). Objects match when every
//! listed key matches (numeric keys index into arrays, so TOML's
//! `result.content.0.text` works); arrays match element by element with the
//! same length; scalars match by JSON equality, so `7` never matches `"7"` or
//! `7.0`. Strings starting with `$` are matchers:
//!
//! | matcher | matches |
//! |---|---|
//! | `$absent` / `$present` | the key is missing / there |
//! | `$string` `$integer` `$number` `$bool` `$object` `$array` `$null` | that JSON type |
//! | `$nonempty` | a non-empty string, array or object |
//! | `$any` | anything, including absence |
//! | `$contains:TEXT` / `$prefix:TEXT` | a string containing / starting with TEXT |
//! | `$word:TEXT` | a string containing TEXT as a whole word (`limit`, not `limited`) |
//! | `$$TEXT` | the literal string `$TEXT` |
//!
//! A table `{ "$exact" = VALUE }` matches only JSON equal to VALUE, with no
//! extra keys anywhere: for what the model says is forwarded verbatim. A
//! table `{ "$unordered" = [ … ] }` matches an array holding exactly the
//! listed values (JSON equality, no matchers) in any order, each as often
//! as listed: for a set the spec names, which a server may list in
//! another order.

use serde_json::Value;

/// Where and how a response differs from a pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Dotted path of the first difference (`error.code`).
    pub path: String,
    /// What the pattern wanted there.
    pub expected: String,
    /// What was there (`absent` when missing).
    pub actual: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "(response)"
        } else {
            &self.path
        };
        write!(f, "{path}: expected {}, got {}", self.expected, self.actual)
    }
}

/// What was found, short: reports print the whole response once, so a
/// long value is named by its start, not repeated.
fn show(v: Option<&Value>) -> String {
    const SHORT: usize = 100;
    match v {
        None => "absent".to_string(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > SHORT {
                let cut = s.char_indices().nth(SHORT).map_or(s.len(), |(i, _)| i);
                format!("{}… (see the response)", &s[..cut])
            } else {
                s
            }
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Matches `actual` (None = absent) against `pattern`; the first mismatch.
pub fn matches(pattern: &Value, actual: Option<&Value>) -> Result<(), Mismatch> {
    match mismatches(pattern, actual).into_iter().next() {
        None => Ok(()),
        Some(m) => Err(m),
    }
}

/// Every place where `actual` differs from `pattern`, in pattern order.
pub fn mismatches(pattern: &Value, actual: Option<&Value>) -> Vec<Mismatch> {
    let mut out = Vec::new();
    match_at(pattern, actual, "", &mut out);
    out
}

fn match_at(pattern: &Value, actual: Option<&Value>, path: &str, out: &mut Vec<Mismatch>) {
    let mismatch = |expected: String| Mismatch {
        path: path.to_string(),
        expected,
        actual: show(actual),
    };
    match pattern {
        Value::String(s) if s.starts_with('$') && !s.starts_with("$$") => {
            let ok = match (s.as_str(), actual) {
                ("$any", _) => true,
                ("$absent", a) => a.is_none(),
                ("$present", a) => a.is_some(),
                ("$string", Some(Value::String(_))) => true,
                ("$integer", Some(Value::Number(n))) => n.is_i64() || n.is_u64(),
                ("$number", Some(Value::Number(_))) => true,
                ("$bool", Some(Value::Bool(_))) => true,
                ("$object", Some(Value::Object(_))) => true,
                ("$array", Some(Value::Array(_))) => true,
                ("$null", Some(Value::Null)) => true,
                ("$nonempty", Some(Value::String(x))) => !x.is_empty(),
                ("$nonempty", Some(Value::Array(x))) => !x.is_empty(),
                ("$nonempty", Some(Value::Object(x))) => !x.is_empty(),
                (m, Some(Value::String(x))) if m.starts_with("$contains:") => {
                    x.contains(&m["$contains:".len()..])
                }
                (m, Some(Value::String(x))) if m.starts_with("$prefix:") => {
                    x.starts_with(&m["$prefix:".len()..])
                }
                (m, Some(Value::String(x))) if m.starts_with("$word:") => {
                    contains_word(x, &m["$word:".len()..])
                }
                _ => false,
            };
            if !ok {
                out.push(mismatch(s[1..].replacen(':', " ", 1)))
            }
        }
        Value::String(s) if s.starts_with("$$") => {
            let literal = Value::String(s[1..].to_string());
            if actual != Some(&literal) {
                out.push(mismatch(literal.to_string()))
            }
        }
        Value::Object(fields) if fields.len() == 1 && fields.contains_key("$exact") => {
            if actual != fields.get("$exact") {
                out.push(mismatch(format!("exactly {}", show(fields.get("$exact")))))
            }
        }
        Value::Object(fields) if fields.len() == 1 && fields.contains_key("$unordered") => {
            if let Some(why) = unordered(&fields["$unordered"], actual) {
                out.push(mismatch(why))
            }
        }
        Value::Object(fields) => {
            let Some(actual) = actual else {
                return out.push(mismatch("an object".into()));
            };
            for (key, sub) in fields {
                let child = match actual {
                    Value::Object(o) => o.get(key),
                    Value::Array(a) => match key.parse::<usize>() {
                        Ok(i) => a.get(i),
                        Err(_) => return out.push(mismatch(format!("an object with {key:?}"))),
                    },
                    _ => return out.push(mismatch("an object".into())),
                };
                match_at(sub, child, &join(path, key), out);
            }
        }
        Value::Array(items) => {
            let Some(Value::Array(actual_items)) = actual else {
                return out.push(mismatch(format!("an array of {}", items.len())));
            };
            if actual_items.len() != items.len() {
                return out.push(mismatch(format!(
                    "{} element(s) {}",
                    items.len(),
                    show(Some(pattern))
                )));
            }
            for (i, (p, a)) in items.iter().zip(actual_items).enumerate() {
                match_at(p, Some(a), &join(path, &i.to_string()), out);
            }
        }
        scalar => {
            if actual != Some(scalar) {
                out.push(mismatch(scalar.to_string()))
            }
        }
    }
}

/// Why `actual` is not an array holding exactly `pattern`'s values in
/// some order (each once, as often as listed), or `None` when it is. The
/// values are compared as JSON, not as patterns: a captured value that
/// holds a `$` string is itself, not a matcher.
fn unordered(pattern: &Value, actual: Option<&Value>) -> Option<String> {
    let Value::Array(items) = pattern else {
        return Some(format!(
            "an array to match in any order, but the pattern is {pattern}"
        ));
    };
    let Some(Value::Array(actual_items)) = actual else {
        return Some(format!("an array of {} in any order", items.len()));
    };
    let mut used = vec![false; actual_items.len()];
    for p in items {
        match (0..actual_items.len()).find(|&i| !used[i] && actual_items[i] == *p) {
            Some(i) => used[i] = true,
            None => return Some(format!("an element {} among them", show(Some(p)))),
        }
    }
    (actual_items.len() != items.len()).then(|| {
        format!(
            "{} element(s) in any order, not {}",
            items.len(),
            actual_items.len()
        )
    })
}

/// Whether `word` occurs in `text` with no identifier character on either side.
fn contains_word(text: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word).any(|(i, _)| {
        !ident(text[..i].chars().next_back()) && !ident(text[i + word.len()..].chars().next())
    })
}

/// Replaces every `{{name}}` in every string of `value` (keys included).
pub fn substitute(value: &Value, vars: &[(&str, &str)]) -> Value {
    let sub = |s: &str| {
        if !s.contains("{{") {
            return s.to_string();
        }
        let mut out = s.to_string();
        for (k, v) in vars {
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        out
    };
    match value {
        Value::String(s) => Value::String(sub(s)),
        Value::Array(a) => Value::Array(a.iter().map(|v| substitute(v, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (sub(k), substitute(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Replaces the captured values `vars` in every string of `value`: a
/// string that is only `{{name}}` becomes the value itself (a number stays
/// a number), a string or number elsewhere in a string is written as text.
pub fn substitute_values(value: &Value, vars: &[(String, Value)]) -> Value {
    match value {
        // Most strings hold no placeholder: no formatting per variable.
        Value::String(s) if !s.contains("{{") => value.clone(),
        Value::String(s) => {
            let whole = s.strip_prefix("{{").and_then(|r| r.strip_suffix("}}"));
            if let Some((_, v)) = vars.iter().find(|(k, _)| whole == Some(k.as_str())) {
                return v.clone();
            }
            let mut out = s.clone();
            for (k, v) in vars.iter().filter(|(k, _)| s.contains(k.as_str())) {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                out = out.replace(&format!("{{{{{k}}}}}"), &text);
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| substitute_values(v, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let key = substitute_values(&Value::String(k.clone()), vars);
                    let key = key.as_str().map_or_else(|| key.to_string(), str::to_string);
                    (key, substitute_values(v, vars))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `value` with every object that has a `$merge` member replaced by that
/// member's object with the other members laid over it: a case writes
/// `arguments = { "$merge" = "{{part.NAME.arguments}}", key = 1 }` for a
/// part's arguments with one of them set. A `$merge` that is no object
/// (its placeholder unfilled) is dropped.
pub fn resolve_merges(value: Value) -> Value {
    match value {
        Value::Array(a) => Value::Array(a.into_iter().map(resolve_merges).collect()),
        Value::Object(mut o) => {
            let base = o.remove("$merge");
            let mut out = match base {
                Some(Value::Object(b)) => b,
                _ => serde_json::Map::new(),
            };
            for (k, v) in o {
                out.insert(k, resolve_merges(v));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// The value at a dotted `path` (`result.task.taskId`; numbers index arrays).
pub fn at_path<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, key| match v {
        Value::Array(a) => a.get(key.parse::<usize>().ok()?),
        _ => v.get(key),
    })
}

/// Deep-merges `overlay` into `base` (objects merge, everything else replaces).
pub fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_merge_lays_the_case_members_over_the_part_arguments() {
        let vars = vec![(
            "part.p.arguments".to_string(),
            serde_json::json!({"branch": "main", "day": 1}),
        )];
        let case = serde_json::json!({"arguments": {"$merge": "{{part.p.arguments}}", "day": 3}});
        let out = super::resolve_merges(super::substitute_values(&case, &vars));
        assert_eq!(
            out,
            serde_json::json!({"arguments": {"branch": "main", "day": 3}})
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn subset_and_types() {
        let r = json!({"id": 7, "result": {"isError": true, "content": [{"type": "text", "text": "Error x"}]}});
        assert!(matches(
            &json!({"result": {"isError": true, "structuredContent": "$absent"}}),
            Some(&r)
        )
        .is_ok());
        assert!(matches(
            &json!({"result": {"content": {"0": {"text": "$prefix:Error"}}}}),
            Some(&r)
        )
        .is_ok());
        assert!(
            matches(&json!({"id": "7"}), Some(&r)).is_err(),
            "id type matters"
        );
        assert!(matches(&json!({"id": 7.0}), Some(&r)).is_err());
        let m = matches(&json!({"result": {"content": []}}), Some(&r)).unwrap_err();
        assert_eq!(m.path, "result.content");
        assert!(matches(&json!({"error": "$absent"}), Some(&r)).is_ok());
        assert!(matches(&json!({"x": "$$absent"}), Some(&json!({"x": "$absent"}))).is_ok());
        let word = json!({"t": "$word:limit"});
        assert!(matches(&word, Some(&json!({"t": "limit: 999 is too big"}))).is_ok());
        assert!(matches(
            &word,
            Some(&json!({"t": "error for limitedArguments\nlimit\n  Input"}))
        )
        .is_ok());
        assert!(matches(
            &word,
            Some(&json!({"t": "Error executing tool limited: rejected"}))
        )
        .is_err());
        let exact = json!({"error": {"$exact": {"code": 1, "message": "m"}}});
        assert!(matches(&exact, Some(&json!({"error": {"code": 1, "message": "m"}}))).is_ok());
        assert!(matches(
            &exact,
            Some(&json!({"error": {"code": 1, "message": "m", "data": null}}))
        )
        .is_err());
    }

    #[test]
    fn an_unordered_array_holds_exactly_its_values_in_any_order() {
        let set = json!({"tools": {"$unordered": [{"name": "a"}, {"name": "$string"}]}});
        let listed = |names: &[&str]| {
            let tools: Vec<_> = names.iter().map(|n| json!({"name": n})).collect();
            json!({"tools": tools})
        };
        assert!(matches(&set, Some(&listed(&["$string", "a"]))).is_ok());
        assert!(matches(&set, Some(&listed(&["a", "$string"]))).is_ok());
        // A `$` string is a value here, not a matcher.
        let m = matches(&set, Some(&listed(&["a", "b"]))).unwrap_err();
        assert_eq!(m.path, "tools");
        assert!(m.expected.contains(r#"{"name":"$string"}"#), "{m}");
        // Extra keys are a different value.
        let extra = json!({"tools": [{"name": "a"}, {"name": "$string", "x": 1}]});
        assert!(matches(&set, Some(&extra)).is_err());
        assert!(matches(&set, Some(&listed(&["a", "a"]))).is_err());
        assert!(matches(&set, Some(&listed(&["a"]))).is_err());
        let m = matches(&set, Some(&listed(&["a", "$string", "c"]))).unwrap_err();
        assert_eq!(m.expected, "2 element(s) in any order, not 3");
        assert!(matches(&set, Some(&json!({"tools": "a, b"}))).is_err());
    }

    #[test]
    fn every_mismatch_is_reported() {
        let r = json!({"error": {"code": -32603, "message": "boom"}});
        let all = mismatches(
            &json!({"error": {"code": -32602, "message": "$prefix:Unknown", "data": "$present"}}),
            Some(&r),
        );
        let paths: Vec<&str> = all.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths, ["error.code", "error.message", "error.data"]);
    }

    #[test]
    fn substitution_and_merge() {
        let vars = [
            ("task".to_string(), json!(7)),
            ("id".to_string(), json!("t-1")),
        ];
        let v = substitute_values(&json!({"a": "{{task}}", "b": "x{{id}}/{{task}}"}), &vars);
        assert_eq!(v, json!({"a": 7, "b": "xt-1/7"}));
        let answer = json!({"result": {"task": {"taskId": "t-1"}, "list": [1, 2]}});
        assert_eq!(at_path(&answer, "result.task.taskId"), Some(&json!("t-1")));
        assert_eq!(at_path(&answer, "result.list.1"), Some(&json!(2)));
        assert_eq!(at_path(&answer, "result.nothing"), None);
        let v = substitute(&json!({"a": "x{{canary}}y"}), &[("canary", "C")]);
        assert_eq!(v, json!({"a": "xCy"}));
        let mut b = json!({"result": {"isError": true}});
        merge(&mut b, &json!({"result": {"content": [1]}}));
        assert_eq!(b, json!({"result": {"isError": true, "content": [1]}}));
    }
}
