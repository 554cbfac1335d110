//! The reference server's pure handler, driven by mcperr-cases' request generator
//! with libFuzzer's bytes as its choices (the same generator `mcperr fuzz`
//! drives with a seed), in both eras, plus raw lines and crash inputs with a
//! planted secret. Every answer must be judged clean under the `model`
//! profile (J1 framing and exact ids, the era's result shapes, no stack
//! trace, class rules) and must never carry the planted secret.

#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcperr_cases::fuzz::Generator;
use mcperr_cases::profile::Profile;
use mcperr_fuzz::{answer, discovery, handshake, CANARY, ERAS};
use mcperr_oracle::findings::Judge;
use mcperr_reference::stdio::StdioEdge;
use mcperr_reference::Handler;
use mcperr_wire::exchange::{Ending, Exchange};
use mcperr_wire::text::line;
use serde_json::json;

struct Setup {
    handler: Handler,
    generators: Vec<Generator>,
    judges: Vec<Judge>,
    /// A connection per era, already past its handshake: each run starts
    /// from a copy, so runs do not depend on each other.
    opened: Vec<StdioEdge>,
}

thread_local! {
    static SETUP: Setup = {
        let handler = Handler::new(None);
        let found = discovery(&handler);
        let profile = Profile::load("model").expect("the built-in model profile");
        let mut legacy = StdioEdge::new();
        handshake(&handler, &mut legacy);
        Setup {
            opened: vec![legacy, StdioEdge::new()],
            generators: ERAS.iter().map(|&e| Generator::new(&found, &found.tools, e)).collect(),
            judges: ERAS.iter().map(|&era| Judge { era, profile: profile.clone(), over_http: false }).collect(),
            handler,
        }
    };
}

fuzz_target!(|data: &[u8]| {
    SETUP.with(|s| {
        let mut u = Unstructured::new(data);
        let which = usize::from(u.arbitrary::<bool>().unwrap_or(false));
        let era = ERAS[which];
        let mut edge = s.opened[which].clone();
        match u.int_in_range(0..=31u8).unwrap_or(2) {
            // A raw line: anything at all, never a panic.
            0 => {
                let raw: &[u8] = u.arbitrary().unwrap_or_default();
                edge.feed(&s.handler, raw);
            }
            // A crash input with a planted secret: it must not come back.
            1 => {
                let params = json!({"name": "crash", "arguments": {"secret": CANARY}});
                let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": mcperr_cases::plan::params_for(era, Some(params), true)});
                let text = answer(&s.handler, &mut edge, msg.to_string().as_bytes())
                    .map(|r| r.to_string())
                    .unwrap_or_default();
                assert!(
                    !text.contains(CANARY),
                    "the crash's secret came back: {text}"
                );
            }
            // Core's generator, with libFuzzer's bytes as its choices.
            _ => {
                let input = s.generators[which].next(&mut u);
                let msg = input.message(era, 1);
                let Some(response) = answer(&s.handler, &mut edge, &line(&msg)) else {
                    // Silence is allowed only for a line a parser may refuse.
                    assert!(input.has_lone_surrogate(), "no answer to {msg}");
                    return;
                };
                let exchange = Exchange {
                    request: msg.clone(),
                    ending: Ending::Answered(response),
                    strays: vec![],
                    duration: std::time::Duration::ZERO,
                    http: None,
                };
                let output = s.generators[which].output_validator(&input.target);
                let found = s.judges[which].judge(&input, &exchange, None, output);
                assert!(
                    found.is_empty(),
                    "{msg} -> {:?}",
                    found.iter().map(|f| &f.message).collect::<Vec<_>>()
                );
            }
        }
    });
});
