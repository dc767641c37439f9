//! Switchboard's configuration: one TOML document with a section per crate, overridden by
//! environment variables and then by command-line flags, validated before anything starts.
//!
//! Environment variables: `SWITCHBOARD_<SECTION>_<KEY>` sets `<section>.<key>` (a nested key
//! uses `__`: `SWITCHBOARD_MCP_STDIO__GRACEFUL_EXIT_SECS`), plus the documented short names in
//! [`ENV_ALIASES`]. Variables that are inputs but not settings ([`NOT_SETTINGS`]) are read where
//! they are used.

mod layers;
pub mod sections;
#[cfg(test)]
mod tests;

pub use layers::{ConfigError, Origin};

use layers::Layers;
use sections::LogSection;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use switchboard_approvals::ApprovalConfig;
use switchboard_chat::ChatConfig;
use switchboard_core::InvalidSetting;
use switchboard_llm::LlmConfig;
use switchboard_mcp_client::McpClientConfig;
use switchboard_mcp_server::KgConfig;
use switchboard_server::ServerConfig;
use switchboard_server::directory::DirectoryConfig;
use switchboard_server::oidc::OidcConfig;
use switchboard_store::DatabaseConfig;

/// The whole configuration file.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where the embedded SQLite database and the generated encryption key live. Default
    /// `./data`. Env `SWITCHBOARD_DATA_DIR`, flag `--data-dir`.
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub database: DatabaseConfig,
    pub mcp: McpClientConfig,
    pub approval: ApprovalConfig,
    pub chat: ChatConfig,
    pub llm: LlmConfig,
    /// `[kg]`: the knowledge-graph MCP endpoint (`switchboard-mcp-server`).
    pub kg: KgConfig,
    pub log: LogSection,
    /// `[oidc]`: single sign-on with an OpenID Connect provider; absent by default.
    pub oidc: Option<OidcConfig>,
    /// `[registry]`: the MCP registry people browse and add servers from; absent by default.
    pub registry: Option<DirectoryConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./data"),
            server: ServerConfig::default(),
            database: DatabaseConfig::default(),
            mcp: McpClientConfig::default(),
            approval: ApprovalConfig::default(),
            chat: ChatConfig::default(),
            llm: LlmConfig::default(),
            kg: KgConfig::default(),
            log: LogSection::default(),
            oidc: None,
            registry: None,
        }
    }
}

/// Section names, as in the file and in `SWITCHBOARD_<SECTION>_<KEY>`.
pub const SECTIONS: [&str; 10] = [
    "server", "database", "mcp", "approval", "chat", "llm", "kg", "log", "oidc", "registry",
];

/// Documented environment variables that set a key directly (applied after the generic
/// `SWITCHBOARD_<SECTION>_<KEY>` ones, so they win).
pub const ENV_ALIASES: [(&str, &str); 7] = [
    ("SWITCHBOARD_BIND", "server.bind"),
    ("SWITCHBOARD_PUBLIC_URL", "server.public_url"),
    ("SWITCHBOARD_DATA_DIR", "data_dir"),
    ("DATABASE_URL", "database.url"),
    ("CHAT_ENABLE_MCP_TOOLS", "chat.enable_mcp_tools"),
    ("CHAT_ENABLE_CITATIONS", "chat.enable_citations"),
    ("SWITCHBOARD_MCP_ANONYMOUS_SCOPES", "kg.anonymous_scopes"),
];

/// `SWITCHBOARD_*` variables that are not settings of the file.
pub const NOT_SETTINGS: [&str; 3] = [
    "SWITCHBOARD_CONFIG",
    "SWITCHBOARD_ADMIN_TOKEN",
    "SWITCHBOARD_ENCRYPTION_KEY",
];

/// A value given on the command line, applied last.
#[derive(Clone, Debug)]
pub struct FlagOverride {
    pub key: &'static str,
    pub flag: &'static str,
    pub value: String,
}

/// Loads defaults ← `file` ← `env` ← `flags`, then validates every section.
pub fn load(
    file: Option<&Path>,
    env: impl IntoIterator<Item = (String, String)>,
    flags: &[FlagOverride],
) -> Result<Config, ConfigError> {
    let mut layers = match file {
        Some(path) => Layers::from_file(path)?,
        None => Layers::default(),
    };
    let env: Vec<(String, String)> = env.into_iter().collect();
    // The conventional RUST_LOG sets the log filter unless SWITCHBOARD_LOG_FILTER does.
    if let Some((name, value)) = env.iter().find(|(name, _)| name == "RUST_LOG") {
        layers.set_text("log.filter", value, Origin::EnvVar(name.clone()));
    }
    for (name, value) in &env {
        if let Some(key) = generic_env_key(name) {
            layers.set_text(&key, value, Origin::EnvVar(name.clone()));
        }
    }
    for (alias, key) in ENV_ALIASES {
        if let Some((name, value)) = env.iter().find(|(name, _)| name == alias) {
            layers.set_text(key, value, Origin::EnvVar(name.clone()));
        }
    }
    for flag in flags {
        layers.set_text(flag.key, &flag.value, Origin::Flag(flag.flag));
    }
    let config: Config = layers.extract()?;
    if let Err((key, reason)) = config.validate() {
        return Err(layers.invalid_value(key, reason));
    }
    Ok(config)
}

/// `SWITCHBOARD_CHAT_MAX_TOOL_STEPS` → `chat.max_tool_steps`; `None` for anything else.
fn generic_env_key(name: &str) -> Option<String> {
    let rest = name.strip_prefix("SWITCHBOARD_")?;
    if NOT_SETTINGS.contains(&name) || ENV_ALIASES.iter().any(|(alias, _)| *alias == name) {
        return None;
    }
    let lower = rest.to_ascii_lowercase();
    let (section, key) = lower.split_once('_')?;
    if !SECTIONS.contains(&section) || key.is_empty() {
        return None;
    }
    Some(format!("{section}.{}", key.replace("__", ".")))
}

impl Config {
    /// The first invalid value, as (dotted key, reason).
    fn validate(&self) -> Result<(), (String, String)> {
        fn in_section(
            section: &str,
            result: Result<(), InvalidSetting>,
        ) -> Result<(), (String, String)> {
            result.map_err(|invalid| (format!("{section}.{}", invalid.key), invalid.reason))
        }
        if self.data_dir.as_os_str().is_empty() {
            return Err(("data_dir".into(), "must not be empty".into()));
        }
        in_section("server", self.server.validate())?;
        self.database
            .validate()
            .map_err(|invalid| (format!("database.{}", invalid.key), invalid.reason))?;
        in_section("mcp", self.mcp.validate())?;
        in_section("approval", self.approval.validate())?;
        in_section("chat", self.chat.validate())?;
        in_section("kg", self.kg.validate())?;
        in_section("llm", self.llm.validate())?;
        in_section("log", self.log.validate())?;
        if let Some(oidc) = &self.oidc {
            in_section("oidc", oidc.validate())?;
        }
        if let Some(registry) = &self.registry {
            in_section("registry", registry.validate())?;
        }
        Ok(())
    }
}
