//! Case files: one scripted check of one rule, loaded from TOML.
//!
//! The format (fixtures/cases/README.md has the full vocabulary):
//! `id`, `rule`, `spec`, `title`, `needs`, `eras`, `checks`, optional `[[send]]`
//! steps before the judged `[request]`, the passing shape `[expect]`,
//! `[[also_pass]]` and `[[warn]]` alternatives, and `[profile.NAME]` overrides.

use std::collections::BTreeMap;
use std::str::FromStr;

use mcperr_protocol::Era;
use serde::Deserialize;
use serde_json::Value;

mod check;
mod need;
mod sections;

pub use check::Check;
pub use need::Need;
pub use sections::{Alternative, HttpSpec, Override, RequestSpec, SendStep};

/// A case as written in a file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Stable id (`tools/crash-hides-text`); reports and baselines name it.
    pub id: String,
    /// The rule it proves: an id of the rule table ([`mcperr_model::rules`]);
    /// an unknown id does not load.
    pub rule: mcperr_model::rules::RuleId,
    /// The aspect of its rule the case's `[expect]` proves (default: the
    /// rule's central sentence); its level and sentence per era come from
    /// the rule table.
    #[serde(default)]
    pub aspect: Option<String>,
    /// A note for readers of the file; never quoted in a verdict (the table's
    /// sentence is).
    #[serde(default)]
    pub spec: String,
    /// One line saying what it checks.
    #[serde(default)]
    pub title: String,
    /// What it needs (`part:NAME`, `tool:*`, `capability:NAME`…; a user's
    /// own case may name `tool:NAME`, `template:URI-TEMPLATE`, `prompt:NAME`).
    #[serde(default)]
    pub needs: Vec<String>,
    /// Eras it applies to (default: both).
    #[serde(default)]
    pub eras: Vec<String>,
    /// Named checks (see [`Check`]).
    #[serde(default)]
    pub checks: Vec<String>,
    /// Only over this transport: `stdio` or `http` (default: both; an `[http]` table implies `http`).
    #[serde(default)]
    pub transport: Option<String>,
    /// HTTP shaping and expected status (HTTP-only cases).
    #[serde(default)]
    pub http: Option<HttpSpec>,
    /// Add the modern `_meta` envelope to requests (default true).
    #[serde(default = "yes")]
    pub envelope: bool,
    /// Whether the judged request goes on the run's connection, after its
    /// handshake (default true). `false` opens a connection of its own with
    /// no handshake (a fresh process over stdio, no session over HTTP), so
    /// that the lifecycle cases can judge the answer to `initialize` itself.
    #[serde(default = "yes")]
    pub handshake: bool,
    /// Over stdio, the server's own requests that the case's `initialize`
    /// invited (elicitation, sampling, roots) are answered only once the
    /// judged request has its answer, not as they arrive: the judged
    /// request sees the server still waiting for that input (a task in
    /// `input_required`). Default false: a willing client answers at once.
    #[serde(default)]
    pub hold_asks: bool,
    /// How long this case waits for a late answer once its request timed
    /// out, in milliseconds, at most `--slow-ms` (0: none). A saved fuzz
    /// finding of an unanswered request sets 0: its replay costs one
    /// `--timeout-ms`, not a `--slow-ms` wait each time.
    #[serde(default)]
    pub slow_ms: Option<u64>,
    /// Steps before the judged request.
    #[serde(default)]
    pub send: Vec<SendStep>,
    /// The judged request.
    pub request: RequestSpec,
    /// The passing shape.
    #[serde(default)]
    pub expect: Value,
    /// Further shapes, each graded by its own aspect of the case's rule
    /// (`[aspects.data-uri]` holds what only the `data-uri` aspect asks).
    #[serde(default)]
    pub aspects: BTreeMap<String, Value>,
    /// Other passing shapes.
    #[serde(default)]
    pub also_pass: Vec<Alternative>,
    /// Shapes that are a warning.
    #[serde(default)]
    pub warn: Vec<Alternative>,
    /// Per-profile overrides, by profile name or `NAME@ERA`.
    #[serde(default)]
    pub profile: BTreeMap<String, Override>,
    /// The highest verdict a deviation gets under any profile: `warn` where
    /// what the case checks is a known ambiguity (a server's 406, say, when
    /// the MUST is on the client). Say why in a comment.
    #[serde(default)]
    pub at_most: Option<mcperr_model::rules::GradeOverride>,
    /// Cases saved by `mcperr fuzz`: the aspect of the finding it replays
    /// (`T4.invalid-params-code`). When the answer still breaks it, that
    /// aspect decides the verdict, so a replay grades the finding as the
    /// campaign did even where the same answer broke a worse rule too (that
    /// one is its own finding, and is listed).
    #[serde(default)]
    pub replays: Option<String>,
    /// The tool's `outputSchema`, for generated valid calls (`structured-output`).
    #[serde(skip)]
    pub output_schema: Option<Value>,
    /// Generated valid calls only: the call must be accepted to pass, and
    /// these further valid `arguments` are sent, in order, while the tool
    /// refuses the ones before (an error or an `isError` result); a call no
    /// set of which is accepted is a skip.
    #[serde(skip)]
    pub arguments_to_try: Option<Vec<Value>>,
    /// Generated valid calls only: the tool's `inputSchema` declares no
    /// properties, so its one valid call is `{}` and an `isError` result is
    /// the tool's own failure, not a refusal of arguments mcperr chose.
    #[serde(skip)]
    pub takes_no_arguments: bool,
    /// Generated T4 cases of a tool that valid calls may reach: valid
    /// argument sets sent first, unjudged, until the tool accepts one; the
    /// case's call is then that set with the case's one change, so that a
    /// rejection cannot come from the tool refusing the rest of the call.
    /// No set accepted: the case's refusal must say more than the refusal
    /// of the same set without the change, or it is a skip.
    #[serde(skip)]
    pub rebase: Option<Rebase>,
    /// Where it came from (set by the loader).
    #[serde(skip)]
    pub source: String,
}

