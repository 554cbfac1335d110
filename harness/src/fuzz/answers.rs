//! Each line the server writes during a pipelined campaign, matched to the
//! request it answers (by id; an id-less error claimed by the request it can
//! only be the answer to), judged, and its slot freed; a request never
//! answered, skipped, or answered over the line cap.

use std::sync::atomic::Ordering;
use std::time::Duration;

use mcperr_cases::fuzz::Class;
use mcperr_protocol::Era;
use mcperr_wire::exchange::{Ending, Exchange, Stray};
use mcperr_wire::reassemble::Read;
use serde_json::Value;

use super::pipe::{lane_of, remember, Pending, Pipe, MAX_STRAGGLERS};
use super::probe::{count_in, count_params};
use super::worker::Worker;
use crate::client::is_response;
use mcperr_wire::lines::OverLong;

/// A request unanswered while the server answered later ones: dropped from
/// the window, its slot freed. It waits for a late answer up to `--slow-ms`
/// (one that breaks its own params, in a prompt lane, `--timeout-ms`:
/// [`Pipe::straggler_due`]) unless its lane is hung (one of its requests
/// had that wait in vain): then it is judged never answered (J4) at once.
pub(super) fn skipped(w: &mut Worker<'_>, pipe: &mut Pipe, key: &str) {
    let Some(p) = pipe.take(key) else {
        return;
    };
    let lane = lane_of(&p.input);
    // A hung lane's drops are judged at once; any other waits out of the
    // window, at least the timeout (a drop by the grace alone is no
    // verdict: a concurrent server may answer out of order), unless the
    // same broken params were found never answered in its lane already.
    let wait = !pipe.hung_lanes.contains(&lane) && pipe.stragglers.len() < MAX_STRAGGLERS;
    if wait {
        *pipe.lanes.entry(lane).or_default() += 1;
        pipe.stragglers.insert(key.to_string(), p);
        return;
    }
    remember(&mut pipe.late, key.to_string());
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    never_answered(w, p);
}

/// Whose answer an error without an id (absent or null) is.
pub(super) enum Claim {
    /// A request in flight (its key), and whether other requests of the
    /// same kind were in flight too: then the claim is a guess.
    Request(String, bool),
    /// A lone-surrogate request already dropped in silence.
    Silenced,
    /// Nobody's: a stray.
    Nobody,
}

/// An error without an id answers input the server could not read, or read
/// without its id: the oldest request in flight of the kind the error's
/// code points to. `-32600` (not a valid Request object) points to a broken
/// envelope first (rmcp answers params given as an array so, id-less);
/// anything else (`-32700` for a line it could not decode) to a lone
/// surrogate first (a parser may refuse it, RFC 8259 §8.2), in flight or
/// already dropped in silence. Then an id beyond a double, unless the server
/// has echoed one (the RFC 8259 §6 policy judges it, edges::big_id). Claimed,
/// it is judged as that request's answer (J1 error-id) at once, not left to
/// wait out the drop grace, and never taken later for the answer of a
/// lockstep request that follows. A broken envelope already out of the
/// window (a straggler, a provisional J4) is claimed before those in it.
pub(super) fn claim_idless(pipe: &mut Pipe, value: &Value) -> Claim {
    let oldest = |pipe: &Pipe, kind: &dyn Fn(&Pending) -> bool| {
        let mut of_kind = pipe
            .order
            .iter()
            .filter(|k| pipe.pending.get(*k).is_some_and(kind));
        let first = of_kind.next()?;
        Some(Claim::Request(first.clone(), of_kind.next().is_some()))
    };
    let envelope = |p: &Pending| matches!(p.input.class, Class::Envelope(_));
    let surrogate = |p: &Pending| p.silent_ok;
    let big_id = |p: &Pending| mcperr_wire::edges::beyond_double(&p.msg["id"]);
    let not_a_request =
        mcperr_wire::edges::error_code(value) == Some(mcperr_protocol::codes::INVALID_REQUEST);
    // A broken envelope already out of the window (a straggler, or one
    // judged never answered for now) answered late is older than any in it:
    // answers come in order, so the refusal is its, not a stray beside a J4.
    let oldest_envelope = |pipe: &Pipe| match pipe.oldest_given_up(&envelope) {
        Some((key, more)) => Some(Claim::Request(
            key,
            more || oldest(pipe, &envelope).is_some(),
        )),
        None => oldest(pipe, &envelope),
    };
    if not_a_request {
        if let Some(claim) = oldest_envelope(pipe) {
            return claim;
        }
    }
    if let Some(claim) = oldest(pipe, &surrogate) {
        return claim;
    }
    if pipe.surrogates.pop_front().is_some() {
        return Claim::Silenced;
    }
    if !pipe.big_ids_held {
        if let Some(claim) = oldest(pipe, &big_id) {
            return claim;
        }
    }
    oldest_envelope(pipe).unwrap_or(Claim::Nobody)
}

