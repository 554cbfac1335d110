//! A refusal is validation only if the body did not run: an invalid call
//! whose answer shows the rejected object as code turns it into text
//! (`[object Object]`, Go's `map[key:value]`) is the body running on the
//! value, T4 `validate-inputs` (a MUST), on servers that are not ours: the
//! TypeScript Recipes server with its validation off, and a plain Python
//! server answering as a Go tool would; a server that validates is clean.

use serde_json::Value;

use crate::support::{mcperr, report, scratch};

/// `lookup(title: string)`: in mode `go` its body takes any title and, for
/// an object, says what it looked for as Go's fmt prints a map; in mode
/// `validates` a title that is not a string is refused naming the field.
const LOOKUP_TOOL: &str = r#"[{"name": "lookup", "annotations": {"readOnlyHint": True},
    "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                    "required": ["title"]}}]"#;
const LOOKUP_CALL: &str = r#"        t = m["params"].get("arguments", {}).get("title")
        if isinstance(t, str):
            r = {"content": [{"type": "text", "text": "Dune by Frank Herbert"}]}
        elif mode == "validates":
            r = {"content": [{"type": "text", "text": "title: expected a string"}], "isError": True}
        elif isinstance(t, dict):
            shown = "map[" + " ".join(f"{k}:{v}" for k, v in sorted(t.items())) + "]"
            r = {"content": [{"type": "text", "text": "lookup title: no book titled " + shown}], "isError": True}
        else:
            r = {"content": [{"type": "text", "text": "lookup title: no book titled " + str(t)}], "isError": True}
        send({"jsonrpc": "2.0", "id": i, "result": r})"#;

/// The generated cases matching `cases` of `server` in `era`, under `spec`.
fn run(server: &str, era: &str, cases: &str, json: &std::path::Path) -> Vec<Value> {
    let out = mcperr(&[
        "run",
        "--stdio",
        server,
        "--era",
        era,
        "--cases",
        cases,
        "--json",
        json.to_str().unwrap(),
    ]);
    let r = report(json);
    assert_eq!(r["summary"]["error"], 0, "{}", out.stdout);
    r["cases"].as_array().unwrap().clone()
}

/// The case `id` failed on T4 (`validate-inputs`, a MUST: a failure under
/// `spec`, where T4's own SHOULD only warns), naming `marker`.
fn body_ran(cases: &[Value], id: &str, marker: &str) {
    let c = cases
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {cases:?}"));
    let m = c["message"].as_str().unwrap();
    assert_eq!(
        (&c["rule"], &c["verdict"]),
        (&"T4".into(), &"fail".into()),
        "{c}"
    );
    assert_eq!(c["aspect"], "T4.validate-inputs", "{c}");
    assert!(m.contains(marker) && m.contains("the tool body ran"), "{m}");
}

#[test]
fn a_refusal_that_prints_the_rejected_object_as_code_does_is_the_body_running() {
    let dir = scratch("body-ran");
    // JavaScript: the Recipes server on the TypeScript SDK, validation off:
    // fetch_page's body refuses "Cannot fetch [object Object]: …", an
    // isError result `spec` took for a validation until now.
    let recipes = format!(
        "node {} --fault no-validation",
        crate::fixtures::typescript()
    );
    let cases = run(
        &recipes,
        "2026-07-28",
        "generated/tools/fetch_page/type-*",
        &dir.join("ts.json"),
    );
    body_ran(
        &cases,
        "generated/tools/fetch_page/type-url",
        "[object Object]",
    );
    // Go, as a plain Python server answers like one.
    let server = crate::support::python_stdio_server("body-ran-server", LOOKUP_TOOL, LOOKUP_CALL);
    let cases = run(
        &format!("{server} go"),
        "2025-11-25",
        "generated/tools/lookup/*",
        &dir.join("go.json"),
    );
    body_ran(&cases, "generated/tools/lookup/type-title", "map[mcperr:");
    // The same server validating first: every invalid call passes, none is
    // taken for the body.
    let cases = run(
        &format!("{server} validates"),
        "2025-11-25",
        "generated/tools/lookup/*",
        &dir.join("validates.json"),
    );
    for c in cases
        .iter()
        .filter(|c| c["id"] != "generated/tools/lookup/valid-call")
    {
        assert_eq!(c["verdict"], "pass", "{c}");
    }
}
