//! The interop peers the suites drive (installed by `bash interop/install.sh`): where they are,
//! and `server-everything` started over Streamable HTTP as a process of its own. Shared by the
//! server's and the binary's integration tests so there is one way to find and start them.

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
        use std::os::unix::process::CommandExt;
        let port = free_port();
        let mut command = Command::new("node");
        command
            .arg("--require")
            .arg(interop("loopback.cjs"))
            .arg(everything_js())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().expect("start server-everything");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Peer { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Kills the peer's whole process group and reaps it.
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
