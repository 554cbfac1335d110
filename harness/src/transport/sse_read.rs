//! Reading an SSE answer: its `message` events until the response that
//! ends the wait, and a GET's stream (which answers nothing) listened to
//! for a while, less once the request POSTed beside it is answered.

use std::sync::Arc;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::stream::StreamExt;
use mcperr_wire::exchange::HttpAnswer;
use mcperr_wire::sse::SseReader;
use serde_json::Value;

use super::HttpFailure;

/// How long an SSE stream may stay open after the response it carried: a
/// server that ends it with the response closes it at once.
const SSE_END_WAIT: Duration = Duration::from_millis(250);

/// How long the SSE stream a GET opens is listened to before mcperr closes
/// it: the stream carries only what the server sends of its own accord.
pub(super) const GET_LISTEN: Duration = Duration::from_millis(300);

/// How long a GET's stream is listened to once the request POSTed beside it
/// was answered (`HttpConnection::get_heard`), counted from that answer or
/// from the stream's opening, whichever is later: a copy of that answer on
/// the stream goes out as the answer does, and the server is past the
/// point where the stream could carry it.
pub(super) const GET_LISTEN_AFTER: Duration = Duration::from_millis(50);

/// Reads SSE `message` events into `answer.messages` until the response that
/// ends the wait (mcperr-wire's [`SseReader`]); an incomplete last event (a cut
/// stream) is not an event.
pub(super) async fn read_sse(
    bytes: impl futures_util::Stream<Item = Result<Vec<u8>, HttpFailure>> + Send,
    want: Option<&Value>,
    answer: &mut HttpAnswer,
    listen: Option<(Duration, Option<Arc<tokio::sync::Notify>>)>,
) -> Result<(), HttpFailure> {
    let mut events = Box::pin(mcperr_wire::sse::without_bom(bytes).eventsource());
    let mut reader = SseReader::new(want.cloned());
    let (mut until, mut heard) = match listen {
        Some((d, heard)) => (Some(tokio::time::Instant::now() + d), heard),
        None => (None, None),
    };
    loop {
        let next = match until {
            // A stream that answers nothing (a GET's) is listened to for a
            // while, then closed: what came by then is kept; once the
            // request beside it is answered, a little while more.
            Some(t) => {
                let notified = heard.clone();
                let answered = async move {
                    match notified {
                        Some(n) => n.notified().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    next = tokio::time::timeout_at(t, events.next()) => match next {
                        Ok(next) => next,
                        Err(_) => break,
                    },
                    () = answered => {
                        heard = None;
                        until = Some(t.min(tokio::time::Instant::now() + GET_LISTEN_AFTER));
                        continue;
                    }
                }
            }
            None => events.next().await,
        };
        let Some(event) = next else { break };
        match event {
            Ok(e) => {
                // The last event id goes on from event to event until one
                // sets another (an event with no data, a priming one, is
                // not dispatched, but its id is carried forward).
                if !e.id.is_empty() && answer.event_ids.last() != Some(&e.id) {
                    answer.event_ids.push(e.id.clone());
                }
                if reader.on_event(&e.event, &e.data) {
                    // "The final JSON-RPC response SHOULD terminate the
                    // stream": an event after it, or no end soon, is H3's.
                    let next = tokio::time::timeout(SSE_END_WAIT, events.next()).await;
                    answer.open_after_response = !matches!(next, Ok(None));
                    break;
                }
            }
            Err(eventsource_stream::EventStreamError::Transport(f)) => return Err(f),
            Err(e) => {
                reader.malformed(e);
                break;
            }
        }
    }
    answer.messages.extend(reader.messages);
    answer.repeated.extend(reader.repeated);
    if reader.problem.is_some() {
        answer.problem = reader.problem;
    }
    Ok(())
}
