//! The `details` of the configuration-change audit rows that more than one front end writes:
//! the API (`/api/users`, `/api/people`, `/api/tokens`) and the admin subcommands of the
//! binary that change the store directly. One shape per action, so an auditor reads the same
//! row whichever way a change was made.

use chrono::{DateTime, Utc};
use serde::Serialize;
use switchboard_core::{ScopeSet, UserId};
use switchboard_store::UserRole;

/// `user.created`.
#[derive(Debug, Serialize)]
pub struct UserCreated<'a> {
    pub name: &'a str,
    pub role: UserRole,
}

/// `user.updated`: a person's role or state after the change.
#[derive(Debug, Serialize)]
pub struct PersonChanged<'a> {
    pub name: &'a str,
    pub role: UserRole,
    pub active: bool,
}

/// `user.deleted`: who was removed and what became of their conversations (`keep`: given to
/// `conversations_owner`; `delete`: deleted with them).
#[derive(Debug, Serialize)]
pub struct PersonRemoved<'a> {
    pub name: &'a str,
    pub role: UserRole,
    pub conversations: &'a str,
    pub transferred_conversations: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversations_owner: Option<&'a str>,
}

/// `token.created` (never the secret).
#[derive(Debug, Serialize)]
pub struct TokenCreated<'a> {
    pub user_id: &'a UserId,
    pub name: &'a str,
    pub scopes: &'a ScopeSet,
    pub expires_at: Option<DateTime<Utc>>,
}

/// `token.revoked`.
#[derive(Debug, Serialize)]
pub struct TokenRevoked<'a> {
    pub name: &'a str,
}

/// The row's `details` from its typed struct. These structs hold strings, ids and times
/// only, so serializing them cannot fail.
pub fn to_details(details: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(details).unwrap_or_default()
}
