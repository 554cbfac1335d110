//! How a case's messages go out: request ids, its steps and the values
//! their answers give the later ones (`capture`), the judged request sent
//! plainly or shaped as its `[http]` table says (method, headers, session
//! mode), a GET with a POST on the side (`get-stream-quiet`) and a GET that
//! resumes a stream (`resumed-own-stream`).

use mcperr_cases::plan::{CasePlan, IdChoice, Message, Outgoing, SessionMode, Step, BOGUS_SESSION};
use mcperr_protocol::Id;
use mcperr_wire::exchange::{Ending, Exchange};
use serde_json::Value;

use crate::client::{legacy_handshake, Client, Conn};

pub(super) fn id_for(client: &mut Client, choice: &IdChoice) -> Option<Id> {
    match choice {
        IdChoice::Fresh => Some(client.fresh_id()),
        IdChoice::Given(id) => Some(id.clone()),
        IdChoice::Notification => None,
    }
}

/// Sends one unjudged step: the answer of a step request, `Err` when it got none.
pub(super) async fn step(client: &mut Client, step: &Step) -> Result<Option<Exchange>, Exchange> {
    match step {
        Step::Raw(raw) => client.send_raw(Message::raw(client.era, raw)).await,
        Step::Send(o) if o.id == IdChoice::Notification => {
            client.notify(&o.method, o.params.clone()).await
        }
        // Sent by the caller, which keeps what it needs to watch it.
        Step::InFlight(_) => {}
        Step::Send(o) => {
            let ex = client.request(&o.method, o.params.clone(), false).await;
            return match ex.response() {
                Some(_) => Ok(Some(ex)),
                None => Err(ex),
            };
        }
    }
    Ok(None)
}

/// The values step `index`'s `answer` gives the later ones (`capture`), or
/// why the case cannot go on without them: `Err(true)` skips the case (an
/// optional value is absent), `Err(false)` fails it.
pub(super) fn capture(
    plan: &CasePlan,
    index: usize,
    answer: Option<&Value>,
    vars: &mut Vec<(String, Value)>,
) -> Result<(), (bool, String)> {
    let Some((_, wanted)) = plan.captures.iter().find(|(i, _)| *i == index) else {
        return Ok(());
    };
    let answer = answer.unwrap_or(&Value::Null);
    for (name, spec) in wanted {
        let (skip, why) = match mcperr_cases::capture::take(answer, spec) {
            Ok(v) => {
                vars.push((name.clone(), v));
                continue;
            }
            Err(mcperr_cases::capture::Missing::Optional(why)) => (true, why),
            Err(mcperr_cases::capture::Missing::Required(why)) => (false, why),
        };
        let step = format!("step {} ({})", index + 1, answer["id"]);
        return Err(if skip {
            (
                true,
                format!(
                    "not judged: {step} {why}: the server took a path this case does not follow: {}",
                    clip(&answer.to_string())
                ),
            )
        } else {
            (
                false,
                format!(
                    "{step} {why}, which the case goes on with: {}",
                    clip(&answer.to_string())
                ),
            )
        });
    }
    Ok(())
}

pub(super) async fn plain_exchange(client: &mut Client, request: &Outgoing) -> Exchange {
    let id = id_for(client, &request.id).unwrap_or_else(|| client.fresh_id());
    client.exchange(request.finish(client.era, Some(&id))).await
}

pub(super) fn no_sessions() -> Ending {
    Ending::NotApplicable(
        "the server minted no Mcp-Session-Id: it runs without sessions, which 2025-11-25 allows"
            .into(),
    )
}

