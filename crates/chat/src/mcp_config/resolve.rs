//! Resolution of a bud's `mcp_config` and a conversation's overrides against the workspace's
//! registered servers: the set of servers and tools one turn may use.

use super::model::{BudMcpConfig, McpConfigError, McpConfigOverrides, ToolChoiceSetting};
use std::collections::{BTreeMap, BTreeSet};
use switchboard_core::ServerId;
use switchboard_llm::ToolChoice;
use switchboard_store::ServerRecord;

/// A tool of a registered server: (server id, the upstream's tool name).
pub type ToolKey = (ServerId, String);

/// What one conversation may use.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedMcpConfig {
    /// Active servers, by name.
    pub servers: Vec<ServerRecord>,
    /// Referenced servers that are switched off (`is_active = false`), by name.
    pub inactive_servers: Vec<String>,
    /// `Some`: only these tools may be offered.
    pub available_tools: Option<BTreeSet<ToolKey>>,
    pub disabled_tools: BTreeSet<ToolKey>,
    /// With a function choice still in reference form (`kg.schema_version` or a catalog name);
    /// the turn maps it to the catalog name.
    pub tool_choice: ToolChoice,
}

impl ResolvedMcpConfig {
    /// Whether `tool` of `server` may be offered.
    pub fn allows_tool(&self, server_id: &ServerId, tool: &str) -> bool {
        let key = (server_id.clone(), tool.to_owned());
        !self.disabled_tools.contains(&key)
            && self
                .available_tools
                .as_ref()
                .is_none_or(|available| available.contains(&key))
    }
}

/// Resolves `bud` (default when the conversation has no bud) and `overrides` against
/// `workspace_servers` (every registered server of the conversation's workspace, active or
/// not). Fails on the first reference that is not a server of the workspace.
pub fn resolve_mcp_config(
    bud: &BudMcpConfig,
    overrides: &McpConfigOverrides,
    workspace_servers: &[ServerRecord],
) -> Result<ResolvedMcpConfig, McpConfigError> {
    let lookup = ServerLookup::new(workspace_servers);
    let mut chosen: BTreeMap<ServerId, &ServerRecord> = BTreeMap::new();
    match &bud.servers {
        None => {
            for server in workspace_servers {
                chosen.insert(server.id.clone(), server);
            }
        }
        Some(references) => {
            for (index, reference) in references.iter().enumerate() {
                let server = lookup.find(reference, &format!("mcp_config.servers[{index}]"))?;
                chosen.insert(server.id.clone(), server);
            }
        }
    }
    for (index, reference) in overrides.additional_servers.iter().enumerate() {
        let field = format!("mcp_config_overrides.additional_servers[{index}]");
        let server = lookup.find(reference, &field)?;
        chosen.insert(server.id.clone(), server);
    }

    let available_tools = match &bud.available_tools {
        None => None,
        Some(references) => Some(tool_keys(
            &lookup,
            references,
            "mcp_config.available_tools",
        )?),
    };
    let mut disabled_tools = tool_keys(&lookup, &bud.disabled_tools, "mcp_config.disabled_tools")?;
    disabled_tools.extend(tool_keys(
        &lookup,
        &overrides.disabled_tools,
        "mcp_config_overrides.disabled_tools",
    )?);

    let mut servers: Vec<ServerRecord> = Vec::new();
    let mut inactive_servers: Vec<String> = Vec::new();
    for server in chosen.into_values() {
        if server.is_active {
            servers.push(server.clone());
        } else {
            inactive_servers.push(server.name.clone());
        }
    }
    servers.sort_by(|left, right| left.name.cmp(&right.name));
    inactive_servers.sort();

    let (tool_choice, choice_field) = match (&overrides.tool_choice, &bud.tool_choice) {
        (Some(ToolChoiceSetting(choice)), _) => {
            (choice.clone(), "mcp_config_overrides.tool_choice")
        }
        (None, Some(ToolChoiceSetting(choice))) => (choice.clone(), "mcp_config.tool_choice"),
        (None, None) => (ToolChoice::default(), "mcp_config.tool_choice"),
    };
    if let ToolChoice::Function { name } = &tool_choice {
        check_forced_tool(&lookup, name, choice_field)?;
    }
    Ok(ResolvedMcpConfig {
        servers,
        inactive_servers,
        available_tools,
        disabled_tools,
        tool_choice,
    })
}

