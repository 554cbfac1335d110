//! The oracle on any response: the invariants and the case judgement of
//! every built-in case, under every built-in profile, in both eras, over
//! stdio and HTTP (any status). Never a panic, and always a verdict. (The
//! fuzz judge on top of the invariants is exercised by `dispatch`.)

#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcperr_cases::case::{builtin_cases, Case};
use mcperr_cases::plan::CasePlan;
use mcperr_cases::profile::Profile;
use mcperr_fuzz::ERAS;
use mcperr_oracle::{invariants, judge, Context, Evidence};
use mcperr_wire::exchange::{Ending, Exchange, HttpAnswer};
use serde_json::Value;

struct Setup {
    cases: Vec<Case>,
    profiles: Vec<Profile>,
}

thread_local! {
    static SETUP: Setup = Setup {
        cases: builtin_cases().expect("the built-in cases load"),
        profiles: ["spec", "model", "python-sdk"].iter().map(|p| Profile::load(p).expect("built-in profile")).collect(),
    };
}

fuzz_target!(|data: &[u8]| {
    SETUP.with(|s| {
        let mut u = Unstructured::new(data);
        let case = u.choose(&s.cases).expect("cases exist");
        let profile = u.choose(&s.profiles).expect("profiles exist");
        let era = *u.choose(&ERAS).expect("eras");
        let http = u.arbitrary::<bool>().unwrap_or(false);
        let status = u.int_in_range(100..=599u16).unwrap_or(200);
        let rest = u.take_rest();
        let response = serde_json::from_slice::<Value>(rest)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
        let plan = CasePlan::new(
            case,
            profile,
            era,
            "canary",
            &[("tool".into(), "get_author".into())],
            http,
        );
        let exchange = Exchange {
            request: plan
                .request
                .message(Some(&mcperr_protocol::Id::Num(1.into()))),
            ending: Ending::Answered(response.clone()),
            strays: vec![],
            duration: std::time::Duration::ZERO,
            http: http.then(|| HttpAnswer {
                status,
                messages: vec![response],
                ..Default::default()
            }),
        };
        let ctx = Context {
            era: Some(era),
            ..Default::default()
        };
        let _ = invariants(&exchange, &ctx);
        // Judged without a panic; the deciding rule is a RuleId, one of the
        // table's by its type.
        let _ = judge(&plan, &exchange, &Evidence::default());
    });
});
