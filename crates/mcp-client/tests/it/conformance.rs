//! The official MCP conformance suite's client scenarios, driving our conformance client (built
//! on this crate). Core scenarios must pass; the OAuth scenarios are not in scope yet.

use crate::support::{interop, node22, repo_root};
use std::process::Command;

const CORE_SCENARIOS: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

fn run_scenario(scenario: &str) -> (bool, String) {
    let output = Command::new(node22())
        .arg(interop("node_modules/.bin/conformance"))
        .arg("client")
        .arg("--command")
        .arg(env!("CARGO_BIN_EXE_conformance-client"))
        .arg("--scenario")
        .arg(scenario)
        .current_dir(repo_root())
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let passed = output.status.success()
        && text.contains("OVERALL: PASSED")
        && text.contains(" 0 failed, 0 warnings");
    (passed, text)
}

#[test]
fn core_client_scenarios_pass() {
    let mut failures = Vec::new();
    for scenario in CORE_SCENARIOS {
        let (passed, transcript) = run_scenario(scenario);
        if !passed {
            failures.push(format!("--- {scenario} ---\n{transcript}"));
        }
    }
    println!(
        "conformance client scenarios: {} passed, {} failed",
        CORE_SCENARIOS.len() - failures.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "failed scenarios:\n{}",
        failures.join("\n")
    );
}
