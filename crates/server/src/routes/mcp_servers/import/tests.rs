//! The import's reading of each format, without a server (the HTTP tests are in
//! `tests/it/mcp_servers/import.rs`).

use super::formats::{FileError, entry, parse};
use super::references::Rewriter;
use super::wire::{ConfigFormat, ReferenceOutcome};
use std::collections::BTreeMap;
use switchboard_core::TransportKind;

#[test]
fn formats_are_detected_from_their_shape() {
    let detect = |text: &str| parse(text, None).unwrap().format;
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"command": "npx"}}}"#),
        ConfigFormat::ClaudeDesktop
    );
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"type": "http", "url": "https://x"}}}"#),
        ConfigFormat::ClaudeDesktop
    );
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"type": "stdio", "command": "x"}}}"#),
        ConfigFormat::ClaudeCode
    );
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"url": "https://x", "headers": {"K": "${KEY}"}}}}"#),
        ConfigFormat::ClaudeCode
    );
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"command": "npx", "env": {"K": "${env:K}"}}}}"#),
        ConfigFormat::Cursor
    );
    assert_eq!(
        detect(r#"{"mcpServers": {"a": {"serverUrl": "https://x"}}}"#),
        ConfigFormat::Windsurf
    );
    assert_eq!(
        detect("{// VS Code\n\"servers\": {\"a\": {\"command\": \"npx\"},},}"),
        ConfigFormat::Vscode
    );
}

#[test]
fn unreadable_files_are_refused_whole() {
    assert!(matches!(parse("{", None), Err(FileError::NotJson(_))));
    assert!(matches!(parse("[]", None), Err(FileError::NoServers)));
    assert!(matches!(
        parse(r#"{"other": {}}"#, None),
        Err(FileError::NoServers)
    ));
    assert!(matches!(
        parse(r#"{"mcpServers": {}}"#, Some(ConfigFormat::Vscode)),
        Err(FileError::WrongShape { .. })
    ));
}

#[test]
fn repeated_keys_are_kept_in_order() {
    let file = parse(
        r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
        None,
    )
    .unwrap();
    let names: Vec<&str> = file.entries.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["a", "a"]);
}

#[test]
fn transports_follow_type_command_and_url() {
    let transport = |value: serde_json::Value| entry(value).map(|server| server.transport);
    use serde_json::json;
    assert_eq!(
        transport(json!({"command": "npx"})),
        Ok(TransportKind::Stdio)
    );
    assert_eq!(
        transport(json!({"url": "https://x/mcp"})),
        Ok(TransportKind::StreamableHttp)
    );
    assert_eq!(
        transport(json!({"url": "https://x/sse"})),
        Ok(TransportKind::Sse)
    );
    assert_eq!(
        transport(json!({"type": "sse", "url": "https://x/events"})),
        Ok(TransportKind::Sse)
    );
    assert_eq!(
        transport(json!({"type": "grpc", "url": "https://x"})),
        Err("unknown transport type 'grpc'".to_owned())
    );
    assert!(transport(json!({"type": "stdio"})).is_err());
    assert!(transport(json!({})).is_err());
    assert!(transport(json!({"command": "x", "url": "https://x"})).is_err());
    assert!(transport(json!("npx")).is_err());
}

#[test]
fn references_become_user_fields_only_where_values_are_substituted() {
    let inputs = BTreeMap::from([(
        "api-key".to_owned(),
        super::references::InputDeclaration {
            description: Some("API key".into()),
            password: true,
        },
    )]);
    let mut rewriter = Rewriter::new(&inputs);
    assert_eq!(
        rewriter.rewrite("headers.Authorization", "Bearer ${input:api-key}", true),
        "Bearer {{user.API_KEY}}"
    );
    assert_eq!(
        rewriter.rewrite("env.T", "${env:GH_TOKEN}", true),
        "{{user.GH_TOKEN}}"
    );
    assert_eq!(
        rewriter.rewrite("env.U", "${HOME_URL:-x}", true),
        "{{user.HOME_URL}}"
    );
    assert_eq!(
        rewriter.rewrite("args[0]", "${workspaceFolder}/${env:X}", false),
        "${workspaceFolder}/${env:X}"
    );
    assert_eq!(rewriter.user_fields["API_KEY"].title, "API key");
    let outcomes: Vec<ReferenceOutcome> = rewriter
        .references
        .iter()
        .map(|reference| reference.outcome)
        .collect();
    assert_eq!(
        outcomes,
        [
            ReferenceOutcome::UserField,
            ReferenceOutcome::UserField,
            ReferenceOutcome::UserField,
            ReferenceOutcome::KeptAsText,
            ReferenceOutcome::KeptAsText
        ]
    );
    assert!(
        rewriter.references[2].note.is_some(),
        "the dropped default is said"
    );
}

#[test]
fn entry_names_become_server_names() {
    assert_eq!(super::server_name("github"), "github");
    assert_eq!(super::server_name("My Server.v2"), "My-Server-v2");
    assert_eq!(super::server_name(&"x".repeat(40)).len(), 32);
}
