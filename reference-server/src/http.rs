//! The axum glue of the Streamable HTTP edge: bytes in, [`HttpEdge`]'s reply
//! out, logs to stderr. The edge routes by path ([`HttpEdge::handle_path`]):
//! the endpoint `/mcp`, a protected server's metadata, 404 for the rest.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::routing::any;
use axum::Router;

use crate::faults::Fault;
use crate::http_edge::{HttpConfig, HttpEdge, HttpReply};

async fn endpoint(
    State(edge): State<Arc<HttpEdge>>,
    uri: axum::http::Uri,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let max = edge_max(&edge);
    let reply = match to_bytes(body, max).await {
        Ok(bytes) => {
            let mut logs = Vec::new();
            let reply = edge.handle_path(uri.path(), method.as_str(), &pairs, &bytes, &mut logs);
            if edge.logs() {
                let mut err = std::io::stderr().lock();
                for record in logs {
                    let _ = writeln!(err, "{record}");
                }
            }
            reply
        }
        Err(_) => HttpReply {
            status: 413,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Payload Too Large"}}"#.to_vec(),
        },
    };
    let mut response = Response::new(Body::from(reply.body));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (k, v) in reply.headers {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
            response.headers_mut().append(k, v);
        }
    }
    response
}

fn edge_max(edge: &HttpEdge) -> usize {
    edge.max_body()
}

/// Serves the reference server over HTTP on `listener` until the process ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    fault: Option<Fault>,
    mut config: HttpConfig,
) -> std::io::Result<()> {
    let addr: SocketAddr = listener.local_addr()?;
    if config.allowed_hosts.is_empty() && addr.ip().is_loopback() {
        let port = addr.port();
        config.allowed_hosts = vec![
            addr.to_string(),
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
    }
    let edge = Arc::new(HttpEdge::new(fault, config));
    let app = Router::new().fallback(any(endpoint)).with_state(edge);
    axum::serve(listener, app).await
}
