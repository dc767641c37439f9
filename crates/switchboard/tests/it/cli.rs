//! Admin subcommands act on the store directly; what they create works over HTTP.

use crate::process::{ADMIN_TOKEN, Service, run_cli};
use reqwest::StatusCode;
use serde_json::Value;

fn stdout_of(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "command failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The value after `label` on the line that starts with it.
fn field(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in:\n{text}"))
        .trim()
        .to_owned()
}

#[tokio::test]
async fn workspaces_and_tokens_made_on_the_command_line_work_over_http() {
    let data_dir = tempfile::tempdir().unwrap();
    let migrated = stdout_of(&run_cli(data_dir.path(), &["migrate"]));
    assert!(
        migrated.contains("sqlite store is at migration"),
        "{migrated}"
    );

    let created = stdout_of(&run_cli(data_dir.path(), &["workspace", "create", "acme"]));
    let owner_token = field(&created, "owner token:");
    let listed = stdout_of(&run_cli(data_dir.path(), &["workspace", "list"]));
    assert!(listed.contains("acme"), "{listed}");

    let issued = stdout_of(&run_cli(
        data_dir.path(),
        &[
            "token",
            "create",
            "--workspace",
            "acme",
            "--name",
            "ci",
            "--scopes",
            "chat:use,schema:read",
        ],
    ));
    let ci_token = field(&issued, "token:");
    let ci_token_id = field(&issued, "token id:");
    let doomed = stdout_of(&run_cli(
        data_dir.path(),
        &[
            "token",
            "create",
            "--workspace",
            "acme",
            "--name",
            "doomed",
            "--scopes",
            "chat:use",
        ],
    ));
    let doomed_token = field(&doomed, "token:");
    let doomed_id = field(&doomed, "token id:");
    stdout_of(&run_cli(
        data_dir.path(),
        &["token", "revoke", &doomed_id, "--workspace", "acme"],
    ));
    let tokens = stdout_of(&run_cli(
        data_dir.path(),
        &["token", "list", "--workspace", "acme"],
    ));
    assert!(
        tokens.contains(&ci_token_id) && tokens.contains("revoked"),
        "{tokens}"
    );

    let bad_scope = run_cli(
        data_dir.path(),
        &[
            "token",
            "create",
            "--workspace",
            "acme",
            "--name",
            "x",
            "--scopes",
            "root",
        ],
    );
    assert!(!bad_scope.status.success());
    assert!(String::from_utf8_lossy(&bad_scope.stderr).contains("unknown scope 'root'"));

    let service = Service::start(data_dir.path());
    let client = reqwest::Client::new();
    let me = |token: String| {
        let request = client.get(service.url("/api/me")).bearer_auth(token);
        async move { request.send().await.unwrap() }
    };
    let owner_me = me(owner_token).await;
    assert_eq!(owner_me.status(), StatusCode::OK);
    let owner_me: Value = owner_me.json().await.unwrap();
    assert_eq!(owner_me["workspace"]["name"], "acme");
    let ci_me: Value = me(ci_token).await.json().await.unwrap();
    assert_eq!(
        ci_me["scopes"],
        serde_json::json!(["chat:use", "schema:read"])
    );
    assert_eq!(me(doomed_token).await.status(), StatusCode::UNAUTHORIZED);
    // The store was not empty, so no `default` workspace and the admin token was not imported.
    assert_eq!(
        me(ADMIN_TOKEN.to_owned()).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

/// Where each column of a table line starts (runs of two or more spaces separate columns;
/// the header's single-word titles make its starts the reference).
fn column_starts(line: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let bytes = line.as_bytes();
    for index in 1..bytes.len() {
        if bytes[index] != b' ' && bytes[index - 1] == b' ' {
            starts.push(index);
        }
    }
    starts
}

#[test]
fn listings_print_aligned_columns() {
    let data_dir = tempfile::tempdir().unwrap();
    stdout_of(&run_cli(data_dir.path(), &["workspace", "create", "acme"]));
    stdout_of(&run_cli(
        data_dir.path(),
        &[
            "token",
            "create",
            "--workspace",
            "acme",
            "--name",
            "ci",
            "--scopes",
            "chat:use",
        ],
    ));
    for (listing, header_columns) in [
        (
            stdout_of(&run_cli(data_dir.path(), &["workspace", "list"])),
            3,
        ),
        (
            stdout_of(&run_cli(
                data_dir.path(),
                &["token", "list", "--workspace", "acme"],
            )),
            5,
        ),
    ] {
        let mut lines = listing.lines();
        let header = column_starts(lines.next().unwrap());
        assert_eq!(header.len(), header_columns, "{listing}");
        for line in lines {
            let starts = column_starts(line);
            for start in &header[1..] {
                assert!(
                    starts.contains(start),
                    "column at {start} not aligned in:\n{listing}"
                );
            }
        }
    }
}
