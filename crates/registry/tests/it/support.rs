//! Helpers for the registry's tests: where the interop peers and the client's Python fixtures
//! live (failing loudly when they are missing), a peer on a loopback port killed with its whole
//! process group, a store in a temp dir and a registry over it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_core::WorkspaceId;
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_registry::ServerRegistry;
use switchboard_store::{DatabaseConfig, SecretCipher, Store};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn require(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "missing interop peer {}: run `bash interop/install.sh` first",
        path.display()
    );
    path
}

fn interop(relative: &str) -> PathBuf {
    require(repo_root().join("interop").join(relative))
}

/// A test server of `switchboard-mcp-client` (its tests/fixtures), shared rather than copied.
pub fn fixture(name: &str) -> PathBuf {
    require(
        repo_root()
            .join("crates/mcp-client/tests/fixtures")
            .join(name),
    )
}

/// The machine's Node (reference servers run on it).
pub fn node() -> String {
    "node".to_owned()
}

pub fn python() -> PathBuf {
    interop(".venv/bin/python")
}

pub fn everything_js() -> PathBuf {
    interop("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A peer process in its own process group, killed (group and all) on drop.
pub struct Peer {
    child: Child,
    pub port: u16,
}

impl Peer {
    fn start(mut command: Command, port: u16) -> Peer {
        use std::os::unix::process::CommandExt;
        command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().expect("start peer");
        let peer = Peer { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", peer.port)).is_ok() {
                return peer;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("peer did not listen on port {} within 20 s", peer.port);
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
    }
}

/// mcp-client's tests/fixtures/mcp2_server.py (a stateless 2026-07-28 server) over Streamable
/// HTTP.
pub fn mcp2_server(port: u16) -> Peer {
    let mut command = Command::new(interop(".venv-mcp2/bin/python"));
    command.arg(fixture("mcp2_server.py")).arg(port.to_string());
    Peer::start(command, port)
}

/// Short timeouts so failures show quickly.
pub fn quick_config() -> McpClientConfig {
    McpClientConfig {
        session_init_timeout_secs: 15,
        session_init_backoff_ms: 50,
        session_error_retry_secs: 1,
        ..McpClientConfig::default()
    }
}

/// The lines of a file a fixture writes (none if it does not exist yet).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

pub async fn store(dir: &tempfile::TempDir) -> (Store, WorkspaceId) {
    let store = Store::open(
        &DatabaseConfig::default(),
        dir.path(),
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    let workspace = store.create_workspace("acme").await.unwrap();
    (store, workspace.id)
}

pub fn registry_with(store: &Store, config: McpClientConfig) -> ServerRegistry {
    ServerRegistry::new(McpClient::new(config).unwrap(), store.clone())
}

/// The official MCP Apps example server (`@modelcontextprotocol/server-basic-vanillajs`).
pub fn basic_app_js() -> PathBuf {
    interop("apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js")
}
