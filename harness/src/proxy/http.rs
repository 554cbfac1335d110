//! The proxy over Streamable HTTP: the host sends its HTTP requests to the
//! proxy's listening address; each is forwarded to the server (the
//! `--upstream` URL's origin, the request's own path and query) with its
//! method, headers and body, and the server's response comes back with its
//! status, headers and body bytes as they arrive (an SSE stream is relayed
//! event by event, never buffered).
//!
//! Requests to the upstream URL's path are the MCP endpoint's: each POST is
//! an observer channel, its body the host's message(s), its response the
//! server's answer (a JSON body judged when whole, an SSE stream judged
//! event by event on a copy). A GET stream is judged for what a server may
//! send there (a response on it is stray), except when resumed with
//! `Last-Event-ID`. Other paths (OAuth metadata, say) are forwarded only.
//!
//! Headers go through unchanged except the hop-by-hop ones (RFC 9110
//! §7.6.1), `Host` (the server's own) and `Accept-Encoding` (the body must
//! be readable to be judged, so the server is asked for no compression).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, Method, StatusCode};
use axum::response::Response;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use mcperr_core::proxy::{ChannelEnd, Observer};
use mcperr_wire::exchange::HttpAnswer;
use tokio::sync::mpsc;

/// Where to listen and what to forward to.
#[derive(Debug, Clone)]
pub struct HttpProxySettings {
    /// The server's MCP endpoint (`http://host:port/path`).
    pub upstream: reqwest::Url,
    /// The longest body judged (longer ones are forwarded, not judged).
    pub max_body: usize,
    /// How long connecting to the server may take.
    pub connect_timeout: Duration,
}

/// What a proxied HTTP session saw besides the observer's findings.
pub struct RelayedHttp {
    /// The observer, with everything it saw.
    pub observer: Observer,
    /// HTTP requests forwarded.
    pub requests: u64,
    /// Requests the proxy could not forward (the server unreachable).
    pub unreachable: u64,
    /// Body bytes forwarded host → server and server → host.
    pub bytes: (u64, u64),
}

/// Shared by every connection the proxy serves.
struct Shared {
    client: reqwest::Client,
    settings: HttpProxySettings,
    /// `None` once the proxy has stopped and taken it.
    observer: Mutex<Option<Observer>>,
    /// Channel numbers; 0 is stdio's, so HTTP's start at 1.
    next_channel: AtomicU64,
    requests: AtomicU64,
    unreachable: AtomicU64,
    up: AtomicU64,
    down: AtomicU64,
}

impl Shared {
    /// Runs `f` on the observer, unless the proxy has already stopped.
    fn observe(&self, f: impl FnOnce(&mut Observer)) {
        if let Some(o) = self.observer.lock().expect("observer lock").as_mut() {
            f(o);
        }
    }
}

/// The server's base URL could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpProxyError(pub String);

/// Serves the host on `listener` until `stop` resolves, forwarding to the
/// upstream and feeding `observer`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    settings: HttpProxySettings,
    observer: Observer,
    stop: impl std::future::Future<Output = ()>,
) -> Result<RelayedHttp, HttpProxyError> {
    let client = reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .no_proxy()
        // Redirects are the host's to follow (or not), as without the proxy.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| HttpProxyError(format!("cannot build an HTTP client: {e}")))?;
    let shared = Arc::new(Shared {
        client,
        settings,
        observer: Mutex::new(Some(observer)),
        next_channel: AtomicU64::new(1),
        requests: AtomicU64::new(0),
        unreachable: AtomicU64::new(0),
        up: AtomicU64::new(0),
        down: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(shared.clone());
    // Open streams (a host's GET stream) would hold a graceful shutdown
    // forever: the proxy stops at once, as the server's own process would.
    tokio::select! {
        r = axum::serve(listener, app) => r.map_err(|e| HttpProxyError(format!("the listener failed: {e}")))?,
        _ = stop => {}
    }
    let observer = shared
        .observer
        .lock()
        .expect("observer lock")
        .take()
        .expect("taken once");
    Ok(RelayedHttp {
        observer,
        requests: shared.requests.load(Ordering::Relaxed),
        unreachable: shared.unreachable.load(Ordering::Relaxed),
        bytes: (
            shared.up.load(Ordering::Relaxed),
            shared.down.load(Ordering::Relaxed),
        ),
    })
}

/// Headers that describe one hop, not the message (RFC 9110 §7.6.1), plus
/// those the proxy sets for its own hop.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
    )
}

