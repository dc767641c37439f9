//! An axum router served on 127.0.0.1 for the life of a test: the fakes of hosted services
//! (`fake_openai`, `fake_anthropic`) share this binding, serving and shutdown on drop, so each
//! fake is only its routes and its script.

use std::net::SocketAddr;

use axum::Router;
use tokio::sync::oneshot;

/// A router listening on 127.0.0.1 at an ephemeral port; dropping it stops the server.
#[derive(Debug)]
pub struct LocalServer {
    address: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl LocalServer {
    /// Binds 127.0.0.1:0 and serves `app` in a task; `what` names the fake in a bind failure.
    pub async fn start(app: Router, what: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|error| panic!("bind 127.0.0.1:0 for {what}: {error}"));
        let address = listener.local_addr().expect("local address");
        let (shutdown, shutdown_signal) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = shutdown_signal.await;
                })
                .await;
        });
        Self {
            address,
            shutdown: Some(shutdown),
        }
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