fn tool_keys(
    lookup: &ServerLookup<'_>,
    references: &[String],
    field: &str,
) -> Result<BTreeSet<ToolKey>, McpConfigError> {
    let mut keys = BTreeSet::new();
    for (index, reference) in references.iter().enumerate() {
        let field = format!("{field}[{index}]");
        let Some((server_reference, tool)) = reference.split_once('.') else {
            return Err(McpConfigError::new(
                field,
                format!(
                    "'{reference}' must be '<server>.<tool>' (a server id or name, a dot, the tool's name)"
                ),
            ));
        };
        if tool.is_empty() {
            return Err(McpConfigError::new(
                field,
                format!("'{reference}' names no tool"),
            ));
        }
        let server = lookup.find(server_reference, &field)?;
        keys.insert((server.id.clone(), tool.to_owned()));
    }
    Ok(keys)
}

/// A forced tool must exist: `<server>.<tool>` names a server of the workspace and, once the
/// server's tools are known (synced), one of them; a catalog name (`kg__schema_version`) starts
/// with a server's name and `__` and goes on with one of its tools (a catalog name may carry a
/// hash suffix, hence "goes on with"). A forced tool that does not exist is refused naming it,
/// rather than silently becoming `auto`.
fn check_forced_tool(
    lookup: &ServerLookup<'_>,
    name: &str,
    field: &str,
) -> Result<(), McpConfigError> {
    let unknown = |detail: String| {
        McpConfigError::new(
            field,
            format!("the forced tool '{name}' does not exist: {detail}"),
        )
    };
    if let Some((server_reference, tool)) = name.split_once('.') {
        let server = lookup
            .find(server_reference, field)
            .map_err(|error| unknown(error.message))?;
        return match tool_names(server) {
            Some(names) if !names.iter().any(|known| known == tool) => Err(unknown(format!(
                "server '{}' has no tool '{tool}' (its tools: {})",
                server.name,
                names.join(", ")
            ))),
            _ => Ok(()),
        };
    }
    let candidates: Vec<&ServerRecord> = lookup
        .servers
        .iter()
        .filter(|server| name.starts_with(&format!("{}__", server.name)))
        .collect();
    if candidates.is_empty() {
        return Err(unknown(
            "it is neither '<server>.<tool>' nor '<server>__<tool>' of a server of this workspace"
                .to_owned(),
        ));
    }
    let found = candidates.iter().any(|server| {
        let rest = &name[server.name.len() + 2..];
        tool_names(server)
            .is_none_or(|names| names.iter().any(|tool| rest.starts_with(tool.as_str())))
    });
    if found {
        Ok(())
    } else {
        Err(unknown(format!(
            "server '{}' has no such tool",
            candidates[0].name
        )))
    }
}

/// The names in a server's tool cache; `None` before its first sync.
fn tool_names(server: &ServerRecord) -> Option<Vec<String>> {
    let tools = server.tools_cache.as_ref()?.as_array()?;
    Some(
        tools
            .iter()
            .filter_map(|tool| tool.get("name")?.as_str().map(str::to_owned))
            .collect(),
    )
}

struct ServerLookup<'a> {
    servers: &'a [ServerRecord],
}

impl<'a> ServerLookup<'a> {
    fn new(servers: &'a [ServerRecord]) -> Self {
        Self { servers }
    }

    fn find(&self, reference: &str, field: &str) -> Result<&'a ServerRecord, McpConfigError> {
        self.servers
            .iter()
            .find(|server| server.id.as_str() == reference || server.name == reference)
            .ok_or_else(|| {
                McpConfigError::new(
                    field,
                    format!(
                        "'{reference}' is not a server of this workspace (no server has this id or name)"
                    ),
                )
            })
    }
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
