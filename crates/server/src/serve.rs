//! The accept loop. We own it (instead of `axum::serve`) for three reasons: `TCP_NODELAY` on
//! every accepted socket (with Nagle on, small SSE and JSON-RPC answers wait ~40 ms for the
//! peer's delayed ACK), hyper's header-read timeout needs a timer to fire at all (a slow or
//! idle client is otherwise held open forever), and graceful shutdown with a cap.
//!
//! Shutdown: when the `shutdown` future resolves we stop accepting, cancel the state's
//! shutdown token (SSE streams and sessions wind down), let in-flight requests finish, and give
//! up after `shutdown_grace_secs`.

use crate::app::app;
use crate::config::ServerConfig;
use crate::state::AppState;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long to back off after an accept error such as EMFILE before trying again.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(100);
/// How often the Prometheus recorder drains histogram samples.
const METRICS_UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// Serves [`app`]`(state)` on `listener` until `shutdown` resolves, then drains (see module doc).
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let config = state.config.as_ref().clone();
    let shutdown_token = state.shutdown.clone();
    let metrics = state.metrics.clone();
    let upkeep_token = shutdown_token.clone();
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(METRICS_UPKEEP_INTERVAL);
        loop {
            tokio::select! {
                _ = interval.tick() => metrics.run_upkeep(),
                () = upkeep_token.cancelled() => break,
            }
        }
    });
    serve_router(listener, app(state), &config, shutdown_token, shutdown).await
}

/// The accept loop over any router: [`run`] uses it with [`app`]; tests use it to add routes
/// (a deliberately slow handler) around the real stack.
pub async fn serve_router(
    listener: TcpListener,
    router: Router,
    config: &ServerConfig,
    shutdown_token: CancellationToken,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout());
    builder
        .http2()
        .timer(TokioTimer::new())
        // HTTP/2 has no header-read idle timer; ping on the same period to find dead peers.
        .keep_alive_interval(Some(config.header_read_timeout()));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed; backing off");
                    tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, %peer, "could not set TCP_NODELAY");
        }
        let service = router
            .clone()
            .map_request(move |mut request: axum::extract::Request<_>| {
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                request
            });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, error = %error, "connection closed with an error");
            }
        });
    }
    drop(listener);
    tracing::info!("shutting down: no longer accepting connections");
    shutdown_token.cancel();
    let grace = config.shutdown_grace();
    match tokio::time::timeout(grace, graceful.shutdown()).await {
        Ok(()) => tracing::info!("all connections closed"),
        Err(_) => tracing::warn!(
            grace_secs = grace.as_secs(),
            "connections still open after the shutdown grace period; exiting anyway"
        ),
    }
    Ok(())
}