fn yes() -> bool {
    true
}

/// Why a case does not apply to a run (shown with its `skip`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Skip(pub String);

/// A field of a case that does not parse (`needs`, `eras`, a check name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FieldError(pub String);

/// A case file that could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("case file {source_name}: {message}")]
pub struct CaseError {
    /// The file.
    pub source_name: String,
    /// What is wrong.
    pub message: String,
}

impl Case {
    /// Parses and validates one case file's text.
    pub fn parse(source: &str, text: &str) -> Result<Case, CaseError> {
        let err = |message: String| CaseError {
            source_name: source.to_string(),
            message,
        };
        let toml_error = |e: toml::de::Error| err(e.to_string().trim().replace('\n', " "));
        // An unknown rule is reported after every other error of the file,
        // as the rule table names it: the file is read again with a known
        // id in its place (on the same line, so other errors keep theirs).
        let (mut case, unknown_rule): (Case, _) = match toml::from_str(text) {
            Ok(case) => (case, None),
            Err(e) if e.message().starts_with("unknown rule ") => {
                let span = e.span().unwrap_or(0..0);
                let known = format!("{}\"J1\"{}", &text[..span.start], &text[span.end..]);
                let case = toml::from_str(&known).map_err(toml_error)?;
                (case, Some(e.message().to_string()))
            }
            Err(e) => return Err(toml_error(e)),
        };
        case.source = source.to_string();
        if case.expect.is_null() {
            case.expect = Value::Object(Default::default());
        }
        if let Some(text) = case.request.params_json.take() {
            if case.request.params.is_some() {
                return Err(err("request: give params or params_json, not both".into()));
            }
            // A lone surrogate a fuzz finding sent (`\ud800`, which a Value
            // cannot hold) is kept as the placeholder every sender splices
            // back in ([`mcperr_wire::text::line`]).
            let text = mcperr_wire::text::as_placeholder(&text);
            let params = serde_json::from_str(&text)
                .map_err(|e| err(format!("request.params_json is not JSON: {e}")))?;
            case.request.params = Some(params);
        }
        if let Some(message) = unknown_rule {
            return Err(err(message));
        }
        case.check_grading().map_err(err)?;
        case.check_script().map_err(err)?;
        Ok(case)
    }

    /// The grading a case names, against the rule table: its rule, the
    /// aspect it replays, its aspects and its alternatives' aspects.
    fn check_grading(&self) -> Result<(), String> {
        let rule = self.rule;
        if let Some(r) = &self.replays {
            r.parse::<mcperr_model::rules::AspectId>()
                .map_err(|e| format!("replays: {}", e.0))?;
        }
        let aspect_of = |name: &str| {
            format!("{rule}.{name}")
                .parse::<mcperr_model::rules::AspectId>()
                .map(|_| ())
                .map_err(|e| e.0)
        };
        if let Some(a) = &self.aspect {
            aspect_of(a)?;
        }
        for a in self.aspects.keys() {
            aspect_of(a)?;
        }
        let named = self.also_pass.iter().chain(&self.warn).chain(
            self.profile
                .values()
                .flat_map(|o| o.also_pass.iter().chain(&o.warn)),
        );
        for alt in named {
            match &alt.aspect {
                Some(a) => aspect_of(a)?,
                None if alt.reason.is_empty() => {
                    return Err("an also_pass or warn shape needs a reason or an aspect".into())
                }
                None => {}
            }
        }
        Ok(())
    }