/// How the server's body reached the judging side.
enum Tap {
    Chunk(Bytes),
    /// The body is whole.
    Ended,
    /// The connection broke, and how.
    Failed(String),
}

/// Forwards one HTTP request and streams its response back.
async fn forward(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => return own_answer(StatusCode::BAD_REQUEST, format!("reading the request: {e}")),
    };
    shared.requests.fetch_add(1, Ordering::Relaxed);
    shared.up.fetch_add(body.len() as u64, Ordering::Relaxed);
    let upstream = &shared.settings.upstream;
    let endpoint = parts.uri.path() == upstream.path();
    let channel = shared.next_channel.fetch_add(1, Ordering::Relaxed);
    let judged = endpoint
        && match parts.method {
            Method::POST => true,
            Method::GET => !parts.headers.contains_key("last-event-id"),
            _ => false,
        };
    if judged && parts.method == Method::POST && body.len() <= shared.settings.max_body {
        shared.observe(|o| o.from_host_on(channel, &body, Instant::now()));
    }
    let resp = match send_upstream(&shared, &parts, body, channel).await {
        Ok(r) => r,
        Err(own) => return own,
    };
    let status = resp.status();
    let mut out_headers = HeaderMap::new();
    for (k, v) in resp.headers() {
        if !hop_by_hop(k) {
            out_headers.append(k.clone(), v.clone());
        }
    }
    let head = HttpAnswer::head(
        status.as_u16(),
        crate::transport::http::header_pairs(resp.headers()),
    );
    let (tap, taps) = mpsc::unbounded_channel();
    if judged {
        tokio::spawn(judge_body(shared.clone(), channel, head, taps));
    }
    let relayed = teed(resp, tap, shared.clone());
    let mut response = Response::new(Body::from_stream(relayed));
    *response.status_mut() = status;
    *response.headers_mut() = out_headers;
    response
}

