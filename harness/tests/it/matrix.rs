//! `mcperr matrix`: several servers judged side by side, one JSON cell per
//! case per column, the HTML page written, and bad input refused.

use serde_json::Value;

use crate::http::HttpServer;
use crate::support::{mcperr, report, scratch, MCPERR};

fn cell<'a>(m: &'a Value, server: &str, transport: &str, case: &str) -> &'a Value {
    m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["server"] == server && c["transport"] == transport && c["case"] == case)
        .unwrap_or_else(|| panic!("no cell {server} {transport} {case}"))
}

#[test]
fn the_matrix_puts_a_faulty_server_beside_the_reference_and_lists_every_cell() {
    let dir = scratch("matrix");
    let (json, html) = (dir.join("m.json"), dir.join("m.html"));
    let faulty = format!("stdio:{MCPERR} reference --fault crash-leaks-text");
    let open = HttpServer::reference(&["--fault", "http-origin-unchecked"]);
    let out = mcperr(&[
        "matrix",
        "--server",
        "ref=reference",
        "--server",
        &format!("leaky={faulty}"),
        "--server",
        &format!("open=http:{}", open.url),
        "--era",
        "2026-07-28",
        "--profile",
        "model",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let m = report(&json);
    let columns: Vec<(String, String)> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["server"].as_str().unwrap().to_string(),
                c["transport"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let names = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        columns,
        names(&[
            ("ref", "stdio"),
            ("ref", "http"),
            ("leaky", "stdio"),
            ("open", "http")
        ])
    );
    let rows = m["rows"].as_array().unwrap().len();
    assert_eq!(
        m["cells"].as_array().unwrap().len(),
        rows * 4,
        "every cell is listed"
    );

    // The leak fails in the faulty column only, with its request and response.
    let leaky = cell(&m, "leaky", "stdio", "tools/crash-hides-text");
    assert_eq!(leaky["verdict"], "fail");
    assert_eq!(leaky["result"]["request"]["params"]["name"], "crash");
    assert!(leaky["result"]["response"]["result"].is_object());
    assert_eq!(
        cell(&m, "ref", "stdio", "tools/crash-hides-text")["verdict"],
        "pass"
    );
    // An HTTP-only case did not run over stdio: a cell without a verdict.
    let http_only = cell(&m, "ref", "http", "http/bad-origin-403");
    assert_eq!(http_only["verdict"], "pass");
    assert!(cell(&m, "leaky", "stdio", "http/bad-origin-403")["verdict"].is_null());
    // The server reached at a URL fails the Origin check the reference passes.
    assert_eq!(
        cell(&m, "open", "http", "http/bad-origin-403")["verdict"],
        "fail"
    );
    assert_eq!(
        cell(&m, "open", "http", "tools/crash-hides-text")["verdict"],
        "pass"
    );

    // The terminal names the case on which the columns differ.
    assert!(
        out.stdout.contains("tools/crash-hides-text"),
        "{}",
        out.stdout
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("class=\"cell v-").count(), rows * 4);
    assert!(
        page.contains("<th colspan=\"2\" class=\"server\""),
        "ref spans two columns"
    );
}

#[test]
fn a_server_that_cannot_start_is_a_setup_error_and_the_reports_are_still_written() {
    let dir = scratch("matrix-setup");
    let json = dir.join("m.json");
    let out = mcperr(&[
        "matrix",
        "--server",
        "ref=reference",
        "--server",
        "gone=stdio:/nonexistent/mcp-server",
        "--era",
        "2026-07-28",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("gone=stdio:/nonexistent/mcp-server"),
        "{}",
        out.stderr
    );
    let m = report(&json);
    let setup = cell(&m, "gone", "stdio", "setup/connect");
    assert_eq!(setup["verdict"], "error");
}

#[test]
fn bad_server_arguments_are_usage_errors() {
    for (args, says) in [
        (vec!["matrix"], "--server"),
        (vec!["matrix", "--server", "noequals"], "no '='"),
        (
            vec!["matrix", "--server", "=reference"],
            "the name is empty",
        ),
        (vec!["matrix", "--server", "x=ftp://host"], "unknown target"),
        (
            vec![
                "matrix",
                "--server",
                "a=reference",
                "--server",
                "a=reference",
            ],
            "given twice",
        ),
        (
            vec!["matrix", "--server", "a=stdio:x", "--server", "a=stdio:y"],
            "given twice over the same transport",
        ),
        (
            vec!["matrix", "--server", "a=reference", "--era", "1999"],
            "--era",
        ),
    ] {
        let out = mcperr(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        if args.len() > 1 {
            // mcperr's own refusals are one line (clap's usage text is its own).
            assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
            assert!(out.stderr.starts_with("mcperr: error: "), "{}", out.stderr);
        }
    }
}

#[test]
fn a_server_given_a_baseline_is_gated_and_one_without_is_only_compared() {
    let dir = scratch("matrix-gate");
    let leaky = format!("leaky=stdio:{MCPERR} reference --fault crash-leaks-text");
    let base = |name: &str, entries: &[&str]| {
        let path = dir.join(name);
        let list: Vec<String> = entries.iter().map(|e| format!("{e:?}")).collect();
        std::fs::write(&path, format!("expected = [{}]\n", list.join(", "))).unwrap();
        path.display().to_string()
    };
    let run = |baselines: &[String]| {
        let mut args = vec![
            "matrix",
            "--server",
            "ref=reference",
            "--server",
            &leaky,
            "--era",
            "2026-07-28",
            "--profile",
            "model",
            "--cases",
            "*/crash-*",
            "--cases",
            "tools/tool-error-is-result",
        ];
        for b in baselines {
            args.extend(["--baseline", b.as_str()]);
        }
        mcperr(&args)
    };
    let both = ["tools/crash-hides-text", "jsonrpc/crash-text-nowhere"];

    // Without a baseline nothing is gated: the leak is shown, exit 0.
    let out = run(&[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("tools/crash-hides-text"),
        "{}",
        out.stdout
    );

    // Gated, with both leaks known (and the reference on an empty baseline).
    let known = format!("leaky={}", base("all.toml", &both));
    let clean = format!("ref={}", base("none.toml", &[]));
    let out = run(&[known.clone(), clean.clone()]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);

    // One leak not in the baseline fails the gate, naming it.
    let one = format!("leaky={}", base("one.toml", &both[..1]));
    let out = run(&[one]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "leaky stdio 2026-07-28: jsonrpc/crash-text-nowhere fails and is not in its baseline"
        ),
        "{}",
        out.stdout
    );

    // An entry that fails nowhere is stale.
    let mut more = both.to_vec();
    more.push("tools/tool-error-is-result");
    let stale = format!("leaky={}", base("stale.toml", &more));
    let out = run(&[stale]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("tools/tool-error-is-result fails in none of its columns (stale)"),
        "{}",
        out.stdout
    );

    // A baseline for a server that is not there is a usage error.
    let out = run(&[format!("nobody={}", base("x.toml", &[]))]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("no --server is named \"nobody\""),
        "{}",
        out.stderr
    );
}

#[test]
fn a_name_given_over_stdio_and_over_http_is_one_server_with_both_transports() {
    let dir = scratch("matrix-both");
    let json = dir.join("m.json");
    let http = HttpServer::reference(&[]);
    let out = mcperr(&[
        "matrix",
        "--server",
        &format!("shop=stdio:{MCPERR} reference"),
        "--server",
        &format!("shop=http:{}", http.url),
        "--era",
        "2025-11-25",
        "--cases",
        "tools/unknown-tool",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let m = report(&json);
    let columns: Vec<(&str, &str)> = m["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["server"].as_str().unwrap(),
                c["transport"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(columns, [("shop", "stdio"), ("shop", "http")]);
}
