//! Property tests (10,000 cases each) of the two things every call depends on: the
//! `server__tool` names an LLM sees are a bijection onto the catalog's (server, tool) pairs and
//! always valid function names, whatever the servers are called; and a JSON-RPC message
//! survives the SDK's decode and encode unchanged.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use switchboard_core::{ServerId, ToolDefinition};
use switchboard_mcp_client::{CatalogServer, ToolCatalog, is_valid_tool_name};

const CASES: u32 = 10_000;

/// Names as people and upstreams choose them: mostly plain, sometimes with spaces, dots,
/// unicode, `__` inside, or longer than a function name may be.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9_-]{0,10}",
        1 => "[a-z]{1,5}__[a-z]{1,5}",
        1 => "\\PC{1,8}",
        1 => "[a-z]{40,70}",
        1 => "[a-z. ]{1,6}",
    ]
}

fn definition(tool: String) -> ToolDefinition {
    ToolDefinition {
        name: tool,
        title: None,
        description: String::new(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

/// Up to five servers (two may share a name) with up to six tools each.
fn servers() -> impl Strategy<Value = Vec<CatalogServer>> {
    prop::collection::vec((name(), prop::collection::vec(name(), 0..6)), 0..5).prop_map(|entries| {
        entries
            .into_iter()
            .enumerate()
            .map(|(index, (server, tools))| CatalogServer {
                server_id: ServerId::from_string(format!("srv-{index}")),
                server_name: server,
                tools: tools.into_iter().map(definition).collect(),
            })
            .collect()
    })
}

fn names_by_pair(catalog: &ToolCatalog) -> BTreeMap<(String, String), String> {
    catalog
        .specs
        .iter()
        .filter_map(|spec| {
            let route = catalog.route(&spec.name)?;
            Some((
                (route.server_id.as_str().to_owned(), route.tool_name.clone()),
                spec.name.clone(),
            ))
        })
        .collect()
}

fn jsonrpc_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..i64::MAX).prop_map(Value::from),
        "[a-zA-Z0-9-]{1,20}".prop_map(Value::from),
    ]
}

fn argument() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "\\PC{0,10}".prop_map(Value::String),
    ];
    scalar.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn namespaced_names_are_a_bijection_of_valid_function_names(servers in servers()) {
        let catalog = ToolCatalog::build(&servers, &[]);
        let pairs: HashSet<(String, String)> = servers
            .iter()
            .flat_map(|server| {
                server
                    .tools
                    .iter()
                    .map(|tool| (server.server_id.as_str().to_owned(), tool.name.clone()))
            })
            .collect();
        prop_assert_eq!(catalog.len(), pairs.len());
        let mut seen = HashSet::new();
        for spec in &catalog.specs {
            prop_assert!(is_valid_tool_name(&spec.name), "invalid name {:?}", spec.name);
            prop_assert!(seen.insert(spec.name.clone()), "duplicate name {:?}", spec.name);
            let route = catalog.route(&spec.name).expect("every listed name routes");
            prop_assert!(pairs.contains(&(route.server_id.as_str().to_owned(), route.tool_name.clone())));
        }
    }

    #[test]
    fn a_plain_name_is_kept_when_it_is_valid_and_alone(servers in servers()) {
        let catalog = ToolCatalog::build(&servers, &[]);
        let mut plain_counts: BTreeMap<String, usize> = BTreeMap::new();
        for server in &servers {
            let tools: HashSet<&str> = server.tools.iter().map(|tool| tool.name.as_str()).collect();
            for tool in tools {
                *plain_counts.entry(format!("{}__{}", server.server_name, tool)).or_default() += 1;
            }
        }
        for (pair, name) in names_by_pair(&catalog) {
            let server = servers.iter().find(|server| server.server_id.as_str() == pair.0).unwrap();
            let plain = format!("{}__{}", server.server_name, pair.1);
            if is_valid_tool_name(&plain) && plain_counts[&plain] == 1 {
                prop_assert_eq!(name, plain);
            }
        }
    }

    #[test]
    fn names_do_not_depend_on_the_order_servers_are_listed(servers in servers()) {
        let forward = names_by_pair(&ToolCatalog::build(&servers, &[]));
        let mut reversed_servers = servers.clone();
        reversed_servers.reverse();
        for server in &mut reversed_servers {
            server.tools.reverse();
        }
        prop_assert_eq!(forward, names_by_pair(&ToolCatalog::build(&reversed_servers, &[])));
    }

    #[test]
    fn jsonrpc_messages_round_trip_through_the_sdk(
        id in jsonrpc_id(),
        tool in "[a-zA-Z0-9_-]{1,20}",
        arguments in prop::collection::vec(("[a-z]{1,8}", argument()), 0..5),
        kind in 0u8..4,
    ) {
        let arguments: Map<String, Value> = arguments.into_iter().collect();
        let message = match kind {
            0 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments}}),
            1 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            2 => json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id, "reason": tool}}),
            _ => json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": tool}],
                        "structuredContent": arguments, "isError": false}}),
        };
        let decoded: rmcp::model::ClientJsonRpcMessage = match kind {
            3 => {
                let server: rmcp::model::ServerJsonRpcMessage = serde_json::from_value(message.clone())
                    .map_err(|error| TestCaseError::fail(format!("decode {message}: {error}")))?;
                let encoded = serde_json::to_value(&server).unwrap();
                prop_assert_eq!(strip_nulls(encoded), strip_nulls(message));
                return Ok(());
            }
            _ => serde_json::from_value(message.clone())
                .map_err(|error| TestCaseError::fail(format!("decode {message}: {error}")))?,
        };
        let encoded = serde_json::to_value(&decoded).unwrap();
        prop_assert_eq!(strip_nulls(encoded), strip_nulls(message));
    }
}

/// The SDK may leave out or add empty optional members; compare what carries meaning.
fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, item)| !item.is_null())
                .map(|(key, item)| (key, strip_nulls(item)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}
