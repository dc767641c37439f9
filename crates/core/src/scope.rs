//! Token scopes. A scope names one capability; `admin` implies every other scope.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// One capability a token may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// Use the gateway (`/gateway/mcp`): the workspace's servers re-exposed over MCP.
    #[serde(rename = "gateway:use")]
    GatewayUse,
    #[serde(rename = "admin")]
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 8] = [
        Scope::ChatUse,
        Scope::SchemaRead,
        Scope::DataRead,
        Scope::DataWrite,
        Scope::ServersRead,
        Scope::ServersWrite,
        Scope::GatewayUse,
        Scope::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ChatUse => "chat:use",
            Scope::SchemaRead => "schema:read",
            Scope::DataRead => "data:read",
            Scope::DataWrite => "data:write",
            Scope::ServersRead => "servers:read",
            Scope::ServersWrite => "servers:write",
            Scope::GatewayUse => "gateway:use",
            Scope::Admin => "admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scope string that is not one of [`Scope::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown scope '{0}' (known scopes: chat:use, schema:read, data:read, data:write, servers:read, servers:write, gateway:use, admin)"
)]
pub struct UnknownScope(pub String);

impl FromStr for Scope {
    type Err = UnknownScope;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == value.trim())
            .ok_or_else(|| UnknownScope(value.to_owned()))
    }
}

/// The scopes a token holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ScopeSet(BTreeSet<Scope>);

impl ScopeSet {
    pub fn all() -> Self {
        Self(Scope::ALL.into_iter().collect())
    }

    pub fn empty() -> Self {
        Self::default()
    }

    /// Parses a comma- or space-separated list such as `"chat:use, schema:read"`.
    pub fn parse_list(value: &str) -> Result<Self, UnknownScope> {
        value
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|part| !part.is_empty())
            .map(Scope::from_str)
            .collect::<Result<BTreeSet<_>, _>>()
            .map(Self)
    }

    /// True when the set grants `scope`, directly or through `admin`.
    pub fn allows(&self, scope: Scope) -> bool {
        self.0.contains(&scope) || self.0.contains(&Scope::Admin)
    }

    pub fn insert(&mut self, scope: Scope) {
        self.0.insert(scope);
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The scope names, for error payloads such as `user_scopes`.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|scope| scope.as_str()).collect()
    }
}

impl FromIterator<Scope> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_rejects_unknown_scopes() {
        let set = ScopeSet::parse_list("chat:use, schema:read").unwrap();
        assert!(set.allows(Scope::ChatUse));
        assert!(!set.allows(Scope::DataWrite));
        let error = ScopeSet::parse_list("chat:use,root").unwrap_err();
        assert_eq!(error.0, "root");
    }

    #[test]
    fn admin_implies_everything() {
        let set: ScopeSet = [Scope::Admin].into_iter().collect();
        assert!(Scope::ALL.into_iter().all(|scope| set.allows(scope)));
    }

    #[test]
    fn serializes_with_wire_names() {
        let set = ScopeSet::parse_list("servers:write chat:use").unwrap();
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"["chat:use","servers:write"]"#
        );
    }
}
