//! The official MCP conformance suite's client scenarios, driving our conformance client (built
//! on this crate). Core scenarios must pass; so must every `auth/*` scenario of the 2025-03-26,
//! 2025-06-18 and 2025-11-25 revisions and the draft and extension ones we implement
//! ([`AUTH_MUST_PASS`]); the rest are run and reported.

use crate::support::{interop, node22, repo_root};
use std::process::Command;

const CORE_SCENARIOS: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

/// Every `auth/*` scenario of conformance 0.1.16 (`conformance list`), with whether it must
/// pass. Left out: `client-credentials-jwt` (private_key_jwt needs rmcp's JWT signing feature)
/// and `cross-app-access-complete-flow` (enterprise-managed authorization, SEP-990).
/// `2025-03-26-oauth-metadata-backcompat` serves metadata at the root well-known URL naming the
/// issuer `{origin}/oauth`, which RFC 8414 §3.3 refuses and the 2025-03-26 revision allows; we
/// accept exactly that same-origin case (`oauth::legacy_metadata`).
const AUTH_SCENARIOS: [(&str, bool); 22] = [
    ("auth/metadata-default", true),
    ("auth/metadata-var1", true),
    ("auth/metadata-var2", true),
    ("auth/metadata-var3", true),
    ("auth/basic-cimd", true),
    ("auth/scope-from-www-authenticate", true),
    ("auth/scope-from-scopes-supported", true),
    ("auth/scope-omitted-when-undefined", true),
    ("auth/scope-step-up", true),
    ("auth/scope-retry-limit", true),
    ("auth/token-endpoint-auth-basic", true),
    ("auth/token-endpoint-auth-post", true),
    ("auth/token-endpoint-auth-none", true),
    ("auth/pre-registration", true),
    ("auth/2025-03-26-oauth-metadata-backcompat", true),
    ("auth/2025-03-26-oauth-endpoint-fallback", true),
    ("auth/resource-mismatch", true),
    ("auth/offline-access-scope", true),
    ("auth/offline-access-not-supported", true),
    ("auth/client-credentials-basic", true),
    ("auth/client-credentials-jwt", false),
    ("auth/cross-app-access-complete-flow", false),
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

/// The first failing check of a transcript, as the reason shown in the table.
fn failure_reason(transcript: &str) -> String {
    transcript
        .lines()
        .find(|line| line.contains("FAILURE") || line.contains("WARNING"))
        .or_else(|| transcript.lines().find(|line| line.contains("failed:")))
        .map(|line| line.trim().chars().take(160).collect())
        .unwrap_or_else(|| "no passing verdict".to_owned())
}

#[test]
fn auth_client_scenarios_pass() {
    let mut table = Vec::new();
    let mut failures = Vec::new();
    for (scenario, must_pass) in AUTH_SCENARIOS {
        let (passed, transcript) = run_scenario(scenario);
        let verdict = if passed {
            "passed".to_owned()
        } else {
            format!("failed: {}", failure_reason(&transcript))
        };
        table.push(format!("{scenario:<45} {verdict}"));
        if must_pass && !passed {
            failures.push(format!("--- {scenario} ---\n{transcript}"));
        }
    }
    println!("conformance auth scenarios:\n{}", table.join("\n"));
    assert!(
        failures.is_empty(),
        "failed scenarios:\n{}",
        failures.join("\n")
    );
}
