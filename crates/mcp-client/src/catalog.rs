//! `ToolCatalog`: the tool list offered to an LLM for one turn (OpenAI function format) and the
//! reverse map from an LLM-visible name back to (server, original tool name).
//!
//! Names are `server__tool`, always matching `^[a-zA-Z0-9_-]{1,64}$`. Characters outside that
//! set become `_`; a name that would be too long, or that collides with another entry or a
//! built-in tool, gets a stable hash suffix (FNV-1a of server id and tool name — the same
//! inputs always give the same name, whatever else is in the catalog, unless the name is exact
//! and alone in its collision group). Order is deterministic: built-ins first, then servers by
//! name, then tools by name.

use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use switchboard_core::{ServerId, ToolDefinition, ToolSpec};

const MAX_NAME_LENGTH: usize = 64;
const SEPARATOR: &str = "__";

/// One server's contribution to a catalog: its enabled tools.
#[derive(Clone, Debug)]
pub struct CatalogServer {
    pub server_id: ServerId,
    pub server_name: String,
    pub tools: Vec<ToolDefinition>,
}

/// Where an LLM-visible tool name leads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolRoute {
    pub server_id: ServerId,
    pub server_name: String,
    /// The name the upstream knows the tool by.
    pub tool_name: String,
    /// The cached definition (schema for validation, annotations such as `readOnlyHint`).
    pub tool: ToolDefinition,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolCatalog {
    /// What the LLM sees, in a deterministic order.
    pub specs: Vec<ToolSpec>,
    routes: HashMap<String, ToolRoute>,
    builtins: HashSet<String>,
}

impl ToolCatalog {
    /// Builds the catalog. Built-in specs keep their names (they must already be valid).
    pub fn build(servers: &[CatalogServer], builtins: &[ToolSpec]) -> Self {
        let mut catalog = ToolCatalog::default();
        let mut taken: HashSet<String> = HashSet::new();
        catalog.add_builtins(builtins, &mut taken);
        let ordered = ordered_tools(servers);
        let names = plain_names(&ordered, &mut taken);
        catalog.add_upstream_tools(&ordered, names, &mut taken);
        // Built-ins first, then upstream tools in the sorted order above.
        catalog
    }

    /// Adds the built-ins whose names are valid and not yet taken, in their given order.
    fn add_builtins(&mut self, builtins: &[ToolSpec], taken: &mut HashSet<String>) {
        for builtin in builtins {
            if is_valid_tool_name(&builtin.name) && taken.insert(builtin.name.clone()) {
                self.builtins.insert(builtin.name.clone());
                self.specs.push(builtin.clone());
            } else {
                tracing::warn!(name = %switchboard_core::log_text(&builtin.name), "skipping a built-in tool with an invalid or duplicate name");
            }
        }
    }

    /// Adds the upstream tools in `ordered`, each under its plain name where it keeps one and
    /// a hashed name otherwise, with the route back to its server.
    fn add_upstream_tools(
        &mut self,
        ordered: &[(&CatalogServer, &ToolDefinition)],
        mut names: Vec<Option<String>>,
        taken: &mut HashSet<String>,
    ) {
        for (index, (server, tool)) in ordered.iter().enumerate() {
            let name = match names[index].take() {
                Some(name) => name,
                None => hashed_name(server, tool, taken),
            };
            taken.insert(name.clone());
            self.specs.push(ToolSpec {
                name: name.clone(),
                description: describe(server, tool),
                parameters: object_schema(&tool.input_schema),
            });
            self.routes.insert(
                name,
                ToolRoute {
                    server_id: server.server_id.clone(),
                    server_name: server.server_name.clone(),
                    tool_name: tool.name.clone(),
                    tool: (*tool).clone(),
                },
            );
        }
    }

    /// The upstream behind an LLM-visible name (`None` for built-ins and unknown names).
    pub fn route(&self, name: &str) -> Option<&ToolRoute> {
        self.routes.get(name)
    }

    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtins.contains(name)
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LENGTH
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn sanitize(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_owned()
    } else {
        cleaned
    }
}