    /// The rest of what a case says, beyond its grading: needs, eras,
    /// checks, profiles, captures, transport and the request's id.
    fn check_script(&self) -> Result<(), String> {
        self.needs().map_err(|e| e.0)?;
        self.eras().map_err(|e| e.0)?;
        for c in self
            .checks
            .iter()
            .chain(self.profile.values().flat_map(|o| o.checks.iter()))
        {
            Check::from_str(c).map_err(|e| e.0)?;
        }
        let alternatives = self.also_pass.iter().chain(&self.warn);
        let alternatives = alternatives.chain(
            self.profile
                .values()
                .flat_map(|o| o.also_pass.iter().chain(&o.warn)),
        );
        for a in alternatives {
            for e in &a.eras {
                e.parse::<Era>().map_err(|e| e.to_string())?;
            }
        }
        for key in self.profile.keys() {
            if let Some((_, era)) = key.split_once('@') {
                era.parse::<Era>()
                    .map_err(|e| format!("[profile.\"{key}\"]: {e}"))?;
            }
        }
        for step in &self.send {
            if let SendStep::Request { capture, .. } = step {
                if let Some((name, spec)) = capture
                    .iter()
                    .find(|(_, spec)| !crate::capture::valid_spec(spec))
                {
                    return Err(format!(
                    "capture {name} = {spec:?}: give a dotted path (PATH, or PATH? when the case is to be skipped without it) or FUNCTION(PATH) with FUNCTION one of {}",
                    crate::capture::FUNCTIONS.join(", ")
                ));
                }
            }
        }
        if let Some(t) = &self.transport {
            if t != "stdio" && t != "http" {
                return Err(format!(
                    "transport must be \"stdio\" or \"http\", not {t:?}"
                ));
            }
        }
        if self.hold_asks && (self.handshake || self.transport.as_deref() != Some("stdio")) {
            return Err(
            "hold_asks needs transport = \"stdio\" and handshake = false: only a case's own initialize invites the server's requests, and only over stdio does mcperr answer them".into(),
        );
        }
        if let Some(session) = self.http.as_ref().and_then(|h| h.session.as_deref()) {
            if !matches!(session, "none" | "bogus" | "deleted") {
                return Err(format!(
                    "http.session must be none, bogus or deleted, not {session:?}"
                ));
            }
        }
        if let Some(id) = &self.request.id {
            if !(id.is_string() || id.is_number()) {
                return Err("request.id must be a string or a number".into());
            }
        }
        Ok(())
    }

    /// The rule it proves (checked on load).
    pub fn rule_id(&self) -> mcperr_model::rules::RuleId {
        self.rule
    }

    /// The aspect of the case's rule named `name` (checked on load), or the
    /// rule's central sentence.
    pub fn aspect_named(&self, name: Option<&str>) -> mcperr_model::rules::AspectId {
        let rule = self.rule_id();
        name.and_then(|n| mcperr_model::rules::AspectId::find(rule, n))
            .unwrap_or_else(|| rule.main())
    }

    /// The aspect a saved fuzz finding replays (`replays`), if any.
    pub fn replays_aspect(&self) -> Option<mcperr_model::rules::AspectId> {
        self.replays.as_deref().and_then(|a| a.parse().ok())
    }

    /// The aspect the case's `[expect]` proves.
    pub fn aspect_id(&self) -> mcperr_model::rules::AspectId {
        self.aspect_named(self.aspect.as_deref())
    }

    /// What it needs from the server, parsed.
    pub fn needs(&self) -> Result<Vec<Need>, FieldError> {
        self.needs.iter().map(|n| n.parse()).collect()
    }

    /// The eras it applies to.
    pub fn eras(&self) -> Result<Vec<Era>, FieldError> {
        if self.eras.is_empty() {
            return Ok(Era::ALL.to_vec());
        }
        self.eras
            .iter()
            .map(|e| e.parse::<Era>().map_err(|e| FieldError(e.to_string())))
            .collect()
    }

    /// `Ok` if the case runs over this transport, else the skip reason.
    pub fn transport_ok(&self, http: bool) -> Result<(), Skip> {
        let wants = self
            .transport
            .as_deref()
            .or(self.http.as_ref().map(|_| "http"));
        match (wants, http) {
            (Some("stdio"), true) => Err(Skip("a stdio case".into())),
            (Some("http"), false) => Err(Skip("an HTTP case".into())),
            _ => Ok(()),
        }
    }

