//! Pagination of the list methods (server/utilities/pagination): opaque
//! cursors, stable (the same cursor always gives the same page), and -32602
//! for one this server did not issue.
//!
//! `resources/templates/list` comes in pages of two and `prompts/list` in
//! pages of one, so that a client sees cursors; `tools/list` and
//! `resources/list` fit in one page and issue none. A cursor names its
//! method and offset (hex-encoded, so a client is not tempted to build
//! one): one from another method, another offset or no cursor at all is
//! refused. Imports `faults`.

use std::sync::atomic::{AtomicUsize, Ordering};

use mcperr_protocol::{codes, ErrorObject};
use serde_json::Value;

use crate::faults::Fault;

/// The page size of `method`'s list.
fn page_size(method: &str) -> usize {
    match method {
        "resources/templates/list" => 2,
        "prompts/list" => 1,
        _ => usize::MAX,
    }
}

/// The list requests answered so far (the `cursor-unstable` fault's drift).
#[derive(Default)]
pub struct Pager {
    served: AtomicUsize,
}

impl Pager {
    /// The page of `items` that `cursor` names, and the cursor of the next
    /// page, if any.
    pub fn page(
        &self,
        method: &str,
        items: Vec<Value>,
        cursor: Option<&Value>,
        fault: Option<Fault>,
    ) -> Result<(Vec<Value>, Option<String>), ErrorObject> {
        let served = self.served.fetch_add(1, Ordering::SeqCst);
        let size = page_size(method);
        let start = match cursor.filter(|c| !c.is_null()) {
            None => 0,
            // Under cursor-ignored, any cursor is the first page.
            Some(_) if fault == Some(Fault::CursorIgnored) => 0,
            Some(c) => match c
                .as_str()
                .and_then(|c| offset(method, c, items.len(), size))
            {
                Some(at) => at,
                None => {
                    return Err(ErrorObject::new(
                        codes::INVALID_PARAMS,
                        "Invalid params: unknown cursor",
                    ))
                }
            },
        };
        // Under cursor-unstable, a cursor's page drifts with every list
        // request answered: the same cursor gives other items next time.
        let start = match (fault, cursor.is_some()) {
            (Some(Fault::CursorUnstable), true) => (start + served) % items.len().max(1),
            _ => start,
        };
        let end = start.saturating_add(size).min(items.len());
        let next = (end < items.len()).then(|| cursor_for(method, end));
        Ok((items[start..end].to_vec(), next))
    }
}

fn cursor_for(method: &str, at: usize) -> String {
    format!("{method}#{at}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The offset a cursor of this server names for `method`, if it is one.
fn offset(method: &str, cursor: &str, len: usize, size: usize) -> Option<usize> {
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(cursor.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    let text = String::from_utf8(bytes).ok()?;
    let (m, at) = text.rsplit_once('#')?;
    let at: usize = at.parse().ok()?;
    (m == method && at > 0 && at < len && at.is_multiple_of(size)).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn items() -> Vec<Value> {
        (0..5).map(|i| json!(i)).collect()
    }

    #[test]
    fn pages_follow_their_cursors_the_same_every_time_and_foreign_cursors_are_refused() {
        let p = Pager::default();
        let m = "resources/templates/list";
        let (first, next) = p.page(m, items(), None, None).unwrap();
        assert_eq!(first, [json!(0), json!(1)]);
        let next = json!(next.unwrap());
        let (second, _) = p.page(m, items(), Some(&next), None).unwrap();
        let (again, _) = p.page(m, items(), Some(&next), None).unwrap();
        assert_eq!(
            (second.clone(), again),
            ([json!(2), json!(3)].to_vec(), second)
        );
        assert!(p.page("prompts/list", items(), Some(&next), None).is_err());
        assert!(p
            .page(m, items(), Some(&json!("mcperr-never-issued")), None)
            .is_err());
        let (one, none) = p.page("tools/list", items(), None, None).unwrap();
        assert_eq!((one.len(), none), (5, None));
    }
}