/// Every server's tools the model may see (not those only their app may call,
/// `_meta.ui.visibility: ["app"]`), sorted by server name, server id and tool name, without
/// duplicates.
fn ordered_tools(servers: &[CatalogServer]) -> Vec<(&CatalogServer, &ToolDefinition)> {
    let mut ordered: Vec<(&CatalogServer, &ToolDefinition)> = servers
        .iter()
        .flat_map(|server| {
            server
                .tools
                .iter()
                .filter(|tool| tool.visible_to_model())
                .map(move |tool| (server, tool))
        })
        .collect();
    ordered.sort_by(|(left_server, left_tool), (right_server, right_tool)| {
        (
            &left_server.server_name,
            &left_server.server_id,
            &left_tool.name,
        )
            .cmp(&(
                &right_server.server_name,
                &right_server.server_id,
                &right_tool.name,
            ))
    });
    ordered.dedup_by(|(left_server, left_tool), (right_server, right_tool)| {
        left_server.server_id == right_server.server_id && left_tool.name == right_tool.name
    });
    ordered
}

/// The plain name each tool in `ordered` keeps (`None`: it gets a hashed name). A plain name
/// is kept when it fits, is not taken, and is unique or matched exactly by one tool only.
/// The kept names are added to `taken`.
fn plain_names(
    ordered: &[(&CatalogServer, &ToolDefinition)],
    taken: &mut HashSet<String>,
) -> Vec<Option<String>> {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (index, (server, tool)) in ordered.iter().enumerate() {
        groups
            .entry(plain_name(&server.server_name, &tool.name))
            .or_default()
            .push(index);
    }
    let mut names: Vec<Option<String>> = vec![None; ordered.len()];
    for (plain, members) in &groups {
        let exact: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&index| is_exact(ordered[index].0, ordered[index].1, plain))
            .collect();
        for &index in members {
            let keeps_plain = plain.len() <= MAX_NAME_LENGTH
                && !taken.contains(plain)
                && (members.len() == 1 || (exact.len() == 1 && exact[0] == index));
            if keeps_plain {
                names[index] = Some(plain.clone());
            }
        }
        for &index in members {
            if let Some(name) = &names[index] {
                taken.insert(name.clone());
            }
        }
    }
    names
}

fn plain_name(server_name: &str, tool_name: &str) -> String {
    format!(
        "{}{SEPARATOR}{}",
        sanitize(server_name),
        sanitize(tool_name)
    )
}

fn is_exact(server: &CatalogServer, tool: &ToolDefinition, plain: &str) -> bool {
    format!("{}{SEPARATOR}{}", server.server_name, tool.name) == plain
}

fn hashed_name(server: &CatalogServer, tool: &ToolDefinition, taken: &HashSet<String>) -> String {
    let mut hash = fnv1a(server.server_id.as_str().as_bytes());
    hash = fnv1a_continue(hash, b"\0");
    hash = fnv1a_continue(hash, tool.name.as_bytes());
    let plain = plain_name(&server.server_name, &tool.name);
    for attempt in 0u32.. {
        let suffix = if attempt == 0 {
            format!("_{hash:08x}")
        } else {
            format!("_{hash:08x}{attempt}")
        };
        let keep = MAX_NAME_LENGTH - suffix.len();
        let prefix: String = plain.chars().take(keep).collect();
        let candidate = format!("{prefix}{suffix}");
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
    unreachable!("an unbounded counter always finds a free name")
}

fn fnv1a(bytes: &[u8]) -> u32 {
    fnv1a_continue(0x811c_9dc5, bytes)
}

fn fnv1a_continue(mut hash: u32, bytes: &[u8]) -> u32 {
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

fn describe(server: &CatalogServer, tool: &ToolDefinition) -> String {
    let text = if !tool.description.trim().is_empty() {
        tool.description.trim().to_owned()
    } else if let Some(title) = tool
        .title
        .as_deref()
        .filter(|title| !title.trim().is_empty())
    {
        title.trim().to_owned()
    } else {
        format!("The '{}' tool", tool.name)
    };
    format!("{text} (server: {})", server.server_name)
}

/// OpenAI expects an object schema for function parameters.
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.get("type").is_none_or(|kind| kind == "object") => {
            let mut map = map.clone();
            map.insert("type".to_owned(), Value::from("object"));
            if !map.contains_key("properties") {
                map.insert("properties".to_owned(), Value::Object(Default::default()));
            }
            Value::Object(map)
        }
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