    /// The capability a server must advertise for this case to apply:
    /// `tools`, `resources` or `prompts` for the cases of those areas (and
    /// the cases generated from tools); none for framing and HTTP cases.
    pub fn capability(&self) -> Option<&'static str> {
        // Generated ids are `generated/<area>/…`.
        let area = match self.area() {
            "generated" => self.id.split('/').nth(1).unwrap_or(""),
            other => other,
        };
        match area {
            "tools" => Some("tools"),
            "resources" => Some("resources"),
            "prompts" => Some("prompts"),
            _ => None,
        }
    }

    /// The area: the part of the id before the first `/`.
    pub fn area(&self) -> &str {
        self.id.split('/').next().unwrap_or("")
    }
}

/// The built-in case, profile and schema files, embedded by mcperr-model's
/// build script with the rest of fixtures/ (one place embeds the data).
pub use mcperr_model::fixtures::{BUILTIN_CASES, BUILTIN_PROFILES, BUILTIN_SCHEMAS};

/// The case files built into the binary (fixtures/cases), parsed once per
/// process: they cannot change, and parsing 150 TOML files was a third of
/// an in-process run's time (a fault sweep makes hundreds of runs).
pub fn builtin_cases() -> Result<Vec<Case>, CaseError> {
    static PARSED: std::sync::OnceLock<Result<Vec<Case>, CaseError>> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            BUILTIN_CASES
                .iter()
                .map(|(path, text)| Case::parse(path, text))
                .collect()
        })
        .clone()
}

/// See [`Case::rebase`].
#[derive(Debug, Clone, PartialEq)]
pub struct Rebase {
    /// Valid argument sets, in the order they are tried.
    pub sets: Vec<Value>,
    /// The property the case adds to the accepted set, and its value.
    pub extra: (String, Value),
}

impl Rebase {
    /// `set` with the case's change.
    pub fn apply(&self, set: &Value) -> Value {
        let mut args = set.clone();
        if let Some(o) = args.as_object_mut() {
            o.insert(self.extra.0.clone(), self.extra.1.clone());
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_case_file_loads() {
        let cases = builtin_cases().expect("the built-in case files load");
        assert!(cases.len() >= 50, "{}", cases.len());
    }

    #[test]
    fn generated_cases_need_the_capability_of_their_own_area() {
        let mut c = builtin_cases().unwrap().remove(0);
        for (id, cap) in [
            ("generated/resources/a://{x}/not-found", Some("resources")),
            ("generated/prompts/p/render", Some("prompts")),
            ("generated/tools/t/valid-call", Some("tools")),
            ("jsonrpc/string-id", None),
        ] {
            c.id = id.into();
            assert_eq!(c.capability(), cap, "{id}");
        }
    }

    #[test]
    fn an_unknown_rule_is_a_load_error_naming_the_file() {
        let text = "id = \"x/y\"\nrule = \"Z9\"\n[request]\nmethod = \"ping\"\n";
        let e = Case::parse("cases/x/y.toml", text).unwrap_err();
        assert_eq!(e.source_name, "cases/x/y.toml");
        assert!(e.message.contains("unknown rule \"Z9\""), "{}", e.message);
        assert!(e.to_string().starts_with("case file cases/x/y.toml: "));
    }

    /// Every other error of a file comes before its unknown rule, wherever
    /// the rule is written.
    #[test]
    fn an_unknown_rule_is_reported_after_the_file_s_other_errors() {
        let unknown_field =
            "id = \"x/y\"\nrule = \"Z9\"\nbogus = 1\n[request]\nmethod = \"ping\"\n";
        let e = Case::parse("t.toml", unknown_field).unwrap_err();
        assert!(
            e.message.contains("line 3") && e.message.contains("bogus"),
            "{}",
            e.message
        );
        let both_params = "id = \"x/y\"\nrule = \"Z9\"\n[request]\nmethod = \"ping\"\nparams = {}\nparams_json = \"{}\"\n";
        let e = Case::parse("t.toml", both_params).unwrap_err();
        assert_eq!(e.message, "request: give params or params_json, not both");
    }

    /// A case judges a requirement through its rule, or its rule has no
    /// keyword sentence in any era (level none or described: the error model
    /// or the spec's description is what it checks, as its page says).
    #[test]
    fn every_case_cites_a_requirement_or_a_rule_without_a_keyword() {
        use mcperr_model::requirements::checking;
        use mcperr_model::rules::{AspectId, Level, RuleId};
        let cited: Vec<AspectId> = Era::ALL.iter().flat_map(|e| checking(*e)).collect();
        for case in builtin_cases().unwrap() {
            let rule: RuleId = case.rule;
            if cited.iter().any(|a| a.rule() == rule) {
                continue;
            }
            for era in Era::ALL {
                let level = rule.main().text(era).level;
                assert!(
                    matches!(level, Level::None | Level::Described),
                    "case {} checks rule {rule}, level {level:?} in {era}, which no requirement cites",
                    case.id
                );
            }
        }
    }
}
