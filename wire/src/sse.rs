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
    /// Messages whose text repeats a name in `inputRequests`.
    pub repeated: Vec<crate::exchange::Stray>,
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
        // An event with empty data is dispatched to no one (WHATWG HTML,
        // "dispatch the event": an empty data buffer returns): 2025-11-25's
        // priming event, "an event ID and an empty data field".
        if data.is_empty() {
            return false;
        }
        match crate::text::decode(data.as_bytes()) {
            Ok(v) => {
                self.repeated
                    .extend(crate::exchange::Stray::repeated_names(data.as_bytes(), &v));
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

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The body with a leading UTF-8 byte order mark removed, even when it is
/// split across chunks, behind an empty comment line (`:`). An SSE stream
/// may begin with a BOM; eventsource-stream 0.2.3 strips it by slicing one
/// byte off the three-byte character of the first text it decodes, and
/// panics (found by the `sse` fuzz target, also with a BOM that only its
/// UTF-8 stage puts first): the comment makes that first text never a BOM,
/// and a comment is no part of any event.
pub fn without_bom<S, E>(stream: S) -> impl futures_util::Stream<Item = Result<Vec<u8>, E>> + Send
where
    S: futures_util::Stream<Item = Result<Vec<u8>, E>> + Send,
    E: Send,
{
    // (stream, the bytes held back while they may still be a BOM, decided)
    let start = (Box::pin(stream), Vec::new(), false);
    let comment = futures_util::stream::iter([Ok(b":\n".to_vec())]);
    comment.chain(futures_util::stream::unfold(
        start,
        |(mut s, mut head, mut decided)| async move {
            loop {
                if decided {
                    let item = s.next().await?;
                    return Some((item, (s, head, decided)));
                }
                match s.next().await {
                    Some(Ok(chunk)) => {
                        head.extend_from_slice(&chunk);
                        if head.len() < BOM.len() && BOM.starts_with(&head) {
                            continue;
                        }
                        decided = true;
                        let all = std::mem::take(&mut head);
                        let body = all.strip_prefix(BOM).map_or(all.clone(), <[u8]>::to_vec);
                        return Some((Ok(body), (s, head, decided)));
                    }
                    Some(Err(e)) => return Some((Err(e), (s, head, true))),
                    None if head.is_empty() => return None,
                    // Ended inside what could have been a BOM: those bytes are the body.
                    None => {
                        let all = std::mem::take(&mut head);
                        return Some((Ok(all), (s, head, true)));
                    }
                }
            }
        },
    ))
}

/// Reads a whole body that arrived in `chunks` (tests and fuzzing: the
/// stream is driven here without an async runtime; every chunk is ready).
pub fn decode(chunks: Vec<Vec<u8>>, want: Option<Value>) -> SseReader {
    let stream =
        futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut events = Box::pin(eventsource_stream::Eventsource::eventsource(without_bom(
        stream,
    )));
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

    /// A stream may begin with a byte order mark, whole or split anywhere;
    /// it is no part of the first field, and it never panics the reader (the
    /// `sse` fuzz target found eventsource-stream slicing into it).
    #[test]
    fn a_leading_byte_order_mark_is_skipped_however_it_is_cut() {
        let body = b"\xEF\xBB\xBFdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n".to_vec();
        for cut in 0..=body.len() {
            let chunks = vec![body[..cut].to_vec(), body[cut..].to_vec()];
            let r = decode(chunks, Some(json!(1)));
            assert_eq!(r.messages.len(), 1, "cut at {cut}: {r:?}");
        }
    }
}
