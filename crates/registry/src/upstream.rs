//! From a registered server (store record plus decrypted secrets) to the [`UpstreamServer`]
//! this crate connects to, with the server's own credentials only. (The chat engine's own
//! mapping additionally forwards a user's token to our knowledge-graph endpoint; nothing here
//! ever does.)

use switchboard_core::TransportKind;
use switchboard_mcp_client::server::{
    RemoteEndpoint, ServerConfigError, StdioCommand, UpstreamEndpoint, UpstreamServer,
};
use switchboard_store::{ServerRecord, ServerSecrets};
use url::Url;

/// Builds and validates the description. `working_dir` may be set in the connection config.
pub fn upstream_for_record(
    record: &ServerRecord,
    secrets: ServerSecrets,
) -> Result<UpstreamServer, ServerConfigError> {
    let endpoint = match record.transport {
        TransportKind::Stdio => UpstreamEndpoint::Stdio(StdioCommand {
            command: record.command.clone().ok_or_else(|| {
                ServerConfigError::new("command", "a stdio server needs a command")
            })?,
            args: record.args.clone(),
            env: secrets.env,
            working_dir: record
                .connection
                .extra
                .get("working_dir")
                .and_then(|value| value.as_str())
                .map(Into::into),
        }),
        transport => {
            let text = record.url.clone().ok_or_else(|| {
                ServerConfigError::new("url", format!("a {transport} server needs a url"))
            })?;
            let url = Url::parse(&text).map_err(|error| {
                ServerConfigError::new("url", format!("'{text}' is not a URL: {error}"))
            })?;
            UpstreamEndpoint::Remote(RemoteEndpoint {
                transport,
                url,
                headers: secrets.headers,
                api_key: secrets.api_key,
            })
        }
    };
    let server = UpstreamServer {
        id: record.id.clone(),
        workspace_id: record.workspace_id.clone(),
        name: record.name.clone(),
        endpoint,
        session_scope: record.connection.session_scope,
        timeout_ms: record.connection.timeout_ms,
        init_timeout_ms: record.connection.init_timeout_ms,
        origin: switchboard_mcp_client::url_policy::ServerOrigin::Registered,
    };
    server.validate()?;
    Ok(server)
}
