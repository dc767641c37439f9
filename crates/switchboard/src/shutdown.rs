//! The process's stop signals: the first SIGINT (Ctrl-C) or SIGTERM starts the shutdown's drain;
//! a second one ends the drain at once (what is still running is cancelled and saved).

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// SIGINT and SIGTERM, listened to for the life of the process.
pub struct StopSignals {
    interrupt: Option<Signal>,
    terminate: Option<Signal>,
}

impl StopSignals {
    /// Starts listening (from here on neither signal kills the process by default).
    pub fn listen() -> Self {
        let listen = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(stream) => Some(stream),
            Err(error) => {
                tracing::error!(%error, "cannot listen for {name}");
                None
            }
        };
        Self {
            interrupt: listen(SignalKind::interrupt(), "SIGINT"),
            terminate: listen(SignalKind::terminate(), "SIGTERM"),
        }
    }

    /// Resolves on the next SIGINT or SIGTERM; returns its name.
    pub async fn next(&mut self) -> &'static str {
        async fn receive(stream: &mut Option<Signal>) {
            let received = match stream {
                Some(stream) => stream.recv().await.is_some(),
                None => false,
            };
            if !received {
                std::future::pending::<()>().await;
            }
        }
        tokio::select! {
            () = receive(&mut self.interrupt) => "SIGINT",
            () = receive(&mut self.terminate) => "SIGTERM",
        }
    }

    /// The shutdown future for `switchboard_server::run`: resolves on the first signal, then
    /// cancels `end_drain` on a second one.
    pub async fn first_then_end_drain_on_second(mut self, end_drain: CancellationToken) {
        let received = self.next().await;
        tracing::info!("{received} received: draining (a second signal stops at once)");
        tokio::spawn(async move {
            let received = self.next().await;
            tracing::warn!("{received} received again: ending the drain now");
            end_drain.cancel();
        });
    }
}
