//! Judging a fuzz response with no scripted expectation: the core's
//! invariants (J1 framing and exact ids, the era's result shapes, J7 stack
//! markers, J4 an answer at all, J5 clean stdout) plus what the input's
//! [`Class`] implies, stated once in [`mcperr_cases::expect`]: invalid arguments
//! never run the body and come back as a tool error (T4), a schema-valid call
//! is never refused as unparseable, a read of a value that cannot exist is
//! never an `isError` result or empty `contents` (R1), prompt errors are
//! −32602 (P1, P2), an unknown method is −32601 (J2). Every violation is
//! graded by the one grading path ([`mcperr_model::grading`]), exactly as a case's.

pub use super::identity::{cause, digest, finding_id, id_group_key, id_target, shape};
use super::identity::{group_key, signature};
use mcperr_protocol::{codes, Era};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{invariants, Context};
use mcperr_cases::expect;
use mcperr_cases::fuzz::inputs::{Class, FuzzInput};
use mcperr_cases::profile::Profile;
use mcperr_model::grading::{Grader, Violation};
use mcperr_model::rules::{AspectId, RuleId};
use mcperr_model::verdict::Verdict;
use mcperr_wire::edges;
use mcperr_wire::exchange::{Ending, Exchange};

fn j1() -> AspectId {
    AspectId::J1Main
}

/// One thing fuzzing found: a graded violation with its request and response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A stable id (`fuzz/<rule>-<target>-<digest of the group>`): the
    /// saved case's id, and what a baseline lists.
    #[serde(default)]
    pub id: String,
    /// The era it was found in.
    #[serde(default)]
    pub era: String,
    /// The rule broken.
    pub rule: RuleId,
    /// The aspect broken (`T4.invalid-params-code`): with the rule and the
    /// kind of input, what identifies the finding.
    #[serde(default = "j1")]
    pub aspect: AspectId,
    /// `fail` or `warn` under the profile.
    pub verdict: Verdict,
    /// What is wrong, with the spec citation.
    pub message: String,
    /// The request sent (after shrinking, the minimal one).
    pub request: Value,
    /// What came back (`null` for none).
    pub response: Value,
    /// The HTTP status, over HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The cause of its example: aspect, verdict, what about the request
    /// caused it and the kind of answer (what shrinking keeps). Never built
    /// from message text.
    pub signature: String,
    /// The deviation it is an example of (aspect, verdict, method and the
    /// kind of answer, or an id style and the answer): every finding with
    /// one group is reported as one, its smallest example shown.
    #[serde(default)]
    pub group: String,
    /// How many requests hit this finding (its group's, once grouped).
    #[serde(default)]
    pub hits: u64,
    /// The distinct causes grouped here (the tool and constraint broken,
    /// the template or prompt read, the part of the request), in the order
    /// first seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    /// Every era it was seen in (`era` is its example's).
    #[serde(default)]
    pub eras: Vec<String>,
    /// Every method it was seen in.
    #[serde(default)]
    pub methods: Vec<String>,
    /// Why no case was saved for it: its request sent alone did not show
    /// it (a replay would not agree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reproduced: Option<String>,
    /// Listed in the baseline: known, does not fail the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

impl Finding {
    /// Counts `other`, a finding of the same group (or signature), as
    /// another hit: its eras, methods and causes join this one's.
    pub fn absorb(&mut self, other: &Finding) {
        self.hits += other.hits.max(1);
        for c in &other.causes {
            if !self.causes.contains(c) {
                self.causes.push(c.clone());
            }
        }
        for (list, new) in [
            (&mut self.eras, &other.eras),
            (&mut self.methods, &other.methods),
        ] {
            for x in new {
                if !list.contains(x) {
                    list.push(x.clone());
                }
            }
        }
    }
}

/// Grades violations for one run: era, profile and transport.
#[derive(Debug, Clone)]
pub struct Judge {
    /// The era under test.
    pub era: Era,
    /// The grading profile.
    pub profile: Profile,
    /// Over Streamable HTTP (some sentences bind only there).
    pub over_http: bool,
}

impl Judge {
    /// The one grading path, for this run.
    pub fn grader(&self) -> Grader {
        Grader {
            era: self.era,
            over_http: self.over_http,
            grading: self.profile.grading,
            strict: self.profile.strict,
        }
    }

    /// Every finding of one exchange. `body_ran`: whether `limited_calls`
    /// went up across the request, where measured; `output`: the tool's
    /// `outputSchema` validator, for valid calls.
    pub fn judge(
        &self,
        input: &FuzzInput,
        exchange: &Exchange,
        body_ran: Option<bool>,
        output: Option<&jsonschema::Validator>,
    ) -> Vec<Finding> {
        self.judge_with(input, exchange, body_ran, output, None, false)
    }

