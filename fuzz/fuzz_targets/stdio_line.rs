//! The harness's stdout line decoder: any bytes, any cap. Never a panic;
//! one end of stream, last; no line over the cap; every byte accounted for.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcperr_wire::lines::{LineDecoder, StdoutEvent};

fuzz_target!(|data: &[u8]| {
    let Some((&cap, bytes)) = data.split_first() else {
        return;
    };
    let cap = usize::from(cap);
    let events = LineDecoder::decode_all(cap, bytes);
    assert_eq!(events.last(), Some(&StdoutEvent::Eof));
    assert_eq!(events.iter().filter(|e| **e == StdoutEvent::Eof).count(), 1);
    let mut seen = 0;
    for e in &events {
        match e {
            StdoutEvent::Line(l) => {
                assert!(l.len() <= cap, "a line of {} over the cap {cap}", l.len());
                seen += l.len();
            }
            StdoutEvent::TooLong(o) => {
                assert!(o.len > cap);
                seen += o.len;
                let _ = o.id();
            }
            StdoutEvent::Eof => {}
        }
    }
    // Every byte is in a line, counted as too long, a newline, or a `\r`
    // dropped before a newline (at most one per newline).
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    assert!(seen + newlines <= bytes.len(), "bytes counted twice");
    assert!(bytes.len() - seen - newlines <= newlines, "bytes lost");
});
