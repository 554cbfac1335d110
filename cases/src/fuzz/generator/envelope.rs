//! Envelope mutations: `tools/call`, `resources/read` and `prompts/get`
//! requests whose own params are broken (a name missing or of the wrong
//! type, `arguments` not an object, params an array, the 2026-07-28 `_meta`
//! envelope broken). A request that names a real tool carries arguments the
//! tool's schema rejects unless the tool has consent for valid calls, so a
//! server that reads past the broken envelope runs no body it may not.

use mcperr_protocol::Era;
use serde_json::{json, Value};

use super::super::inputs::{Class, FuzzInput, IdStyle};
use super::super::source::Source;
use super::Generator;
use crate::generate::discovered::expand;

impl Generator {
    /// A request of a method the server offers with its own params broken.
    pub(super) fn envelope(&self, src: &mut dyn Source) -> Option<FuzzInput> {
        let mut methods = vec![];
        if !self.tools.is_empty() {
            methods.push("tools/call");
        }
        if !self.templates.is_empty() || !self.statics.is_empty() {
            methods.push("resources/read");
        }
        if !self.prompts.is_empty() {
            methods.push("prompts/get");
        }
        if methods.is_empty() {
            return None;
        }
        let method = methods[src.index(methods.len())];
        let key = if method == "resources/read" {
            "uri"
        } else {
            "name"
        };
        let good = match method {
            "tools/call" => {
                let tool = &self.tools[src.index(self.tools.len())];
                json!({"name": tool.name, "arguments": tool.envelope_arguments(src)?})
            }
            "prompts/get" => json!({"name": self.prompts[src.index(self.prompts.len())].name}),
            _ => {
                json!({"uri": self.templates.first().or(self.statics.first()).map(|t| expand(t, "mcperr")).unwrap_or_default()})
            }
        };
        let wrong = [json!(5), Value::Null, json!([]), json!({}), json!(true)];
        let w = wrong[src.index(wrong.len())].clone();
        let mut params = good.clone();
        let mut envelope = true;
        let what = match src.below(if self.era == Era::Modern { 5 } else { 4 }) {
            0 => {
                params.as_object_mut()?.remove(key);
                format!("params.{key} missing")
            }
            1 => {
                params[key] = w.clone();
                format!("params.{key} = {w}")
            }
            2 if method != "resources/read" => {
                // Not null: servers commonly read a null `arguments` as absent.
                params["arguments"] = if w.is_object() || w.is_null() {
                    json!("mcperr")
                } else {
                    w.clone()
                };
                format!("params.arguments = {}", params["arguments"])
            }
            3 => {
                // The era's envelope would turn the array back into an object.
                params = json!([good]);
                envelope = false;
                "params is an array".into()
            }
            4 => {
                // The 2026-07-28 envelope itself, broken.
                envelope = false;
                let mut env = crate::plan::with_envelope(Some(good.clone()));
                let meta = env.get_mut("_meta")?.as_object_mut()?;
                match src.below(3) {
                    0 => {
                        meta.remove(mcperr_protocol::era::META_PROTOCOL_VERSION);
                        params = env;
                        "_meta protocolVersion missing".into()
                    }
                    1 => {
                        meta.insert(
                            mcperr_protocol::era::META_PROTOCOL_VERSION.into(),
                            w.clone(),
                        );
                        params = env;
                        format!("_meta protocolVersion = {w}")
                    }
                    _ => {
                        env["_meta"] = json!("mcperr");
                        params = env;
                        "_meta is a string".into()
                    }
                }
            }
            _ => {
                params.as_object_mut()?.remove(key);
                format!("params.{key} missing")
            }
        };
        // A broken envelope is the method's finding, whichever tool it named.
        Some(FuzzInput {
            method: method.into(),
            params,
            envelope,
            id_style: IdStyle::Counter,
            class: Class::Envelope(what),
            target: method.into(),
        })
    }
}
