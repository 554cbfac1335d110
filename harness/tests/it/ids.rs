//! Ids: a server's way with the ids mcperr sends is judged once, as the id
//! fault it is, and never as another request's answer. mcperr's id styles
//! sit in bands that no usual id fault maps into each other
//! (mcperr_cases::fuzz::IdStyle), so a wrong id lands on no request in
//! flight; the answer is tied to the request whose id it transforms, and
//! every such answer of one transformation is one finding.

use serde_json::Value;

use crate::support::{mcperr, report, scratch, MCPERR};

/// Fuzzes the reference server with `fault` for `seconds` (both eras).
fn fuzz_fault(fault: &str, seconds: &str) -> (Option<i32>, Value, String) {
    let dir = scratch(&format!("ids-{fault}"));
    let json = dir.join("r.json");
    let server = format!("{MCPERR} reference --fault {fault}");
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &server,
        "--seconds",
        seconds,
        "--seed",
        "5",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    (out.code, report(&json), out.stdout)
}

/// How an answered id follows from the sent one under a fault.
type Follows = fn(&Value, &Value) -> bool;

#[test]
fn a_server_that_drops_an_ids_sign_or_wraps_it_to_32_bits_is_one_id_finding_and_no_other() {
    // (fault, the transformation, how the answered id follows from the sent one)
    let cases: [(&str, &str, Follows); 2] = [
        ("id-sign-dropped", "sign dropped", |sent, got| {
            sent.as_i64()
                .is_some_and(|s| s <= -100 && got.as_i64() == Some(-s))
        }),
        ("wrong-id-above-2-31", "wrapped to 32 bits", |sent, got| {
            sent.as_u64().is_some_and(|s| {
                s > i32::MAX as u64 && got.as_i64() == Some(i64::from(s as u32 as i32))
            })
        }),
    ];
    for (fault, how, follows) in cases {
        let (code, r, stdout) = fuzz_fault(fault, "4");
        assert_eq!(code, Some(1), "{fault}: {stdout}");
        let findings = r["findings"].as_array().unwrap();
        // One deviation, whatever method, params or era carried it.
        assert_eq!(findings.len(), 1, "{fault}: {findings:#?}");
        let f = &findings[0];
        assert_eq!(f["rule"], "J1", "{fault}: {f}");
        assert_eq!(f["verdict"], "fail", "{fault}: {f}");
        assert_eq!(f["group"], format!("ids {how} fail"), "{fault}: {f}");
        assert_eq!(f["eras"].as_array().unwrap().len(), 2, "{fault}: {f}");
        assert!(f["hits"].as_u64().unwrap() > 10, "{fault}: {f}");
        // The example's answer is its own request's, with the id transformed.
        assert!(
            follows(&f["request"]["id"], &f["response"]["id"]),
            "{fault}: {f}"
        );
        assert_eq!(r["stats"]["misattributed"], 0, "{fault}: {r}");
    }
}

/// The verdict of each case of a `mcperr run` JSON report, by case id.
fn verdicts(r: &Value) -> std::collections::BTreeMap<String, (String, String)> {
    r["runs"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![r.clone()])
        .iter()
        .flat_map(|run| run["cases"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("id"), (s("rule"), s("verdict")))
        })
        .collect()
}