/// A session id that the server minted and then ended with DELETE, or why
/// there is none to test with.
pub(super) async fn deleted_session(client: &Client) -> Result<String, Ending> {
    let Conn::Http(http) = &client.conn else {
        return Err(Ending::NotApplicable("not an HTTP client".into()));
    };
    let mut fresh = Client::new(Conn::Http(http.fresh()), client.era, client.timeout);
    if legacy_handshake(&mut fresh).await.is_err() {
        return Err(Ending::SetupFailed(
            "a second initialize, to get a session to delete, failed".into(),
        ));
    }
    let Conn::Http(h) = &fresh.conn else {
        unreachable!("built as HTTP")
    };
    let Some(id) = h.session.clone() else {
        return Err(no_sessions());
    };
    match h.close().await {
        Some(s) if (200..300).contains(&s) => Ok(id),
        Some(405) => Err(Ending::NotApplicable(
            "the server does not let clients end sessions (DELETE 405), which the spec allows"
                .into(),
        )),
        Some(s) => Err(Ending::SetupFailed(format!(
            "DELETE of a fresh session was answered {s}"
        ))),
        None => Err(Ending::SetupFailed(
            "DELETE of a fresh session failed".into(),
        )),
    }
}

/// Sends the judged request of an `[http]` case as its shape says.
pub(super) async fn shaped_exchange(client: &mut Client, plan: &CasePlan) -> Exchange {
    let shape = plan.http.as_ref().expect("an [http] plan");
    let id = id_for(client, &plan.request.id);
    let msg = plan.request.finish(client.era, id.as_ref());
    let mut overrides = shape.overrides.clone();
    let has_session = matches!(&client.conn, Conn::Http(h) if h.session.is_some());
    if shape.session != SessionMode::Current && !has_session {
        return Exchange::bare(msg.body, no_sessions());
    }
    match shape.session {
        SessionMode::Without => overrides.push(("Mcp-Session-Id".into(), None)),
        SessionMode::Bogus => overrides.push(("Mcp-Session-Id".into(), Some(BOGUS_SESSION.into()))),
        SessionMode::Deleted => match deleted_session(client).await {
            Ok(id) => overrides.push(("Mcp-Session-Id".into(), Some(id))),
            Err(ending) => return Exchange::bare(msg.body, ending),
        },
        SessionMode::Current => {}
    }
    let Conn::Http(http) = &client.conn else {
        unreachable!("HTTP plans run on HTTP clients")
    };
    let headers = http.headers_for(client.era, &msg);
    let (request, body) = match (&shape.raw_body, shape.method.as_str()) {
        (_, "GET" | "DELETE") => (Value::Null, None),
        (Some(raw), _) => (Value::String(raw.clone()), Some(raw.clone().into_bytes())),
        (None, _) => (msg.body, Some(msg.bytes)),
    };
    let id = if shape.raw_body.is_some() { None } else { id };
    client
        .http_exchange(id, request, &shape.method, headers, &overrides, body)
        .await
}

/// `get-stream-quiet`: the case's GET, and while its stream is listened to,
/// a `ping` POSTed in the same session on a connection of its own; the
/// ping's answer (its messages) for the check.
pub(super) async fn get_with_side_post(
    client: &mut Client,
    plan: &CasePlan,
) -> (Exchange, Result<Vec<Value>, String>) {
    let Conn::Http(http) = &mut client.conn else {
        unreachable!("HTTP plans run on HTTP clients")
    };
    let mut side = http.fresh();
    side.session = http.session.clone();
    // The GET listens until the ping is answered, and a little after.
    let heard = std::sync::Arc::new(tokio::sync::Notify::new());
    let opened = std::sync::Arc::new(tokio::sync::Notify::new());
    http.get_heard = Some(heard.clone());
    http.get_opened = Some(opened.clone());
    let ping_id = client.fresh_id();
    let ping = Message::request(client.era, &ping_id, "ping", None, false);
    let headers = side.headers_for(client.era, &ping);
    let post = async move {
        // Once the GET's answer has its headers (the stream is open when the
        // ping lands), or after GET_OPENING if it has none by then.
        let _ = tokio::time::timeout(GET_OPENING, opened.notified()).await;
        let body = ping.bytes;
        let want = ping_id.to_value();
        match side
            .send("POST", headers, &Vec::new(), Some(&want), Some(body))
            .await
        {
            Ok(answer) => {
                heard.notify_one();
                Ok(answer.messages)
            }
            Err(e) => Err(e.to_string()),
        }
    };
    let both = tokio::join!(shaped_exchange(client, plan), post);
    if let Conn::Http(http) = &mut client.conn {
        http.get_heard = None;
        http.get_opened = None;
    }
    both
}

