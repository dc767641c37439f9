//! How Switchboard reaches an upstream MCP server, and how long a session lives.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The wire an upstream speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP (protocol 2025-03-26 and later, including stateless 2026-07-28).
    StreamableHttp,
    /// Legacy HTTP+SSE (protocol 2024-11-05): GET an event stream, POST to its `endpoint`.
    Sse,
    /// JSON-RPC messages as WebSocket text frames.
    Websocket,
}

impl TransportKind {
    pub const ALL: [TransportKind; 4] = [
        TransportKind::Stdio,
        TransportKind::StreamableHttp,
        TransportKind::Sse,
        TransportKind::Websocket,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "streamable_http",
            TransportKind::Sse => "sse",
            TransportKind::Websocket => "websocket",
        }
    }

    /// True for transports addressed by URL (and so subject to the URL policy).
    pub fn is_remote(self) -> bool {
        !matches!(self, TransportKind::Stdio)
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TransportKind {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        TransportKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == value)
            .ok_or_else(|| {
                format!("unknown transport '{value}' (expected stdio, streamable_http, sse or websocket)")
            })
    }
}

/// Who shares one upstream session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionScope {
    /// One session for the whole workspace (stateless tools).
    #[default]
    Shared,
    /// One session per user (per-user state upstream).
    PerUser,
    /// One session per conversation (browsers, editors: state must not leak).
    PerConversation,
}

impl SessionScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionScope::Shared => "shared",
            SessionScope::PerUser => "per_user",
            SessionScope::PerConversation => "per_conversation",
        }
    }
}

impl FromStr for SessionScope {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "shared" => Ok(SessionScope::Shared),
            "per_user" => Ok(SessionScope::PerUser),
            "per_conversation" => Ok(SessionScope::PerConversation),
            other => Err(format!(
                "unknown session_scope '{other}' (expected shared, per_user or per_conversation)"
            )),
        }
    }
}

/// The lifecycle of one upstream session.
///
/// `Idle → Initializing → Active`; `Initializing → Error` after retries are exhausted;
/// `Active → Error` when the transport dies; any state `→ Closed` on shutdown or idle timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionState {
    Idle,
    Initializing,
    Active,
    Error,
    Closed,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Idle => "IDLE",
            SessionState::Initializing => "INITIALIZING",
            SessionState::Active => "ACTIVE",
            SessionState::Error => "ERROR",
            SessionState::Closed => "CLOSED",
        }
    }
}