#[test]
fn saved_cases_that_get_no_answer_replay_to_their_own_verdicts_in_any_order() {
    // A server that never answers an id beyond a double nor an array
    // `params` (as TypeScript servers do), and answers everything else.
    let dir = scratch("ids-replay-order");
    let server = crate::fuzz::proxied(&dir, "drop");
    let saved = dir.join("saved");
    let json = dir.join("f.json");
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &server,
        "--era",
        "2025-11-25",
        "--seconds",
        "4",
        "--seed",
        "5",
        "--timeout-ms",
        "1000",
        // The array's silence is decided (J4) once it waited out --slow-ms.
        "--slow-ms",
        "1500",
        "--save",
        saved.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let campaign: std::collections::BTreeMap<String, (String, String)> = report(&json)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.get("not_reproduced").is_none() && f["request"].is_object())
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("id"), (s("rule"), s("verdict")))
        })
        .collect();
    // Both kinds of silence are saved: the big id's warning, the array's J4.
    let rules: Vec<&str> = campaign.values().map(|(r, _)| r.as_str()).collect();
    assert!(
        rules.contains(&"J1") && rules.contains(&"J4"),
        "{campaign:?}"
    );
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&saved)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // Beside them, the big-id case again with a small id: the same method,
    // answered, so it must be sent and judged whatever came before it.
    let big = files
        .iter()
        .find(|f| f.to_string_lossy().contains("j1-ids"))
        .expect("a saved big-id case");
    let text = std::fs::read_to_string(big).unwrap();
    let small: String = text
        .lines()
        .map(|l| match l {
            l if l.starts_with("id = \"fuzz/") => "id = \"fuzz/small-id-control\"".to_string(),
            l if l.starts_with("id = ") => "id = 7".to_string(),
            l => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let control = dir.join("small-id-control.toml");
    std::fs::write(&control, small).unwrap();
    let mut files = files;
    files.push(control);
    // `mcperr run` on the saved cases in `cases`, at --slow-ms `slow_ms`:
    // its output and its verdicts.
    let replay_saved = |cases: &std::path::Path, slow_ms: &str, name: &str| {
        let run_json = dir.join(format!("{name}.json"));
        let out = mcperr(&[
            "run",
            "--stdio",
            &server,
            "--era",
            "2025-11-25",
            "--cases",
            "fuzz/*",
            "--cases-dir",
            cases.to_str().unwrap(),
            "--timeout-ms",
            "1000",
            "--slow-ms",
            slow_ms,
            "--json",
            run_json.to_str().unwrap(),
        ]);
        assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
        let replay = verdicts(&report(&run_json));
        (out, replay)
    };
    // Each order: the files named so that one or the other comes first.
    for (order, first) in [("forward", 0), ("backward", files.len() - 1)] {
        let cases = dir.join(order);
        std::fs::create_dir_all(&cases).unwrap();
        for (i, f) in files.iter().enumerate() {
            let rank = if i == first { 0 } else { i + 1 };
            let name = f.file_name().unwrap().to_string_lossy();
            std::fs::copy(f, cases.join(format!("{rank:03}-{name}"))).unwrap();
        }
        let (out, replay) = replay_saved(&cases, "1500", order);
        for (id, want) in &campaign {
            assert_eq!(replay.get(id), Some(want), "{order}: {id}\n{}", out.stdout);
        }
        assert!(!out.stdout.contains("not sent"), "{order}: {}", out.stdout);
        let control = &replay["fuzz/small-id-control"];
        assert_eq!(control.1, "pass", "{order}: {control:?}\n{}", out.stdout);
    }
    // A saved unanswered request waits no --slow-ms on replay: the
    // campaign waited for it already. With --slow-ms 30 s the replay of
    // every saved case still costs about one --timeout-ms each.
    let j4 = files
        .iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("(fail under J4)")
        })
        .expect("a saved J4 case");
    assert!(std::fs::read_to_string(j4)
        .unwrap()
        .contains("\nslow_ms = 0\n"));
    let began = std::time::Instant::now();
    let (out, replay) = replay_saved(&saved, "30000", "patient");
    assert!(
        began.elapsed() < std::time::Duration::from_secs(20),
        "{}",
        out.stdout
    );
    for (id, want) in campaign.iter().filter(|(_, (rule, _))| rule == "J4") {
        assert_eq!(replay.get(id), Some(want), "{id}\n{}", out.stdout);
    }
}

#[test]
fn a_server_that_echoes_big_ids_exactly_gets_no_big_id_warning_for_an_array_params_null_id() {
    // The Python SDK over HTTP answers an array `params` with an id-null
    // error whatever its id, and echoes every big id exactly. The big-id
    // policy excuses an id-null error only when the same request with a
    // small id was answered with its own id: an id-null error to that one
    // is no proof, so no J1 big-id warning is claimed for the id; the
    // id-null errors are J1 error-id findings of the array params alone.
    let recipes = format!(
        "{}/../fixtures/servers/python/recipes.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let py = crate::sdk_peers::python();
    let server = crate::http::HttpServer::start(&py, &[&recipes, "--http", "127.0.0.1:0"]);
    let dir = scratch("ids-big-echoed");
    let json = dir.join("r.json");
    let out = mcperr(&[
        "fuzz",
        "--http",
        &server.url,
        "--seed",
        "5",
        "--seconds",
        "4",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    let r = report(&json);
    let findings = r["findings"].as_array().unwrap();
    let big: Vec<&Value> = findings
        .iter()
        .filter(|f| f["aspect"] == "J1.big-id")
        .collect();
    assert!(big.is_empty(), "{big:#?}");
    // The array params' id-null errors are still found, with small ids.
    assert!(
        findings
            .iter()
            .any(|f| f["aspect"] == "J1.error-id" && f["request"]["params"].is_array()),
        "{}",
        out.stdout
    );
    drop(server);
}
