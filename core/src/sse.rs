//! Reading a Streamable HTTP answer sent as Server-Sent Events: `message`
//! events whose data is JSON-RPC, read until the awaited response arrives
//! (a server SHOULD close the stream after it, but need not). The event
//! framing is `eventsource-stream`'s; what the events mean is here, shared
//! by the HTTP transport (fed as the body arrives) and the `sse` fuzz target.

use futures_util::StreamExt;
use serde_json::Value;

/// The messages of one SSE answer, read so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SseReader {
    /// The id whose response ends the wait (`None`: any response).
    pub want: Option<Value>,
    /// The JSON-RPC messages, in order.
    pub messages: Vec<Value>,
    /// What was wrong with the stream, if anything.
    pub problem: Option<String>,
}

/// Whether `v` is a response that ends the wait: one with the awaited id,
/// or, with no id awaited (raw bodies) or for a rejection, one with id null.
pub fn ends_wait(v: &Value, want: Option<&Value>) -> bool {
    let is_response =
        v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
    let id = v.get("id").unwrap_or(&Value::Null);
    is_response && (want.is_none() || Some(id) == want || id.is_null())
}

impl SseReader {
    /// A reader awaiting the response with id `want`.
    pub fn new(want: Option<Value>) -> SseReader {
        SseReader {
            want,
            ..Default::default()
        }
    }

    /// Takes one event; true once the awaited response has arrived.
    pub fn on_event(&mut self, event: &str, data: &str) -> bool {
        if !(event.is_empty() || event == "message") {
            return false;
        }
        let data = data.strip_suffix('\n').unwrap_or(data);
        match crate::wire::decode(data.as_bytes()) {
            Ok(v) => {
                let done = ends_wait(&v, self.want.as_ref());
                self.messages.push(v);
                done
            }
            Err(_) => {
                self.problem = Some(format!("an SSE message event is not JSON: {data:?}"));
                false
            }
        }
    }

    /// Notes a malformed stream (the reading stops).
    pub fn malformed(&mut self, why: impl std::fmt::Display) {
        self.problem = Some(format!("the SSE stream is malformed: {why}"));
    }
}

/// Reads a whole body that arrived in `chunks` (tests and fuzzing: the
/// stream is driven here without an async runtime; every chunk is ready).
pub fn decode(chunks: Vec<Vec<u8>>, want: Option<Value>) -> SseReader {
    let stream =
        futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut events = Box::pin(eventsource_stream::Eventsource::eventsource(stream));
    let mut reader = SseReader::new(want);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        match events.poll_next_unpin(&mut cx) {
            std::task::Poll::Ready(Some(Ok(e))) => {
                if reader.on_event(&e.event, &e.data) {
                    break;
                }
            }
            std::task::Poll::Ready(Some(Err(e))) => {
                reader.malformed(e);
                break;
            }
            // Every chunk is ready, so the stream never waits.
            std::task::Poll::Ready(None) | std::task::Poll::Pending => break,
        }
    }
    reader
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_split_anywhere_comments_and_a_cut_last_event() {
        let body = b": hi\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"cut\"";
        let chunks: Vec<Vec<u8>> = body.chunks(7).map(<[u8]>::to_vec).collect();
        let r = decode(chunks, Some(json!(1)));
        assert_eq!(r.messages.len(), 2, "{r:?}");
        assert_eq!(r.messages[1]["id"], 1);
        assert_eq!(r.problem, None);
    }
}
