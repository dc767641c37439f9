//! Loading, precedence, coercion and the error messages of invalid configuration.

use super::*;
use std::io::Write;
use switchboard_core::ApprovalPolicy;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn file_with(contents: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(contents.as_bytes()).unwrap();
    file
}

fn invalid(error: ConfigError) -> (String, Option<Origin>, String) {
    match error {
        ConfigError::InvalidValue {
            key,
            origin,
            reason,
        } => (key, origin, reason),
        other => panic!("expected InvalidValue, got {other:?}"),
    }
}

#[test]
fn defaults_match_the_documented_values() {
    let config = load(None, env(&[]), &[]).unwrap();
    assert_eq!(config.server.bind.to_string(), "127.0.0.1:8080");
    assert_eq!(config.data_dir, PathBuf::from("./data"));
    assert_eq!(config.mcp.session_idle_timeout_secs, 1800);
    assert_eq!(config.mcp.session_init_timeout_secs, 10);
    assert_eq!(config.mcp.capability_cache_ttl_secs, 300);
    assert_eq!(config.mcp.tool_call_timeout_secs, 30);
    assert_eq!(config.mcp.max_tool_response_bytes, 10 * 1024 * 1024);
    assert_eq!(config.mcp.max_concurrent_calls_per_conversation, 10);
    assert_eq!(config.approval.default_policy, ApprovalPolicy::AskUser);
    assert_eq!(config.approval.timeout_secs, 60);
    assert_eq!(config.chat.max_tool_steps, 8);
    assert!(config.chat.enable_mcp_tools);
    assert!(!config.chat.enable_citations);
}

#[test]
fn env_overrides_file_and_flags_override_env() {
    let file = file_with(
        "data_dir = \"/from/file\"\n[server]\nbind = \"127.0.0.1:9000\"\n[chat]\nmax_tool_steps = 3\n",
    );
    let config = load(
        Some(file.path()),
        env(&[
            ("SWITCHBOARD_BIND", "127.0.0.1:9100"),
            ("SWITCHBOARD_CHAT_MAX_TOOL_STEPS", "12"),
        ]),
        &[FlagOverride {
            key: "server.bind",
            flag: "--bind",
            value: "127.0.0.1:9200".into(),
        }],
    )
    .unwrap();
    assert_eq!(config.data_dir, PathBuf::from("/from/file"));
    assert_eq!(config.server.bind.to_string(), "127.0.0.1:9200");
    assert_eq!(config.chat.max_tool_steps, 12);
}

#[test]
fn documented_short_env_names_and_boolean_spellings_work() {
    let config = load(
        None,
        env(&[
            ("CHAT_ENABLE_MCP_TOOLS", "0"),
            ("CHAT_ENABLE_CITATIONS", "true"),
            ("DATABASE_URL", "postgres://postgres@127.0.0.1/test"),
            ("SWITCHBOARD_DATA_DIR", "2024"),
            ("SWITCHBOARD_APPROVAL_DEFAULT_POLICY", "ALWAYS_DENY"),
            ("SWITCHBOARD_LOG_FORMAT", "json"),
        ]),
        &[],
    )
    .unwrap();
    assert!(!config.chat.enable_mcp_tools);
    assert!(config.chat.enable_citations);
    assert_eq!(
        config.database.url.as_deref(),
        Some("postgres://postgres@127.0.0.1/test")
    );
    // A numeric-looking value stays text where the field is text.
    assert_eq!(config.data_dir, PathBuf::from("2024"));
    assert_eq!(config.approval.default_policy, ApprovalPolicy::AlwaysDeny);
    assert_eq!(config.log.format, sections::LogFormat::Json);
}

#[test]
fn non_setting_variables_are_ignored() {
    let config = load(
        None,
        env(&[
            ("SWITCHBOARD_ADMIN_TOKEN", "sb_secret"),
            ("SWITCHBOARD_CONFIG", "/nowhere.toml"),
            ("SWITCHBOARD_TEST_SOMETHING", "x"),
        ]),
        &[],
    )
    .unwrap();
    assert_eq!(config.chat.max_tool_steps, 8);
}

#[test]
fn a_wrongly_typed_env_value_names_key_variable_and_reason() {
    let error = load(
        None,
        env(&[("SWITCHBOARD_CHAT_MAX_TOOL_STEPS", "many")]),
        &[],
    )
    .unwrap_err();
    let message = error.to_string();
    let (key, origin, reason) = invalid(error);
    assert_eq!(key, "chat.max_tool_steps");
    assert_eq!(
        origin,
        Some(Origin::EnvVar("SWITCHBOARD_CHAT_MAX_TOOL_STEPS".into()))
    );
    assert!(reason.contains("invalid type"), "{reason}");
    assert!(
        message.contains("SWITCHBOARD_CHAT_MAX_TOOL_STEPS") && message.contains("many"),
        "{message}"
    );
}

#[test]
fn a_value_that_fails_validation_names_key_and_reason() {
    let error = load(
        None,
        env(&[("SWITCHBOARD_MCP_TOOL_CALL_TIMEOUT_SECS", "0")]),
        &[],
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid configuration: `mcp.tool_call_timeout_secs` (set by environment variable \
         SWITCHBOARD_MCP_TOOL_CALL_TIMEOUT_SECS): must be greater than 0"
    );
}

#[test]
fn an_unparseable_bind_address_is_named() {
    let (key, origin, reason) =
        invalid(load(None, env(&[("SWITCHBOARD_BIND", "localhost-ish")]), &[]).unwrap_err());
    assert_eq!(key, "server.bind");
    assert_eq!(origin, Some(Origin::EnvVar("SWITCHBOARD_BIND".into())));
    assert!(reason.contains("socket address"), "{reason}");
}