    /// As [`Judge::judge`]; `small_id_answered`: the same request with a
    /// small id was answered normally (the proof the RFC 8259 §6 policy needs
    /// to excuse silence or an id-null error, [`edges::big_id`]); `alive`: the
    /// request went unanswered while the server answered others (J4, a
    /// deviation, not "no answer to judge").
    pub fn judge_with(
        &self,
        input: &FuzzInput,
        exchange: &Exchange,
        body_ran: Option<bool>,
        output: Option<&jsonschema::Validator>,
        small_id_answered: Option<bool>,
        alive: bool,
    ) -> Vec<Finding> {
        let response = exchange.response();
        let lone = input.has_lone_surrogate();
        if lone && exchange.ending == Ending::Timeout {
            // A line a parser may refuse may go unanswered (over stdio the
            // spec allows silence for malformed input); the next request
            // shows whether the server lives.
            return vec![];
        }
        let unreadable = lone && edges::refused_lone_surrogate(response);
        // Copied only in that rare case: judging must stay cheap.
        let framed_copy;
        let framed = if unreadable {
            let mut copy = exchange.clone();
            copy.request["id"] = Value::Null;
            framed_copy = copy;
            &framed_copy
        } else {
            exchange
        };
        // mcperr's fuzzing connections declare no client capability (2025-11-25).
        let none_declared = serde_json::json!({});
        let ctx = Context {
            client_capabilities: Some(&none_declared),
            era: Some(self.era),
            canary: None,
            sent_raw: lone,
            sent_notification: false,
            http_rejection_expected: false,
            ..Default::default()
        };
        let mut found = invariants(framed, &ctx);
        if alive {
            found = found
                .into_iter()
                .map(Violation::unanswered_while_alive)
                .collect();
        }
        let big = edges::big_id(exchange, small_id_answered);
        if let Some(v) = big.clone() {
            let strays = crate::invariants::strays(framed, &ctx).len();
            edges::apply_big_id(&mut found, strays, v);
        }
        let refused_big_id = big.is_some()
            && edges::big_id_answer(exchange) == Some(edges::BigIdAnswer::NullIdError);
        if let (Some(r), false, false) = (response, unreadable, refused_big_id) {
            if matches!(exchange.ending, Ending::Answered(_)) {
                found.extend(self.class_rules(input, r, body_ran, output));
            }
        }
        self.findings(found, input, exchange)
    }

    /// The J4 `slow` finding of a request answered only after `took`,
    /// beyond `timeout`, while the server answered others (none where the
    /// profile gives it no verdict: the spec bounds no server's latency).
    pub fn slow(
        &self,
        input: &FuzzInput,
        exchange: &Exchange,
        took: std::time::Duration,
        timeout: std::time::Duration,
    ) -> Vec<Finding> {
        let v = Violation::new(
            AspectId::J4Slow,
            format!(
                "answered only after {:.1} s, beyond --timeout-ms {} while the server answered others: {} {} is slow, not hung",
                took.as_secs_f64(),
                timeout.as_millis(),
                input.method,
                input.target
            ),
        );
        self.findings(vec![v], input, exchange)
    }

    /// The J4 finding of a request that was answered and after which the
    /// server answered nothing more (`how`), as a run judges a case after
    /// which the server stops.
    pub fn stopped_after(&self, input: &FuzzInput, exchange: &Exchange, how: &str) -> Vec<Finding> {
        let v = Violation::new(
            AspectId::J4Main,
            format!("the server stopped answering after this request: {how}"),
        );
        self.findings(vec![v], input, exchange)
    }

    /// The graded findings of `found` on one exchange.
    fn findings(
        &self,
        found: Vec<Violation>,
        input: &FuzzInput,
        exchange: &Exchange,
    ) -> Vec<Finding> {
        let response = exchange.response();
        let status = exchange.http.as_ref().map(|a| a.status);
        let grader = self.grader();
        found
            .into_iter()
            .filter_map(|v| {
                let verdict = grader.grade(&v, false)?;
                let signature = signature(&v, verdict, input, exchange);
                let group = group_key(&v, verdict, input, exchange);
                Some(Finding {
                    id: finding_id(v.rule().as_str(), id_target(v.aspect, input), &group),
                    era: self.era.to_string(),
                    eras: vec![self.era.to_string()],
                    methods: vec![input.method.clone()],
                    causes: vec![cause(input)],
                    signature,
                    group,
                    rule: v.rule(),
                    aspect: v.aspect,
                    verdict,
                    message: grader.message(&v),
                    request: exchange.request.clone(),
                    response: response.cloned().unwrap_or(Value::Null),
                    http_status: status,
                    hits: 1,
                    baselined: false,
                    not_reproduced: None,
                })
            })
            .collect()
    }

    /// Findings for stray output seen outside any one request's answer
    /// (non-JSON lines, over-long lines, id-null or unsolicited responses).
    pub fn strays(&self, strays: Vec<mcperr_wire::exchange::Stray>) -> Vec<Finding> {
        self.strays_declared(strays, None)
    }

