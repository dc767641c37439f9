//! The accept loop. We own it (instead of `axum::serve`) for three reasons: `TCP_NODELAY` on
//! every accepted socket (with Nagle on, small SSE and JSON-RPC answers wait ~40 ms for the
//! peer's delayed ACK), hyper's header-read timeout needs a timer to fire at all (a slow or
//! idle client is otherwise held open forever), and graceful shutdown in two phases.
//!
//! Shutdown, once the `shutdown` future resolves:
//! 1. **Drain** (at most `shutdown_grace_secs`): the state's `draining` token is cancelled
//!    (`/readyz` reports DOWN) and the chat engine refuses new answers (`POST /chat/stream` →
//!    503 `shutting_down` with `Retry-After`). Connections are still accepted and served: the
//!    answers in flight call tools on our own `/mcp` over loopback and wait for people's
//!    approval decisions, and both may need a new connection. MCP sessions stay up. The drain
//!    ends as soon as no answer is in flight, or at once when the state's `end_drain` token is
//!    cancelled (the binary does on a second signal).
//! 2. **Cancel** (bounded): the listener is closed; answers still running are cancelled and save
//!    what they produced (their clients get `error` `shutting_down`, then `done`; an approval
//!    they wait for is recorded as cancelled) within [`CANCEL_SAVE_TIMEOUT`]; the state's
//!    `shutdown` token is cancelled (SSE streams, `/mcp` sessions, background tasks wind
//!    down); open connections finish their request and close, within what is left of the
//!    grace but never less than [`CLOSE_WINDOW_MIN`] (only that after `end_drain`). The caller
//!    then closes the MCP client's sessions (stdio children included) and the store.

use crate::app::app;
use crate::config::ServerConfig;
use crate::connection_limits::{ConnectionLimits, FirstRequest};
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
use switchboard_chat::ChatService;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long to back off after an accept error such as EMFILE before trying again.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(100);
/// Connections closed by the accept loop, by `reason` (`max_connections`,
/// `max_connections_per_peer`, `no_request_in_time`).
pub const CONNECTIONS_REFUSED_TOTAL: &str = "http_connections_refused_total";
/// How often the Prometheus recorder drains histogram samples.
const METRICS_UPKEEP_INTERVAL: Duration = Duration::from_secs(5);
/// Phase 2: how long answers cancelled at the end of the drain get to save what they produced
/// (a few writes each; this bounds a store that stopped answering).
pub const CANCEL_SAVE_TIMEOUT: Duration = Duration::from_secs(5);
/// Phase 2: connections get at least this long to send their last bytes (the `error` and
/// `done` events of cancelled answers) even when the drain used the whole grace.
pub const CLOSE_WINDOW_MIN: Duration = Duration::from_secs(1);

/// Serves [`app`]`(state)` on `listener` until `shutdown` resolves, then drains the chat
/// engine's answers and stops (see module doc).
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
    let work = InFlightWork {
        draining: state.draining.clone(),
        end_drain: state.end_drain.clone(),
        chat: state.chat.clone(),
    };
    serve_in_phases(
        listener,
        app(state),
        &config,
        shutdown_token,
        work,
        shutdown,
    )
    .await
}

/// The accept loop over any router, without a chat engine to drain: [`run`] is the same loop
/// with [`app`]; tests use this one to add routes (a deliberately slow handler) around the
/// real stack. When `shutdown` resolves, in-flight requests get `shutdown_grace_secs`.
pub async fn serve_router(
    listener: TcpListener,
    router: Router,
    config: &ServerConfig,
    shutdown_token: CancellationToken,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let work = InFlightWork {
        draining: CancellationToken::new(),
        end_drain: CancellationToken::new(),
        chat: None,
    };
    serve_in_phases(listener, router, config, shutdown_token, work, shutdown).await
}

/// Serves the MCP Apps sandbox origin ([`crate::apps::router`]) on `listener` until the
/// state's `shutdown` token is cancelled (phase 2 of the main listener's shutdown).
pub async fn run_apps(listener: TcpListener, state: AppState) -> std::io::Result<()> {
    let config = state.config.as_ref().clone();
    let stop = state.shutdown.clone();
    let router = crate::apps::router(state);
    serve_router(
        listener,
        router,
        &config,
        stop.child_token(),
        stop.cancelled_owned(),
    )
    .await
}

/// What phase 1 waits for and phase 2 cancels.
struct InFlightWork {
    /// Cancelled when the drain starts (`/readyz` reads it).
    draining: CancellationToken,
    /// Cancelled to stop draining before the grace is over.
    end_drain: CancellationToken,
    chat: Option<ChatService>,
}

impl InFlightWork {
    fn begin_drain(&self) -> usize {
        self.draining.cancel();
        match &self.chat {
            Some(chat) => {
                chat.refuse_new_answers();
                chat.answers_in_flight()
            }
            None => 0,
        }
    }