#[test]
fn unknown_keys_and_sections_in_the_file_are_refused_by_name() {
    let file = file_with("[chat]\nmax_tool_step = 3\n");
    let (key, origin, reason) = invalid(load(Some(file.path()), env(&[]), &[]).unwrap_err());
    assert_eq!(key, "chat.max_tool_step");
    assert_eq!(origin, Some(Origin::File(file.path().to_owned())));
    assert!(reason.contains("unknown field"), "{reason}");

    let file = file_with("[chatt]\nmax_tool_steps = 3\n");
    let (key, _, _) = invalid(load(Some(file.path()), env(&[]), &[]).unwrap_err());
    assert_eq!(key, "chatt");
}

#[test]
fn a_bad_policy_and_a_bad_log_filter_are_refused() {
    let file = file_with("[approval]\ndefault_policy = \"SOMETIMES\"\n");
    let (key, _, reason) = invalid(load(Some(file.path()), env(&[]), &[]).unwrap_err());
    assert_eq!(key, "approval.default_policy");
    assert!(reason.contains("SOMETIMES"), "{reason}");

    let (key, _, _) =
        invalid(load(None, env(&[("SWITCHBOARD_LOG_FILTER", "info,[[[")]), &[]).unwrap_err());
    assert_eq!(key, "log.filter");
}

#[test]
fn a_missing_or_malformed_file_is_reported_with_its_path() {
    let error = load(Some(Path::new("/definitely/not/here.toml")), env(&[]), &[]).unwrap_err();
    assert!(matches!(error, ConfigError::ReadFile { .. }), "{error:?}");
    assert!(error.to_string().contains("/definitely/not/here.toml"));

    let file = file_with("[server\nbind = 1");
    let error = load(Some(file.path()), env(&[]), &[]).unwrap_err();
    assert!(matches!(error, ConfigError::ParseFile { .. }), "{error:?}");
}

#[test]
fn rust_log_sets_the_filter_unless_the_switchboard_variable_does() {
    let config = load(None, env(&[("RUST_LOG", "debug")]), &[]).unwrap();
    assert_eq!(config.log.filter, "debug");
    let config = load(
        None,
        env(&[("RUST_LOG", "debug"), ("SWITCHBOARD_LOG_FILTER", "warn")]),
        &[],
    )
    .unwrap();
    assert_eq!(config.log.filter, "warn");
}

#[test]
fn the_public_url_comes_from_its_variable_and_a_relative_one_is_refused_by_name() {
    let config = load(
        None,
        env(&[("SWITCHBOARD_PUBLIC_URL", "https://chat.example.com/sb")]),
        &[],
    )
    .unwrap();
    assert_eq!(
        config.server.public_url.join("/oauth/callback"),
        "https://chat.example.com/sb/oauth/callback"
    );
    let (key, origin, reason) = invalid(
        load(
            None,
            env(&[("SWITCHBOARD_PUBLIC_URL", "ftp://chat.example.com")]),
            &[],
        )
        .unwrap_err(),
    );
    assert_eq!(key, "server.public_url");
    assert_eq!(
        origin,
        Some(Origin::EnvVar("SWITCHBOARD_PUBLIC_URL".into()))
    );
    assert!(reason.contains("http"), "{reason}");
}

#[test]
fn oidc_is_off_by_default_and_takes_its_secret_from_the_environment() {
    assert!(load(None, env(&[]), &[]).unwrap().oidc.is_none());
    let file = file_with(
        "[oidc]\nissuer = \"https://id.example.com\"\nclient_id = \"sb\"\nrole_claim = \"groups\"\nrole_map = { ops = \"admin\" }\n",
    );
    let config = load(
        Some(file.path()),
        env(&[("SWITCHBOARD_OIDC_CLIENT_SECRET", "from-env")]),
        &[],
    )
    .unwrap();
    let oidc = config.oidc.unwrap();
    assert_eq!(oidc.client_secret.unwrap().expose(), "from-env");
    assert_eq!(oidc.workspace, "default");
    let bad = file_with("[oidc]\nissuer = \"ftp://id.example.com\"\nclient_id = \"sb\"\n");
    let (key, _, reason) = invalid(load(Some(bad.path()), env(&[]), &[]).unwrap_err());
    assert_eq!(key, "oidc.issuer");
    assert!(reason.contains("http"), "{reason}");
}

#[test]
fn the_mcp_registry_is_off_by_default_and_needs_an_http_url() {
    assert!(load(None, env(&[]), &[]).unwrap().registry.is_none());
    let file = file_with("[registry]\nurl = \"https://registry.modelcontextprotocol.io/v0.1\"\n");
    let registry = load(Some(file.path()), env(&[]), &[])
        .unwrap()
        .registry
        .unwrap();
    assert_eq!(registry.timeout_secs, 10);
    let from_env = load(
        None,
        env(&[("SWITCHBOARD_REGISTRY_URL", "https://mcp.example.com/v0.1")]),
        &[],
    )
    .unwrap();
    assert_eq!(
        from_env.registry.unwrap().url,
        "https://mcp.example.com/v0.1"
    );
    let bad = file_with("[registry]\nurl = \"ftp://registry.example.com\"\n");
    let (key, _, reason) = invalid(load(Some(bad.path()), env(&[]), &[]).unwrap_err());
    assert_eq!(key, "registry.url");
    assert!(reason.contains("http"), "{reason}");
}
