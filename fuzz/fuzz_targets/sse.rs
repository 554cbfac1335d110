//! The SSE answer reader (mcperr-wire's sse): any body, cut into chunks anywhere.
//! Never a panic, and the messages do not depend on where the body was cut.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcperr_wire::sse::decode;
use serde_json::json;

fuzz_target!(|input: (Vec<u8>, Vec<u8>)| {
    let (body, cuts) = input;
    let whole = decode(vec![body.clone()], Some(json!(1)));
    let mut chunks = Vec::new();
    let mut rest = body.as_slice();
    for c in cuts {
        if rest.is_empty() {
            break;
        }
        let at = usize::from(c) % (rest.len() + 1);
        chunks.push(rest[..at].to_vec());
        rest = &rest[at..];
    }
    chunks.push(rest.to_vec());
    let split = decode(chunks, Some(json!(1)));
    assert_eq!(whole.messages, split.messages);
});
