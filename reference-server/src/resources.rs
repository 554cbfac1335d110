//! `resources/list`, `resources/templates/list` and `resources/read`: rules R1–R6.
//!
//! Resources have the protocol path only: a read returns contents or fails
//! with a JSON-RPC error, never an `isError` half-result.
//!
//! Rules only: the templates arrive as [`crate::fixture::TemplateDef`]s from
//! the handler, so this module knows no fixture in particular.

use mcperr_protocol::codes::Code;
use mcperr_protocol::{codes, ErrorObject};
use serde_json::{json, Value};

use crate::answer::Answer;
use crate::faults::Fault;
use crate::fixture::{FixtureState, ResourceFailure, TemplateDef};
use crate::log::{catch_panic, LogRecord};

/// The `resources/templates/list` result's `resourceTemplates` array.
pub fn list_templates(templates: &[TemplateDef]) -> Value {
    templates
        .iter()
        .map(|t| json!({"uriTemplate": t.uri_template, "name": t.name, "description": t.description, "mimeType": "text/plain"}))
        .collect()
}

/// Answers one `resources/read`.
pub fn read(
    templates: &[TemplateDef],
    shop: &FixtureState,
    fault: Option<Fault>,
    params: Option<&Value>,
) -> Answer {
    let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
        let code = if fault == Some(Fault::UriMissingInternal) {
            codes::INTERNAL_ERROR
        } else {
            codes::INVALID_PARAMS
        };
        return Answer::error(ErrorObject::new(
            code,
            "Invalid params: \"uri\" must be a string",
        ));
    };
    // Under the fault a URI without a scheme (no URI at all) is taken for
    // the first template's parameter, as a lenient router would.
    let fallback;
    let uri = match (fault, templates.first()) {
        (Some(Fault::UriUnvalidated), Some(t)) if !uri.contains(':') => {
            fallback = t.uri_template.replace(
                &t.uri_template[t.uri_template.find('{').unwrap_or(0)..],
                uri,
            );
            fallback.as_str()
        }
        _ => uri,
    };
    let with_uri =
        |code: Code, message: String| ErrorObject::with_data(code, message, json!({"uri": uri}));
    let Some((template, param)) = templates
        .iter()
        .find_map(|t| t.matches(uri).map(|p| (t, p)))
    else {
        let code = if fault == Some(Fault::UnknownResourceInternal) {
            codes::INTERNAL_ERROR
        } else {
            codes::INVALID_PARAMS
        };
        return Answer::error(with_uri(code, format!("Unknown resource: {uri}"))).log(
            LogRecord::info(format!("resources/read for unknown resource {uri}")),
        );
    };
    if fault == Some(Fault::EscapedTitleLeaks) && template.name == "book" && param.contains('%') {
        // A template value's decoder that panics on a percent-escape, its
        // text passed on as a careless error handler does.
        let message = format!(
            "Error creating resource from template {uri}: thread 'main' panicked at reference-server/src/resources.rs:88:9: invalid percent-escape in {param:?}"
        );
        return Answer::error(with_uri(codes::INTERNAL_ERROR, message));
    }
    if fault == Some(Fault::PathTraversal) && uri.starts_with("file://") {
        // As a server that decodes the name and joins it to its directory
        // unchecked: whatever the path resolves to is served.
        let path =
            crate::fixture::normalized(&crate::fixture::percent_decoded(&uri["file://".len()..]));
        if let Some(text) = crate::fixture::file(&path) {
            return Answer::result(
                json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}),
            );
        }
    }
    let outcome = catch_panic(|| (template.read)(shop, param))
        .unwrap_or_else(|panic| Err(ResourceFailure::Crash(vec![panic.0])));
    match outcome {
        Ok(text) => Answer::result(
            json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}),
        ),
        Err(ResourceFailure::NotFound(message)) => {
            let log = LogRecord::info(format!("Resource not found: {uri}: {message}"));
            match fault {
                Some(Fault::NotFoundRetiredCode) => {
                    Answer::error(with_uri(codes::RESOURCE_NOT_FOUND_RETIRED, message))
                }
                Some(Fault::NotFoundEmptyContents) => Answer::result(json!({"contents": []})),
                Some(Fault::NotFoundNoUri) => {
                    Answer::error(ErrorObject::new(codes::INVALID_PARAMS, message))
                }
                _ => Answer::error(with_uri(codes::INVALID_PARAMS, message)),
            }
            .log(log)
        }
        Err(ResourceFailure::Failed(message)) => {
            let log = LogRecord::info(format!("Resource error for {uri}: {message}"));
            let code = if fault == Some(Fault::ResourceErrorInvalidParams) {
                codes::INVALID_PARAMS
            } else {
                codes::INTERNAL_ERROR
            };
            Answer::error(with_uri(code, message)).log(log)
        }
        Err(ResourceFailure::Protocol(mut e)) => {
            if fault == Some(Fault::ResourceMcpErrorAltered) {
                let mut data = e.data.take().unwrap_or_else(|| json!({}));
                if let Some(obj) = data.as_object_mut() {
                    obj.insert("uri".into(), uri.into());
                }
                e.data = Some(data);
            }
            Answer::error(e)
        }
        Err(ResourceFailure::Crash(chain)) => {
            let mut message = format!("Error creating resource from template {uri}");
            if fault == Some(Fault::ResourceCrashLeaks) {
                message = format!("{message}: {}", chain.join("; "));
            }
            let log = LogRecord::error(
                format!("Resource '{uri}' raised an unexpected exception"),
                chain,
            );
            Answer::error(with_uri(codes::INTERNAL_ERROR, message)).log(log)
        }
    }
}