    async fn finished(&self) {
        if let Some(chat) = &self.chat {
            chat.answers_finished().await;
        }
    }

    fn answers_in_flight(&self) -> usize {
        self.chat.as_ref().map_or(0, ChatService::answers_in_flight)
    }

    async fn cancel_the_rest(&self) {
        if let Some(chat) = &self.chat {
            chat.shutdown(CANCEL_SAVE_TIMEOUT).await;
        }
    }
}

async fn serve_in_phases(
    listener: TcpListener,
    router: Router,
    config: &ServerConfig,
    shutdown_token: CancellationToken,
    work: InFlightWork,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let connections = Connections::new(router, config);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => connections.serve(accepted).await,
            () = &mut shutdown => break,
        }
    }

    let grace = config.shutdown_grace();
    let deadline = Instant::now() + grace;
    let in_flight = work.begin_drain();
    tracing::info!(
        answers_in_flight = in_flight,
        grace_secs = grace.as_secs(),
        "shutting down: draining (new answers refused, /readyz DOWN; answers in flight may finish)"
    );
    let finished = work.finished();
    tokio::pin!(finished);
    let drained = loop {
        tokio::select! {
            () = &mut finished => break true,
            () = tokio::time::sleep_until(deadline) => break false,
            () = work.end_drain.cancelled() => break false,
            accepted = listener.accept() => connections.serve(accepted).await,
        }
    };

    drop(listener);
    if drained {
        tracing::info!("shutting down: no answer in flight; no longer accepting connections");
    } else {
        tracing::warn!(
            answers_in_flight = work.answers_in_flight(),
            grace_secs = grace.as_secs(),
            ended_early = work.end_drain.is_cancelled(),
            "shutting down: the drain is over; cancelling the answers still running (what they produced is saved)"
        );
    }
    work.cancel_the_rest().await;
    shutdown_token.cancel();
    // Hurried by `end_drain`, connections get only the minimum; otherwise the rest of the grace.
    let close_within = if work.end_drain.is_cancelled() {
        CLOSE_WINDOW_MIN
    } else {
        deadline
            .saturating_duration_since(Instant::now())
            .max(CLOSE_WINDOW_MIN)
    };
    match tokio::time::timeout(close_within, connections.graceful.shutdown()).await {
        Ok(()) => tracing::info!("all connections closed"),
        Err(_) => tracing::warn!(
            grace_secs = grace.as_secs(),
            "connections still open after the shutdown grace period; exiting anyway"
        ),
    }
    Ok(())
}

/// Serves accepted sockets and tracks them for the graceful close.
struct Connections {
    builder: auto::Builder<TokioExecutor>,
    router: Router,
    graceful: GracefulShutdown,
    limits: ConnectionLimits,
    /// A connection's first request must reach the service within this (see
    /// `connection_limits`): it covers the HTTP/1-vs-HTTP/2 detection and the HTTP/2 handshake,
    /// which hyper's own header-read timeout does not.
    first_request_timeout: Duration,
}

impl Connections {
    fn new(router: Router, config: &ServerConfig) -> Self {
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
        Self {
            builder,
            router,
            graceful: GracefulShutdown::new(),
            limits: ConnectionLimits::new(config.max_connections, config.max_connections_per_peer),
            first_request_timeout: config.header_read_timeout(),
        }
    }

    async fn serve(&self, accepted: std::io::Result<(TcpStream, SocketAddr)>) {
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "accept failed; backing off");
                tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await;
                return;
            }
        };
        let slot = match self.limits.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(refusal) => {
                // Dropping the stream closes it; nothing has been read.
                metrics::counter!(CONNECTIONS_REFUSED_TOTAL, "reason" => refusal.as_str())
                    .increment(1);
                tracing::debug!(%peer, limit = refusal.as_str(), "connection refused: too many open");
                return;
            }
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, %peer, "could not set TCP_NODELAY");
        }
        let first_request = FirstRequest::default();
        let seen = first_request.clone();
        let service =
            self.router
                .clone()
                .map_request(move |mut request: axum::extract::Request<_>| {
                    seen.arrived();
                    request
                        .extensions_mut()
                        .insert(ConnectInfo::<SocketAddr>(peer));
                    request
                });
        let connection = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let connection = self.graceful.watch(connection);
        let first_request_timeout = self.first_request_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            tokio::pin!(connection);
            let result = tokio::select! {
                result = &mut connection => result,
                () = tokio::time::sleep(first_request_timeout) => {
                    if !first_request.has_arrived() {
                        metrics::counter!(CONNECTIONS_REFUSED_TOTAL, "reason" => "no_request_in_time")
                            .increment(1);
                        tracing::debug!(%peer, "connection closed: no request within the header-read timeout");
                        return; // dropping the connection closes the socket
                    }
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, error = %error, "connection closed with an error");
            }
        });
    }
}
