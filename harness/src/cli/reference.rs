//! `mcperr reference`: the reference server on stdio or Streamable HTTP.

use std::io;
use std::time::Duration;

use mcperr_reference::auth::AuthConfig;
use mcperr_reference::http_edge::HttpConfig;
use mcperr_reference::{stdio, Fault, Handler};

use super::{runtime, ReferenceArgs, EXIT_USAGE};

/// Serves until EOF (stdio) or forever (HTTP); returns the exit code.
pub(crate) fn main(args: ReferenceArgs) -> i32 {
    if args.list_faults {
        for f in Fault::ALL {
            println!("{:<28} {:<4} {}", f.name(), f.rule(), f.description());
        }
        return 0;
    }
    if let Some(addr) = &args.http {
        return reference_http(addr, &args);
    }
    let handler = Handler::new(args.fault);
    match stdio::serve(
        &handler,
        io::stdin(),
        io::stdout().lock(),
        io::stderr().lock(),
    ) {
        Ok(stdio::Stop::Eof) => 0,
        Ok(stdio::Stop::FaultExit) => 1,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("mcperr reference: i/o error: {e}");
            1
        }
    }
}

fn reference_http(addr: &str, args: &ReferenceArgs) -> i32 {
    let config = HttpConfig {
        sse: args.sse,
        max_body: args.max_body,
        max_sessions: 1024,
        session_idle: Duration::from_secs(600),
        allowed_hosts: vec![],
        log: true,
        auth: args.auth_token.clone().map(|token| AuthConfig {
            token,
            limited_token: args.auth_limited_token.clone(),
        }),
    };
    let result = runtime().map_err(|u| u.message()).and_then(|rt| {
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("--http {addr}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            if !bound.ip().is_loopback() {
                eprintln!("mcperr reference: warning: listening on {bound}, which is not a loopback address");
            }
            println!("http://{bound}/mcp");
            let _ = io::Write::flush(&mut io::stdout());
            mcperr_reference::http::serve(listener, args.fault, config).await.map_err(|e| e.to_string())
        })
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mcperr: error: {e}");
            EXIT_USAGE
        }
    }
}
