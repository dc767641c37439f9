//! Schema mirrors of the lower crates' wire enums, for the OpenAPI document only.
//!
//! Why: `ToSchema` is utoipa's trait and the enums live in `core`, `store` and `mcp-client`,
//! which must not know HTTP or OpenAPI (only `server` knows wire shapes), so the orphan rule
//! leaves one way: a local enum with the same name and spelling, referenced from the wire
//! types with `#[schema(value_type = mirrors::…)]`. The bodies themselves still serialize the
//! real enums. Each mirror has a `From` with an exhaustive `match` (a new variant upstream
//! fails the build here) and a test that both spell every variant the same.

use serde::Serialize;
use utoipa::ToSchema;

macro_rules! mirror {
    ($(#[$meta:meta])* $name:ident from $real:path, rename = $rename:tt { $($variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
        #[serde(rename_all = $rename)]
        pub enum $name {
            $($variant),+
        }

        impl From<$real> for $name {
            fn from(real: $real) -> Self {
                use $real as Real;
                match real {
                    $(Real::$variant => $name::$variant),+
                }
            }
        }

        impl $name {
            /// Every variant with the real enum's spelling, for the agreement test.
            #[cfg(test)]
            fn pairs() -> Vec<(String, String)> {
                use $real as Real;
                vec![$((
                    serde_json::to_string(&$name::from(Real::$variant)).unwrap(),
                    serde_json::to_string(&Real::$variant).unwrap(),
                )),+]
            }
        }
    };
}

mirror!(
    /// The wire an upstream MCP server speaks.
    TransportKind from switchboard_core::TransportKind, rename = "snake_case" {
        Stdio, StreamableHttp, Sse, Websocket
    }
);
mirror!(
    /// Who shares one upstream session.
    SessionScope from switchboard_core::SessionScope, rename = "snake_case" {
        Shared, PerUser, PerConversation
    }
);
mirror!(
    /// A session's (or a server's) lifecycle state.
    SessionState from switchboard_core::SessionState, rename = "SCREAMING_SNAKE_CASE" {
        Idle, Initializing, Active, Error, Closed
    }
);
mirror!(
    /// Where a tool call is in its lifecycle.
    ToolCallState from switchboard_core::ToolCallState, rename = "snake_case" {
        Proposed, Approved, Denied, Dispatched, Completed, Failed, Unknown
    }
);
mirror!(
    /// An MCP task's status as its server last reported it.
    ToolTaskStatus from switchboard_core::ToolTaskStatus, rename = "snake_case" {
        Working, InputRequired, Completed, Failed, Cancelled
    }
);
mirror!(
    /// Who wrote a message.
    ChatRole from switchboard_core::ChatRole, rename = "lowercase" {
        System, User, Assistant, Tool
    }
);
mirror!(
    /// Whether a message is final.
    MessageStatus from switchboard_store::MessageStatus, rename = "snake_case" {
        Complete, Partial, Failed
    }
);
mirror!(
    /// What is known about a server's tools, resources and prompts.
    CapabilityState from switchboard_registry::CapabilityState, rename = "snake_case" {
        NeverSynced, Syncing, Synced, Stale, Empty, NeedsAuth, Error
    }
);
mirror!(
    /// Where a server's credentials come from.
    AuthMode from switchboard_store::AuthMode, rename = "snake_case" { None, Headers, Oauth }
);
mirror!(
    /// Whether one connection serves the workspace or each person connects their own.
    CredentialScope from switchboard_store::CredentialScope, rename = "snake_case" {
        Shared, PerUser
    }
);
mirror!(
    /// How the OAuth client authenticates at the token endpoint.
    TokenEndpointAuthMethod from switchboard_store::TokenEndpointAuthMethod, rename = "snake_case" {
        None, ClientSecretBasic, ClientSecretPost
    }
);
mirror!(
    /// Why a server counts as slow.
    Slowness from switchboard_mcp_client::Slowness, rename = "snake_case" { Calls, Start }
);

/// A token's capability (`chat:use`, `servers:write`, `admin`…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub enum Scope {
    #[serde(rename = "chat:use")]
    ChatUse,
    #[serde(rename = "schema:read")]
    SchemaRead,
    #[serde(rename = "data:read")]
    DataRead,
    #[serde(rename = "data:write")]
    DataWrite,
    #[serde(rename = "servers:read")]
    ServersRead,
    #[serde(rename = "servers:write")]
    ServersWrite,
    #[serde(rename = "gateway:use")]
    GatewayUse,
    #[serde(rename = "admin")]
    Admin,
}

impl From<switchboard_core::Scope> for Scope {
    fn from(real: switchboard_core::Scope) -> Self {
        use switchboard_core::Scope as Real;
        match real {
            Real::ChatUse => Scope::ChatUse,
            Real::SchemaRead => Scope::SchemaRead,
            Real::DataRead => Scope::DataRead,
            Real::DataWrite => Scope::DataWrite,
            Real::ServersRead => Scope::ServersRead,
            Real::ServersWrite => Scope::ServersWrite,
            Real::GatewayUse => Scope::GatewayUse,
            Real::Admin => Scope::Admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrors_spell_every_variant_as_the_real_enums() {
        let pairs = [
            TransportKind::pairs(),
            SessionScope::pairs(),
            SessionState::pairs(),
            ToolCallState::pairs(),
            ToolTaskStatus::pairs(),
            ChatRole::pairs(),
            MessageStatus::pairs(),
            CapabilityState::pairs(),
            Slowness::pairs(),
            AuthMode::pairs(),
            CredentialScope::pairs(),
            TokenEndpointAuthMethod::pairs(),
        ];
        for (mirror, real) in pairs.into_iter().flatten() {
            assert_eq!(mirror, real);
        }
        for real in switchboard_core::Scope::ALL {
            assert_eq!(
                serde_json::to_string(&Scope::from(real)).unwrap(),
                serde_json::to_string(&real).unwrap()
            );
        }
    }
}