/// Judges a request that was never answered while others were (J4).
pub(super) fn never_answered(w: &mut Worker<'_>, p: Pending) {
    let waited = p.sent.elapsed();
    never_answered_within(w, p, waited);
}

/// As [`never_answered`], for a request judged so after `waited` and
/// recorded later (a provisional J4 settled when the campaign ended): its
/// J4 states the wait that judged it.
pub(super) fn never_answered_within(w: &mut Worker<'_>, p: Pending, waited: Duration) {
    let ex = Exchange {
        request: p.msg,
        ending: Ending::Timeout,
        strays: vec![],
        duration: waited,
        http: None,
    };
    w.judge_and_record_alive(&p.input, &ex, None, true);
}

/// One line from the server, with its value if the transport decoded it
/// already. Returns true when the pipe must drain (an answer with an id
/// nobody sent).
pub(super) fn answer(
    w: &mut Worker<'_>,
    pipe: &mut Pipe,
    bytes: &[u8],
    decoded: Option<Value>,
) -> bool {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return false;
    }
    // The one reading of a line a case gets too ([`Reassembler`]): a
    // message split over lines, or not UTF-8, is read and named.
    let value = match decoded {
        Some(v @ Value::Object(_)) => v,
        _ => match pipe.reader.feed(bytes) {
            Read::Message(v, found) => {
                if !found.is_empty() {
                    w.record_strays(found);
                }
                v
            }
            Read::Strays(found) => {
                w.record_strays(found);
                return false;
            }
            Read::Held => return false,
        },
    };
    if !is_response(&value) {
        // A server-to-client request or notification: judged only where it
        // carries an id.
        if let Some(s) = Stray::of_server_message(&value) {
            w.record_strays(vec![s]);
        }
        return false;
    }
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let mut key = id.to_string();
    if pipe.alive.as_ref().is_some_and(|(k, _, _)| *k == key) {
        alive_answered(w, pipe);
        return false;
    }
    if pipe.counting.as_ref().is_some_and(|(k, _, _)| *k == key) {
        count_answered(w, pipe, &value);
        return false;
    }
    let mut guessed = false;
    if id.is_null() && value.get("error").is_some() {
        match claim_idless(pipe, &value) {
            Claim::Request(k, guess) => (key, guessed) = (k, guess),
            Claim::Silenced => return false,
            Claim::Nobody => {}
        }
    }
    if let Some(p) = pipe.unstraggle(&key) {
        straggler_answered(w, pipe, p, value, guessed);
        return false;
    }
    let Some(p) = pipe.take(&key) else {
        // A request judged never answered after the short wait, answered
        // after all while the campaign runs: slow, its J4 withdrawn.
        if let Some(p) = pipe.take_provisional(&key) {
            straggler_answered(w, pipe, p, value, guessed);
            return false;
        }
        if id.is_null() {
            w.record_strays(vec![Stray::NullIdResponse(value)]);
        } else if let Some(i) = pipe.surrogates.iter().position(|k| *k == key) {
            pipe.surrogates.remove(i);
        } else if let Some(k) = pipe.tied_to(&id) {
            wrong_id(w, pipe, &k, value);
        } else if !pipe.late.contains(&key) {
            pipe.unknown += 1;
            return true;
        }
        return false;
    };
    pipe.answered_sent = pipe.answered_sent.max(Some(p.sent));
    // Its own id echoed (not an id-less error claimed for it).
    pipe.big_ids_held |= mcperr_wire::edges::beyond_double(&id);
    pipe.latency.observe(p.sent.elapsed());
    // Only a request that breaks its params reads its lane's promptness,
    // and a tool's valid calls show whether its body is prompt.
    let prompt = p.sent.elapsed() <= w.settings.run.timeout;
    match p.input.class {
        Class::Envelope(_) if prompt => {
            pipe.prompt_lanes.insert(lane_of(&p.input));
        }
        Class::ValidCall if prompt => {
            pipe.prompt_bodies.insert(p.input.target.clone());
        }
        _ => {}
    }
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ok = value
        .get("result")
        .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true)));
    if ok && w.is_counted_call(&p.input) && p.input.class == Class::ValidCall {
        w.valid_ok += 1;
    }
    let ex = Exchange {
        request: p.msg,
        ending: Ending::Answered(value),
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record_claimed(&p.input, &ex, guessed);
    false
}