/// The host's request, sent on to the server at the same path and query
/// with its end-to-end headers; when the server cannot be reached, the
/// channel ends broken and the host gets the proxy's own 502.
async fn send_upstream(
    shared: &Arc<Shared>,
    parts: &axum::http::request::Parts,
    body: Bytes,
    channel: u64,
) -> Result<reqwest::Response, Response> {
    let upstream = &shared.settings.upstream;
    let mut url = upstream.clone();
    url.set_path(parts.uri.path());
    url.set_query(parts.uri.query());
    let mut headers = HeaderMap::new();
    for (k, v) in &parts.headers {
        if !hop_by_hop(k) && k != "accept-encoding" && k != "content-length" {
            headers.append(k.clone(), v.clone());
        }
    }
    let sent = shared
        .client
        .request(parts.method.clone(), url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    sent.map_err(|e| {
        shared.unreachable.fetch_add(1, Ordering::Relaxed);
        let why = describe(&e);
        shared.observe(|o| {
            o.end_channel(
                channel,
                &HttpAnswer::default(),
                ChannelEnd::Broken(format!("the server could not be reached: {why}")),
                Instant::now(),
            )
        });
        own_answer(
            StatusCode::BAD_GATEWAY,
            format!("the server at {upstream} could not be reached: {why}"),
        )
    })
}

/// The server's bytes as they come, a copy of each to the judge; the end
/// (whole, or broken) is told to it too. Dropped by the host first: the
/// judge sees the copies stop without an end.
fn teed(
    resp: reqwest::Response,
    tap: mpsc::UnboundedSender<Tap>,
    counted: Arc<Shared>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    // With a Content-Length the host's side stops reading at the last byte
    // and never asks for the end: the body is whole when that many came.
    let length = resp.content_length();
    let upstream_body = resp.bytes_stream();
    // Whether the judge was told the end.
    let told = length == Some(0);
    if told {
        let _ = tap.send(Tap::Ended);
    }
    futures_util::stream::unfold(
        (upstream_body, Some(tap), 0u64, told),
        move |(mut body, tap, got, mut told)| {
            let counted = counted.clone();
            async move {
                let tap = tap?;
                match body.next().await {
                    Some(Ok(chunk)) => {
                        let got = got + chunk.len() as u64;
                        counted
                            .down
                            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
                        let _ = tap.send(Tap::Chunk(chunk.clone()));
                        if !told && length.is_some_and(|n| got >= n) {
                            told = true;
                            let _ = tap.send(Tap::Ended);
                        }
                        Some((
                            Ok::<Bytes, std::io::Error>(chunk),
                            (body, Some(tap), got, told),
                        ))
                    }
                    Some(Err(e)) => {
                        let why = describe(&e);
                        let _ = tap.send(Tap::Failed(why.clone()));
                        Some((Err(std::io::Error::other(why)), (body, None, got, told)))
                    }
                    None => {
                        if !told {
                            let _ = tap.send(Tap::Ended);
                        }
                        None
                    }
                }
            }
        },
    )
}

/// Judges the copy of one response's body: SSE event by event as it
/// comes, a JSON body once whole; then ends the channel as the body ended.
async fn judge_body(
    shared: Arc<Shared>,
    channel: u64,
    head: HttpAnswer,
    mut taps: mpsc::UnboundedReceiver<Tap>,
) {
    let max = shared.settings.max_body;
    let end: Arc<Mutex<ChannelEnd>> = Arc::new(Mutex::new(ChannelEnd::Abandoned));
    let told = end.clone();
    // The copies as a byte stream that stops at the end, the end kept.
    let chunks =
        futures_util::stream::poll_fn(move |cx| taps.poll_recv(cx)).scan((), move |_, tap| {
            std::future::ready(match tap {
                Tap::Chunk(b) => Some(Ok::<Vec<u8>, std::convert::Infallible>(b.to_vec())),
                Tap::Ended => {
                    *told.lock().expect("end lock") = ChannelEnd::Complete;
                    None
                }
                Tap::Failed(why) => {
                    *told.lock().expect("end lock") =
                        ChannelEnd::Broken(format!("the connection to the server broke: {why}"));
                    None
                }
            })
        });
    if head.sse {
        let mut events = Box::pin(mcperr_wire::sse::without_bom(chunks).eventsource());
        let mut seen = 0usize;
        while let Some(event) = events.next().await {
            let Ok(e) = event else {
                break; // a malformed stream: what follows is not judged
            };
            seen += e.data.len();
            if seen > max {
                continue; // forwarded, past what is judged
            }
            shared.observe(|o| o.sse_event(channel, &e.event, &e.data, &head, Instant::now()));
        }
        let end = end.lock().expect("end lock").clone();
        shared.observe(|o| o.end_channel(channel, &head, end, Instant::now()));
    } else {
        let mut chunks = Box::pin(chunks);
        let mut body = Vec::new();
        let mut over = false;
        while let Some(Ok(c)) = chunks.next().await {
            over |= body.len() + c.len() > max;
            if !over {
                body.extend_from_slice(&c);
            }
        }
        let mut end = end.lock().expect("end lock").clone();
        if over {
            end = ChannelEnd::Abandoned; // forwarded whole, too long to judge
        }
        let now = Instant::now();
        shared.observe(|o| match end {
            ChannelEnd::Complete => {
                let mut answer = head;
                answer.body = String::from_utf8_lossy(&body).into_owned();
                o.http_body(channel, answer, now)
            }
            other => o.end_channel(channel, &head, other, now),
        });
    }
}

/// An answer from the proxy itself (never from the server), marked so.
fn own_answer(status: StatusCode, why: String) -> Response {
    let mut r = Response::new(Body::from(format!("mcperr proxy: {why}\n")));
    *r.status_mut() = status;
    r.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// A reqwest error with its causes, as `mcperr run --http` words it.
fn describe(e: &reqwest::Error) -> String {
    crate::transport::http::describe(e).to_string()
}