    /// As [`Judge::strays`], knowing whether the server declared the
    /// `logging` capability (a log message from one that did not breaks U8,
    /// as in a run).
    pub fn strays_declared(
        &self,
        strays: Vec<mcperr_wire::exchange::Stray>,
        logging_declared: Option<bool>,
    ) -> Vec<Finding> {
        let ex = Exchange {
            request: Value::Null,
            ending: Ending::NotApplicable(String::new()),
            strays,
            duration: std::time::Duration::ZERO,
            http: None,
        };
        let ctx = Context {
            era: Some(self.era),
            logging_declared,
            ..Default::default()
        };
        let grader = self.grader();
        crate::invariants::strays(&ex, &ctx)
            .into_iter()
            .filter_map(|v| {
                let verdict = grader.grade(&v, false)?;
                let signature = format!("{} {} stray", v.aspect, verdict.as_str());
                Some(Finding {
                    id: finding_id(v.rule().as_str(), "stdout", &signature),
                    era: self.era.to_string(),
                    eras: vec![self.era.to_string()],
                    methods: vec![],
                    rule: v.rule(),
                    aspect: v.aspect,
                    verdict,
                    message: grader.message(&v),
                    request: Value::Null,
                    response: Value::Null,
                    http_status: None,
                    group: signature.clone(),
                    causes: vec![],
                    signature,
                    hits: 1,
                    baselined: false,
                    not_reproduced: None,
                })
            })
            .collect()
    }

    fn class_rules(
        &self,
        input: &FuzzInput,
        r: &Value,
        body_ran: Option<bool>,
        output: Option<&jsonschema::Validator>,
    ) -> Vec<Violation> {
        let code = mcperr_wire::edges::error_code(r);
        let result = r.get("result");
        let is_error_result = result.and_then(|x| x.get("isError")) == Some(&Value::Bool(true));
        let mut out = Vec::new();
        // What a run's valid calls check of any tool result, the same here
        // (a campaign's valid calls, and every tools/call a proxied host
        // sends that is not known invalid): an error returned as a success
        // (T9), and structured content without its text mirror (T8).
        if input.method == "tools/call" && matches!(input.class, Class::ValidCall | Class::Observed)
        {
            if let Some(why) = crate::structured::tool_result_says_failed(r) {
                out.push(Violation::new(AspectId::T9Main, why));
            }
            if let Some(why) = crate::structured::also_text_of_result(r) {
                out.push(Violation::new(AspectId::T8AlsoText, why));
            }
        }
        match &input.class {
            Class::InvalidCall(what) => {
                if body_ran == Some(true) {
                    out.push(Violation::new(
                        AspectId::T4ValidateInputs,
                        format!(
                            "the tool body ran on invalid arguments ({what}): {} went up",
                            mcperr_cases::bookshop::COUNT_TOOL
                        ),
                    ));
                }
                out.extend(expect::tool_rejection(r, what));
            }
            Class::ValidCall => {
                let asked = input.target == mcperr_cases::bookshop::RAISES_REQUESTED_ERROR;
                let not_for_a_call = [
                    codes::PARSE_ERROR,
                    codes::INVALID_REQUEST,
                    codes::METHOD_NOT_FOUND,
                ];
                if let (Some(c), false) = (code.filter(|c| not_for_a_call.contains(c)), asked) {
                    out.push(Violation::new(
                        AspectId::J1FollowsJsonrpc,
                        format!("a schema-valid tools/call was answered {c} (JSON-RPC 2.0 section 5.1: -32700 is for invalid JSON, -32600 for a message that is not a Request object, -32601 for a method that does not exist)"),
                    ));
                }
                if let (Some(res), Some(schema), false) = (result, output, is_error_result) {
                    match res.get("structuredContent") {
                        None => out.push(Violation::new(
                            AspectId::T8Main,
                            "a successful call of a tool with an outputSchema has no structuredContent",
                        )),
                        Some(sc) if !schema.is_valid(sc) => out.push(Violation::new(
                            AspectId::T7Main,
                            format!("structuredContent {sc} does not fit the tool's outputSchema"),
                        )),
                        _ => {}
                    }
                }
            }
            Class::ResourceMissing => out.extend(expect::made_up_read(r)),
            Class::UnknownPrompt => out.extend(expect::prompt_error(
                AspectId::P1Main,
                r,
                "an unknown prompt name",
            )),
            Class::PromptMissingArgument => out.extend(expect::prompt_error(
                AspectId::P2Main,
                r,
                "a prompt without a required argument",
            )),
            Class::Envelope(what) if result.is_some() && !what.starts_with("_meta") => {
                let aspect = match input.method.as_str() {
                    "tools/call" => Some(AspectId::T6Main),
                    "resources/read" => Some(AspectId::R6Main),
                    _ => None,
                };
                if let Some(aspect) = aspect {
                    out.push(Violation::new(
                        aspect,
                        format!("malformed {} params ({what}) were answered with a result, not a JSON-RPC error", input.method),
                    ));
                }
            }
            Class::UnknownMethod if code != Some(codes::METHOD_NOT_FOUND) => {
                out.push(Violation::new(
                    AspectId::J2Main,
                    format!(
                        "the unknown method {} was answered {}, not -32601",
                        input.method,
                        code.map_or("with a result".into(), |c| c.to_string())
                    ),
                ))
            }
            _ => {}
        }
        out
    }
}

#[cfg(test)]
mod tests;
