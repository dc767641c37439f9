//! Start-up and shutdown of the real binary: bootstrap token, invalid configuration, signals.

use crate::process::{Service, command};
use reqwest::StatusCode;
use std::io::Write;
use std::time::Duration;

#[tokio::test]
async fn first_start_prints_a_working_owner_token_once() {
    let data_dir = tempfile::tempdir().unwrap();
    let service = Service::start_command(command(data_dir.path()));
    let token = service
        .stdout_before_ready
        .iter()
        .map(|line| line.trim())
        .find(|line| line.starts_with("sb_"))
        .unwrap_or_else(|| panic!("no token printed: {:?}", service.stdout_before_ready))
        .to_owned();
    let client = switchboard_test_support::http_client::http_client();
    let me = client
        .get(service.url("/api/me"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), StatusCode::OK);
    let wrong = client
        .get(service.url("/api/me"))
        .bearer_auth(format!("{token}x"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let ready = client.get(service.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    service.terminate(Duration::from_secs(10));

    let again = Service::start_command(command(data_dir.path()));
    assert!(
        again
            .stdout_before_ready
            .iter()
            .all(|line| !line.contains("sb_")),
        "the token must be printed only on first start: {:?}",
        again.stdout_before_ready
    );
}

#[test]
fn an_invalid_setting_stops_start_up_naming_key_and_reason() {
    let data_dir = tempfile::tempdir().unwrap();
    let output = command(data_dir.path())
        .env("SWITCHBOARD_CHAT_MAX_TOOL_STEPS", "0")
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`chat.max_tool_steps`"), "{stderr}");
    assert!(
        stderr.contains("SWITCHBOARD_CHAT_MAX_TOOL_STEPS"),
        "{stderr}"
    );
    assert!(stderr.contains("must be greater than 0"), "{stderr}");

    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(b"[mcp]\ntool_call_timeout = 5\n").unwrap();
    let output = command(data_dir.path())
        .arg("--config")
        .arg(file.path())
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`mcp.tool_call_timeout`"), "{stderr}");
    assert!(stderr.contains("unknown field"), "{stderr}");
    assert!(
        stderr.contains(&file.path().display().to_string()),
        "{stderr}"
    );

    let output = command(data_dir.path())
        .args(["serve", "--bind", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`server.bind` (set by --bind)"), "{stderr}");
}

/// The whole answer to a wrong value is one line: no parser trailer repeating the key.
#[test]
fn a_wrong_value_is_reported_on_one_line_naming_key_origin_and_reason() {
    let data_dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "SWITCHBOARD_APPROVAL_DEFAULT_POLICY",
            "maybe",
            "switchboard: invalid configuration: `approval.default_policy` (set by environment \
             variable SWITCHBOARD_APPROVAL_DEFAULT_POLICY): unknown variant `maybe`, expected one \
             of `ALWAYS_ALLOW`, `ALWAYS_DENY`, `ASK_USER`",
        ),
        (
            "SWITCHBOARD_APPROVAL_TIMEOUT_SECS",
            "soon",
            "switchboard: invalid configuration: `approval.timeout_secs` (set by environment \
             variable SWITCHBOARD_APPROVAL_TIMEOUT_SECS): invalid type: string \"soon\", expected \
             u64",
        ),
    ];
    for (name, value, expected) in cases {
        let output = command(data_dir.path())
            .env(name, value)
            .args(["serve", "--bind", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end(), expected);
    }
    let output = command(data_dir.path())
        .env("SWITCHBOARD_CHAT_MAX_TOOL_STEPZ", "3")
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "switchboard: invalid configuration: `chat.max_tool_stepz` (set by environment \
             variable SWITCHBOARD_CHAT_MAX_TOOL_STEPZ): unknown field `max_tool_stepz`"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn sigterm_stops_the_service_cleanly() {
    let data_dir = tempfile::tempdir().unwrap();
    let service = Service::start(data_dir.path());
    let health = reqwest::get(service.url("/healthz")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let base_url = service.base_url.clone();
    let status = service.terminate(Duration::from_secs(10));
    assert!(status.success(), "exit status {status:?}");
    assert!(
        reqwest::get(format!("{base_url}/healthz")).await.is_err(),
        "still answering after exit"
    );
}
