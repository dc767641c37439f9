//! IBM ContextForge as the fourth column: `interop/contextforge/run.sh` installs it (pinned, its
//! own virtualenv), starts it with its own SQLite database and JWT auth, registers our `/mcp`
//! as its upstream with the stack's token, and prints the MCP endpoint a client calls, the
//! token to send and the name it gives `schema_version`. It runs until its stdin closes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long installing and starting ContextForge may take (a first run installs it).
const READY_WITHIN: Duration = Duration::from_secs(600);

/// A running ContextForge fronting the stack's `/mcp`; stopped when dropped.
pub struct ContextForge {
    child: Child,
    pub url: String,
    pub token: String,
    pub tool: String,
}

impl Drop for ContextForge {
    fn drop(&mut self) {
        // Closing its stdin stops the launcher, which stops ContextForge.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Starts ContextForge in front of `upstream` (our `/mcp`, called with `token`); `None`, with
/// the reason printed, when it cannot be installed or started here.
pub fn start(upstream: &str, token: &str) -> Option<ContextForge> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/contextforge/run.sh"
    );
    let mut child = Command::new("bash")
        .args([script, upstream, token])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|error| println!("  contextforge: cannot run {script}: {error}"))
        .ok()?;
    let stdout = child.stdout.take()?;
    let (sender, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("CONTEXTFORGE_READY ") {
                let _ = sender.send(rest.to_owned());
                return;
            }
        }
    });
    let Ok(line) = ready.recv_timeout(READY_WITHIN) else {
        println!("  contextforge: not ready within {READY_WITHIN:?}");
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let mut fields = line.split_whitespace();
    let (Some(url), Some(token), Some(tool)) = (fields.next(), fields.next(), fields.next()) else {
        println!("  contextforge: unexpected readiness line {line:?}");
        return None;
    };
    Some(ContextForge {
        url: url.to_owned(),
        token: token.to_owned(),
        tool: tool.trim_start_matches("tool=").to_owned(),
        child,
    })
}
