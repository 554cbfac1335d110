//! The server's busy share (issue: yardsticks that cannot flatter): the CPU
//! time a server's processes spent over the campaign's wall time, which
//! tells a server kept busy from one left waiting.

use serde_json::Value;

use crate::sdk_peers::python;
use crate::support::{mcperr, report, scratch, MCPERR};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A stdio wrapper in Python that holds every line for `ms` milliseconds
/// before passing it to the server it starts: a server that is fast and
/// still mostly waits, as one behind a slow client would.
fn behind_a_delay(ms: u64, server: &str) -> String {
    let script = format!(
        "import subprocess,sys,time\n\
         p=subprocess.Popen(sys.argv[1:],stdin=subprocess.PIPE)\n\
         for line in sys.stdin.buffer:\n\
         \x20time.sleep({})\n\
         \x20p.stdin.write(line);p.stdin.flush()\n\
         p.stdin.close();p.wait()\n",
        ms as f64 / 1000.0
    );
    let path = scratch("busy-delay").join("delay.py");
    std::fs::write(&path, script).unwrap();
    format!("{} {} {server}", python(), path.display())
}

/// `mcperr fuzz ARGS` with a JSON report: the busy share it states, and
/// its summary.
fn fuzz_busy(args: &[&str]) -> (Option<f64>, String) {
    let json = scratch("busy").join("r.json");
    let mut all = vec!["fuzz", "--seed", "3", "--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = mcperr(&all);
    assert!(out.code.is_some_and(|c| c < 2), "{}", out.stderr);
    let r: Value = report(&json);
    (r["stats"]["server_busy"].as_f64(), out.stdout)
}

#[test]
fn the_busy_share_tells_a_server_kept_busy_from_one_left_waiting() {
    // The Python SDK Bookshop is the slower side of a campaign: mcperr keeps
    // it busy most of the time (0.83 of its wall on an idle machine).
    let sdk = format!("{} {ROOT}/fixtures/servers/python/bookshop.py", python());
    let (busy, out) = fuzz_busy(&["--stdio", &sdk, "--requests", "1500"]);
    let busy = busy.expect("a stdio server's busy share");
    assert!(busy > 0.3, "{busy}: {out}");
    assert!(
        out.contains(&format!(
            "the server busy {:.0} % while sent to",
            busy * 100.0
        )),
        "{out}"
    );
    // The reference server behind a 5 ms wait per line answers at once yet
    // sits idle: its share is small. A share read from the wrong process,
    // or from mcperr's own CPU, could not tell the two apart.
    let waiting = behind_a_delay(5, &format!("{MCPERR} reference"));
    let (busy, out) = fuzz_busy(&["--stdio", &waiting, "--requests", "300"]);
    let busy = busy.expect("a stdio server's busy share");
    assert!(busy < 0.3, "{busy}: {out}");
    // In process there is no server process to read: no share, no claim.
    let (none, out) = fuzz_busy(&["--requests", "500"]);
    assert_eq!(none, None, "{out}");
}