/// The liveness probe answered: what was sent before it and is overdue
/// was skipped.
fn alive_answered(w: &mut Worker<'_>, pipe: &mut Pipe) {
    let Some((_, probe_sent, _)) = pipe.alive.take() else {
        return;
    };
    pipe.answered_sent = pipe.answered_sent.max(Some(probe_sent));
    let timeout = w.settings.run.timeout;
    let overdue: Vec<String> = pipe
        .order
        .iter()
        .filter(|k| {
            pipe.pending
                .get(*k)
                .is_some_and(|p| !p.silent_ok && p.sent < probe_sent && p.sent.elapsed() >= timeout)
        })
        .cloned()
        .collect();
    for k in overdue {
        skipped(w, pipe, &k);
    }
}

/// `limited_calls` answered: a count that rose by more than the valid
/// calls that succeeded since the last one means an invalid call ran.
fn count_answered(w: &mut Worker<'_>, pipe: &mut Pipe, value: &Value) {
    let Some((_, _, valid)) = pipe.counting.take() else {
        return;
    };
    match (count_in(value), w.last_count) {
        (Some(now), Some(before)) if now > before + valid => {
            w.suspect(&mut pipe.checking);
            w.last_count = Some(now);
            w.valid_ok -= valid.min(w.valid_ok);
        }
        (Some(now), _) => {
            w.last_count = Some(now);
            w.valid_ok -= valid.min(w.valid_ok);
            pipe.checking.clear();
        }
        _ => {}
    }
}

/// A dropped request answered after all: late, and its lane slow if past
/// the timeout.
fn straggler_answered(
    w: &mut Worker<'_>,
    pipe: &mut Pipe,
    p: Pending,
    value: Value,
    guessed: bool,
) {
    let lane = lane_of(&p.input);
    let took = p.sent.elapsed();
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ex = Exchange {
        request: p.msg,
        ending: Ending::Answered(value),
        strays: vec![],
        duration: took,
        http: None,
    };
    let timeout = w.settings.run.timeout;
    if took > timeout && pipe.slow_lanes.insert(lane) {
        w.record_slow(&p.input, &ex, took, timeout);
    }
    w.judge_and_record_claimed(&p.input, &ex, guessed);
}

/// An answer whose id is the wrong one but a known transformation of the
/// id of request `key` (the sign dropped, wrapped to 32 bits, rounded…):
/// that request's answer, judged as such (J1 for the id; never another
/// request's answer), its slot freed.
fn wrong_id(w: &mut Worker<'_>, pipe: &mut Pipe, key: &str, value: Value) {
    let taken = pipe.take(key).or_else(|| pipe.unstraggle(key));
    let Some(p) = taken.or_else(|| pipe.take_provisional(key)) else {
        return;
    };
    remember(&mut pipe.late, key.to_string());
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ex = Exchange {
        request: p.msg,
        ending: Ending::WrongId(value),
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record(&p.input, &ex, None);
}

/// A line over the cap: the answer to the request its id names, which ends
/// there (unread, it cannot be judged), or else a stray.
pub(super) fn too_long(w: &mut Worker<'_>, pipe: &mut Pipe, line: &OverLong) {
    let taken = line.id().and_then(|id| {
        pipe.take(&id.to_string())
            .or_else(|| pipe.unstraggle(&id.to_string()))
    });
    let Some(p) = taken else {
        w.record_strays(vec![Stray::TooLong(line.len)]);
        return;
    };
    w.settings.stats.requests.fetch_add(1, Ordering::Relaxed);
    let ex = Exchange {
        request: p.msg,
        ending: Ending::TooLarge(line.len),
        strays: vec![],
        duration: p.sent.elapsed(),
        http: None,
    };
    w.judge_and_record(&p.input, &ex, None);
}

/// A `limited_calls` call with a string id no fuzz request uses.
pub(super) fn counted_call(era: Era, n: u64) -> Value {
    let mut msg = serde_json::json!({"jsonrpc": "2.0", "id": format!("mcperr-count-{n}"), "method": "tools/call"});
    if let Some(p) = mcperr_cases::plan::params_for(era, Some(count_params()), true) {
        msg["params"] = p;
    }
    msg
}