/// The longest a request POSTed beside a GET waits for the GET's headers.
const GET_OPENING: std::time::Duration = std::time::Duration::from_millis(300);

/// `resumed-own-stream`: the judged GET resumes the first request step's
/// SSE stream from its first event id (`Last-Event-ID`); the second step's
/// stream is the one it must not replay. A server that answered with JSON,
/// put no id on its events (resumability is a MAY), or opened no stream for
/// the GET has nothing to judge: the case does not apply.
pub(super) async fn resumed_get(
    client: &mut Client,
    plan: &CasePlan,
    streams: &[Exchange],
) -> (Exchange, Option<mcperr_oracle::checks::Resumption>) {
    let not_applicable = |why: String| {
        let ex = Exchange::bare(Value::Null, Ending::NotApplicable(why));
        (ex, None)
    };
    let sse = |i: usize| {
        streams
            .get(i)
            .and_then(|s| s.http.as_ref())
            .filter(|a| a.sse)
    };
    if let Some(why) = unresumable(streams.first()) {
        return not_applicable(why);
    }
    let (Some(first), Some(second)) = (sse(0), sse(1)) else {
        return not_applicable(NO_STREAMS.into());
    };
    let last = first.event_ids[0].clone();
    let mut shaped = plan.clone();
    if let Some(http) = shaped.http.as_mut() {
        http.overrides
            .push(("Last-Event-ID".into(), Some(last.clone())));
    }
    let mut ex = shaped_exchange(client, &shaped).await;
    // What the first stream carried, replayed, is redelivered, not new: no
    // stray (its progress after its response, say).
    ex.strays
        .retain(|s| !s.message().is_some_and(|m| first.messages.contains(m)));
    if let Some(answer) = ex.http.as_ref().filter(|a| !a.sse) {
        let why = format!(
            "the GET with Last-Event-ID {last:?} resumed no stream (HTTP {})",
            answer.status
        );
        ex.ending = Ending::NotApplicable(why);
    }
    let resumption = mcperr_oracle::checks::Resumption {
        last_event_id: last,
        other_id: streams[1].request.get("id").cloned().unwrap_or(Value::Null),
        other: second.messages.clone(),
    };
    (ex, Some(resumption))
}

const NO_STREAMS: &str =
    "the server answered the case's requests without SSE streams, so there is no stream to resume";

/// Why the first request step's answer leaves `resumed-own-stream` nothing
/// to resume, known as soon as it is in (the second step need not be sent):
/// it came without an SSE stream, or its events carry no id.
pub(super) fn unresumable(first: Option<&Exchange>) -> Option<String> {
    let Some(first) = first.and_then(|s| s.http.as_ref()).filter(|a| a.sse) else {
        return Some(NO_STREAMS.into());
    };
    first.event_ids.is_empty().then(|| {
        "the server's SSE events carry no id, so no stream can be resumed (resumability is a MAY)"
            .into()
    })
}

pub(super) fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

/// An HTTP body kept in a report: its first 4,000 characters.
pub(super) fn clip_body(body: &str) -> String {
    const MAX: usize = 4000;
    match body.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}… ({} bytes in all)", &body[..at], body.len()),
        None => body.to_string(),
    }
}

/// Whether an answer is an `isError` result (not a JSON-RPC error).
pub(super) fn is_error_result(response: Option<&Value>) -> bool {
    response.and_then(|r| mcperr_wire::edges::at(r, &["result", "isError"]))
        == Some(&Value::Bool(true))
}

/// An answer in a few words, for the message of a skipped valid call.
pub(super) fn short_answer(response: Option<&Value>) -> String {
    let Some(r) = response else {
        return "no answer".into();
    };
    let text = clip(&mcperr_cases::expect::answer_text(r));
    match r.pointer("/error/code") {
        Some(c) => format!("error {c} {text:?}"),
        None => format!("isError {text:?}"),
    }
}
