//! Who is making a request: resolved from a bearer token by the HTTP layer and carried through
//! the chat engine, the MCP client side (per-user sessions) and our MCP server (scopes).

use crate::{ScopeSet, TokenId, UserId, WorkspaceId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub workspace_id: WorkspaceId,
    pub user_id: UserId,
    /// `None` for anonymous access granted by configuration (e.g. a public demo graph).
    pub token_id: Option<TokenId>,
    pub scopes: ScopeSet,
}

impl Principal {
    pub fn allows(&self, scope: crate::Scope) -> bool {
        self.scopes.allows(scope)
    }

    pub fn is_admin(&self) -> bool {
        self.scopes.allows(crate::Scope::Admin)
    }
}
