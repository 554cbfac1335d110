//! Slow is not dead, in a campaign as in a run: a request is never answered
//! (J4) only once it, or a request of its lane, waited out `--slow-ms`; a
//! campaign that ends before that lists the lane as undecided, with no
//! verdict; and the answers that come after the campaign are matched by
//! their own ids, never taken for the answers of the requests sent next.

use crate::sdk_peers::python;
use crate::support::{mcperr, report, scratch};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[test]
fn a_tool_slower_than_the_whole_campaign_is_undecided_never_hung_nor_another_requests_answer() {
    // fetch_page answers after 4 s; --seconds 4 is the whole command, so
    // each era's campaign lasts about a second: no call of it is answered
    // before the campaign ends, and none waited out --slow-ms.
    let recipes = format!("{ROOT}/fixtures/servers/python/recipes.py");
    let stdio = format!(
        "env RECIPES_SLOW_SECONDS=4 {} {recipes} --fault slow-fetch",
        python()
    );
    let dir = scratch("pace-undecided");
    let json = dir.join("r.json");
    let out = mcperr(&[
        "fuzz",
        "--stdio",
        &stdio,
        "--seed",
        "5",
        "--seconds",
        "4",
        "--timeout-ms",
        "500",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    let r = report(&json);
    let findings = r["findings"].as_array().unwrap();
    // Nothing about fetch_page's silence, and no answer judged as another's:
    // its late answers come while the findings are shrunk, one request at a
    // time, and are matched to the calls that sent them.
    for f in findings {
        assert_ne!(f["rule"], "J4", "{f}\n{}", out.stdout);
        assert_ne!(f["rule"], "J1", "{f}\n{}", out.stdout);
        assert!(
            !f["request"].to_string().contains("fetch_page"),
            "{f}\n{}",
            out.stdout
        );
    }
    assert_eq!(r["stats"]["misattributed"], 0, "{r}");
    let undecided: Vec<&str> = r["undecided"]
        .as_array()
        .map(|a| a.iter().filter_map(|u| u["lane"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        undecided.contains(&"tools/call fetch_page"),
        "{undecided:?}\n{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("undecided [") && out.stdout.contains("slow or hung is not known"),
        "{}",
        out.stdout
    );
}
