//! 2025-11-25's resumable SSE streams over HTTP
//! (basic/transports#resumability-and-redelivery). Each SSE answer in a
//! session is a stream with a number of its own: it opens with a priming
//! event ("an SSE event consisting of an event ID and an empty `data`
//! field") and each message event gets the id `<stream>-<n>`, unique across
//! the session's streams and naming its stream ("Event IDs SHOULD encode
//! sufficient information to identify the originating stream"). A GET with
//! `Last-Event-ID` replays that stream's message events after the one named,
//! and nothing of another stream ("The server MUST NOT replay messages that
//! would have been delivered on a different stream"); under the
//! `replay-other-stream` fault, the session's other streams follow.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::faults::Fault;

/// Most streams kept per session (the oldest go first).
const STREAMS_KEPT: usize = 16;

/// Most sessions whose streams are kept (the least recently recorded go
/// first): as many as the edge keeps alive at once by default, so that a
/// client minting session after session (a fuzzer) cannot grow the store.
const SESSIONS_KEPT: usize = 1024;

/// One SSE answer's message events, by their data.
#[derive(Debug)]
struct Stream {
    number: u64,
    events: Vec<String>,
}

/// The streams of each session, for resumption.
#[derive(Debug, Default)]
pub struct Streams {
    sessions: Mutex<HashMap<String, Vec<Stream>>>,
    /// The sessions in the order their streams were last recorded.
    recent: Mutex<std::collections::VecDeque<String>>,
    next: std::sync::atomic::AtomicU64,
}

impl Streams {
    /// The SSE `body` of an answer in `session`, numbered: a priming event
    /// first (after a leading comment), and an id on each message event.
    /// The events are kept for a GET that resumes the stream. A body that
    /// is not UTF-8 (a fault's) is left as it is.
    pub fn record(&self, session: &str, body: Vec<u8>) -> Vec<u8> {
        let Ok(text) = String::from_utf8(body.clone()) else {
            return body;
        };
        let number = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut out = String::new();
        let mut events = Vec::new();
        let mut primed = false;
        for block in text.split_inclusive("\n\n") {
            let comment = block
                .lines()
                .filter(|l| !l.is_empty())
                .all(|l| l.starts_with(':'));
            if !comment && !primed {
                out.push_str(&format!("id: {number}-0\ndata:\n\n"));
                primed = true;
            }
            match message_data(block) {
                Some(data) => {
                    events.push(data.to_string());
                    out.push_str(&format!("id: {number}-{}\n{block}", events.len()));
                }
                None => out.push_str(block),
            }
        }
        let mut sessions = self.sessions.lock().unwrap();
        let mut recent = self.recent.lock().unwrap();
        recent.retain(|s| s != session);
        recent.push_back(session.to_string());
        while recent.len() > SESSIONS_KEPT {
            if let Some(oldest) = recent.pop_front() {
                sessions.remove(&oldest);
            }
        }
        let streams = sessions.entry(session.to_string()).or_default();
        streams.push(Stream { number, events });
        if streams.len() > STREAMS_KEPT {
            streams.remove(0);
        }
        out.into_bytes()
    }

    /// The SSE body that resumes, in `session`, the stream `last` (an
    /// event id it gave) names: its message events after that one. `None`
    /// for an id of no stream the session keeps.
    pub fn resume(&self, session: &str, last: &str, fault: Option<Fault>) -> Option<Vec<u8>> {
        let (number, seen) = last.split_once('-')?;
        let (number, seen): (u64, usize) = (number.parse().ok()?, seen.parse().ok()?);
        let sessions = self.sessions.lock().unwrap();
        let streams = sessions.get(session)?;
        let stream = streams.iter().find(|s| s.number == number)?;
        let mut out = String::new();
        let mut replay = |s: &Stream, from: usize| {
            for (i, data) in s.events.iter().enumerate().skip(from) {
                out.push_str(&format!(
                    "id: {}-{}\nevent: message\ndata: {data}\n\n",
                    s.number,
                    i + 1
                ));
            }
        };
        replay(stream, seen);
        if fault == Some(Fault::ReplayOtherStream) {
            for other in streams.iter().filter(|s| s.number != number) {
                replay(other, 0);
            }
        }
        Some(out.into_bytes())
    }

    /// Forgets a session's streams (it was deleted).
    pub fn forget(&self, session: &str) {
        self.sessions.lock().unwrap().remove(session);
        self.recent.lock().unwrap().retain(|s| s != session);
    }
}

/// The data of a `message` event block (one `data:` line, as the edges
/// write them), or `None` for another block.
fn message_data(block: &str) -> Option<&str> {
    let mut data = None;
    for line in block.lines() {
        if let Some(kind) = line.strip_prefix("event:") {
            if kind.trim() != "message" {
                return None;
            }
        } else if let Some(d) = line.strip_prefix("data:") {
            data = Some(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = ": mcperr reference\n\nevent: message\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n";

    #[test]
    fn a_stream_is_primed_numbered_and_resumed_after_the_named_event() {
        let streams = Streams::default();
        let first = String::from_utf8(streams.record("s", BODY.into())).unwrap();
        assert_eq!(
            first,
            ": mcperr reference\n\nid: 0-0\ndata:\n\nid: 0-1\nevent: message\ndata: {\"a\":1}\n\nid: 0-2\nevent: message\ndata: {\"b\":2}\n\n"
        );
        streams.record("s", "event: message\ndata: {\"c\":3}\n\n".into());
        let resumed = streams.resume("s", "0-1", None).unwrap();
        assert_eq!(
            String::from_utf8(resumed).unwrap(),
            "id: 0-2\nevent: message\ndata: {\"b\":2}\n\n"
        );
        assert!(streams.resume("s", "9-0", None).is_none());
        assert!(streams.resume("other", "0-0", None).is_none());
        let leaked = streams
            .resume("s", "0-2", Some(Fault::ReplayOtherStream))
            .unwrap();
        assert!(String::from_utf8(leaked).unwrap().contains("{\"c\":3}"));
    }

    #[test]
    fn the_store_keeps_the_latest_sessions_only() {
        let streams = Streams::default();
        for n in 0..=SESSIONS_KEPT {
            streams.record(&format!("s{n}"), "data: {}\n\n".into());
        }
        assert_eq!(streams.sessions.lock().unwrap().len(), SESSIONS_KEPT);
        // The first session's stream (number 0) is gone, the last one's kept.
        assert!(streams.resume("s0", "0-0", None).is_none());
        let last = format!("{SESSIONS_KEPT}-0");
        assert!(streams
            .resume(&format!("s{SESSIONS_KEPT}"), &last, None)
            .is_some());
        streams.forget(&format!("s{SESSIONS_KEPT}"));
        assert!(streams
            .resume(&format!("s{SESSIONS_KEPT}"), &last, None)
            .is_none());
    }
}
