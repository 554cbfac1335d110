//! Signal handling for `run` and `list`: servers run in their own process
//! groups, so mcperr must stop them itself when it is interrupted.

/// On SIGINT or SIGTERM (Ctrl-C, a cancelled CI job) every server process
/// group mcperr started is killed before it exits: servers run in their own
/// groups, so the signal would not reach them otherwise.
pub(crate) fn stop_servers_on_signals() {
    on_signals(None)
}

/// For a fuzz campaign: the first SIGINT or SIGTERM stops the campaign
/// (no new requests, no shrinking; the summary and reports are still
/// written); a second one stops the servers and exits at once.
pub(crate) fn stop_campaign_on_signals(stats: std::sync::Arc<crate::fuzz::Stats>) {
    on_signals(Some(stats))
}

fn on_signals(campaign: Option<std::sync::Arc<crate::fuzz::Stats>>) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    return;
                };
                let _ = ready_tx.send(());
                if let Some(stats) = campaign {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    };
                    stats.stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    eprintln!("mcperr: stopping the campaign (again to quit at once)");
                }
                let code = tokio::select! {
                    _ = int.recv() => 130,
                    _ = term.recv() => 143,
                };
                crate::transport::stdio::kill_all_servers();
                eprintln!("mcperr: interrupted; stopped the servers under test");
                std::process::exit(code);
            }
        });
    });
    // No server starts before the handlers are in place. This cannot hang:
    // the thread either sends, or drops the sender when it gives up.
    let _ = ready_rx.recv();
}
