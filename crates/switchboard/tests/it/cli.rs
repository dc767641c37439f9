//! Admin subcommands act on the store directly; what they create works over HTTP.

use crate::process::{ADMIN_TOKEN, Service, json_of, run_cli, stdout_of};
use reqwest::StatusCode;
use serde_json::Value;

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
    let client = switchboard_test_support::http_client::http_client();
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
    stdout_of(&run_cli(
        data_dir.path(),
        &["user", "create", "bob", "--workspace", "acme"],
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
            6,
        ),
        (
            stdout_of(&run_cli(
                data_dir.path(),
                &["user", "list", "--workspace", "acme"],
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

fn failure_of(output: &std::process::Output) -> String {
    assert!(!output.status.success(), "command succeeded unexpectedly");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn users_made_on_the_command_line_act_through_their_own_tokens() {
    let data_dir = tempfile::tempdir().unwrap();
    let dir = data_dir.path();
    stdout_of(&run_cli(dir, &["workspace", "create", "acme"]));
    let bob = stdout_of(&run_cli(
        dir,
        &["user", "create", "bob", "--workspace", "acme"],
    ));
    let bob_id = field(&bob, "user id:");
    assert_eq!(field(&bob, "role:"), "member");
    let carol = stdout_of(&run_cli(
        dir,
        &[
            "user",
            "create",
            "carol",
            "--role",
            "admin",
            "--workspace",
            "acme",
        ],
    ));
    assert_eq!(field(&carol, "role:"), "admin");

    let duplicate = failure_of(&run_cli(
        dir,
        &["user", "create", "bob", "--workspace", "acme"],
    ));
    assert!(
        duplicate.contains("creating user 'bob' in workspace 'acme'")
            && duplicate.contains("a user with this name already exists"),
        "{duplicate}"
    );
    let blank = failure_of(&run_cli(
        dir,
        &["user", "create", " ", "--workspace", "acme"],
    ));
    assert!(blank.contains("invalid name: must not be empty"), "{blank}");
    let owner_role = failure_of(&run_cli(
        dir,
        &[
            "user",
            "create",
            "eve",
            "--role",
            "owner",
            "--workspace",
            "acme",
        ],
    ));
    assert!(owner_role.contains("invalid value 'owner'"), "{owner_role}");
    let reserved = failure_of(&run_cli(
        dir,
        &[
            "user",
            "create",
            "switchboard-capability-sync",
            "--workspace",
            "acme",
        ],
    ));
    assert!(
        reserved.contains(
            "the name 'switchboard-capability-sync' is reserved for Switchboard's own service user"
        ),
        "{reserved}"
    );

    let listed = stdout_of(&run_cli(dir, &["user", "list", "--workspace", "acme"]));
    let rows: Vec<Vec<&str>> = listed
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(
        rows.iter().map(|row| (row[1], row[2])).collect::<Vec<_>>(),
        vec![("owner", "owner"), ("bob", "member"), ("carol", "admin")],
        "{listed}"
    );
    assert_eq!(rows[1][0], bob_id);

    let token_for = |user: &str, scopes: &str| {
        run_cli(
            dir,
            &[
                "token",
                "create",
                "--workspace",
                "acme",
                "--name",
                "laptop",
                "--scopes",
                scopes,
                "--user",
                user,
            ],
        )
    };
    let bob_issued = stdout_of(&token_for("bob", "chat:use"));
    let bob_token = field(&bob_issued, "token:");
    let carol_issued = stdout_of(&token_for("carol", "admin"));
    let carol_token = field(&carol_issued, "token:");
    // The listing names the user each token acts as.
    let tokens = stdout_of(&run_cli(dir, &["token", "list", "--workspace", "acme"]));
    let acting: Vec<(String, String)> = tokens
        .lines()
        .skip(1)
        .map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            (columns[0].to_owned(), columns[4].to_owned())
        })
        .collect();
    assert_eq!(
        acting[acting.len() - 2..],
        [
            (field(&bob_issued, "token id:"), "bob".to_owned()),
            (field(&carol_issued, "token id:"), "carol".to_owned()),
        ],
        "{tokens}"
    );
    assert!(
        acting[..acting.len() - 2]
            .iter()
            .all(|(_, user)| user == "owner"),
        "{tokens}"
    );
    let member_admin = failure_of(&token_for("bob", "chat:use,admin"));
    assert!(
        member_admin.contains(
            "invalid scopes: user 'bob' is a member; only owners and admins may hold the `admin` scope"
        ),
        "{member_admin}"
    );
    let nobody = failure_of(&token_for("nobody", "chat:use"));
    assert!(
        nobody.contains("no user named 'nobody' in workspace 'acme'"),
        "{nobody}"
    );

    let service = Service::start(dir);
    let client = switchboard_test_support::http_client::http_client();
    let bob_me: Value = client
        .get(service.url("/api/me"))
        .bearer_auth(&bob_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(bob_me["user_id"], bob_id.as_str());
    assert_eq!(bob_me["scopes"], serde_json::json!(["chat:use"]));
    let users = client
        .get(service.url("/api/users"))
        .bearer_auth(&carol_token)
        .send()
        .await
        .unwrap();
    assert_eq!(users.status(), StatusCode::OK);
    let users: Value = users.json().await.unwrap();
    assert_eq!(users.as_array().unwrap().len(), 3, "{users}");
}

#[tokio::test]
async fn every_admin_command_prints_json_with_the_global_flag() {
    let data_dir = tempfile::tempdir().unwrap();
    let dir = data_dir.path();
    let migrated = json_of(&run_cli(dir, &["--json", "migrate"]));
    assert_eq!(migrated["backend"], "sqlite");
    assert!(migrated["migration"].as_i64().unwrap() >= 1, "{migrated}");

    let created = json_of(&run_cli(dir, &["workspace", "create", "acme", "--json"]));
    assert_eq!(created["name"], "acme");
    let owner_token = created["owner_token"].as_str().unwrap().to_owned();
    let workspaces = json_of(&run_cli(dir, &["workspace", "list", "--json"]));
    assert!(
        workspaces
            .as_array()
            .unwrap()
            .iter()
            .any(|workspace| workspace["name"] == "acme" && workspace["id"] == created["id"]),
        "{workspaces}"
    );

    let user = json_of(&run_cli(
        dir,
        &[
            "user",
            "create",
            "dana",
            "--role",
            "admin",
            "--workspace",
            "acme",
            "--json",
        ],
    ));
    assert_eq!(user["role"], "admin");
    let users = json_of(&run_cli(
        dir,
        &["--json", "user", "list", "--workspace", "acme"],
    ));
    assert_eq!(
        users.as_array().unwrap().len(),
        2,
        "owner and dana: {users}"
    );

    let issued = json_of(&run_cli(
        dir,
        &[
            "token",
            "create",
            "--workspace",
            "acme",
            "--name",
            "ci",
            "--scopes",
            "chat:use,schema:read",
            "--user",
            "dana",
            "--json",
        ],
    ));
    assert_eq!(
        issued["scopes"],
        serde_json::json!(["chat:use", "schema:read"])
    );
    assert_eq!(issued["user_id"], user["id"]);
    let secret = issued["token"].as_str().unwrap();
    assert_ne!(secret, owner_token);

    let revoked = json_of(&run_cli(
        dir,
        &[
            "token",
            "revoke",
            issued["id"].as_str().unwrap(),
            "--workspace",
            "acme",
            "--json",
        ],
    ));
    assert_eq!(revoked["revoked"], true);
    let tokens = json_of(&run_cli(
        dir,
        &["token", "list", "--workspace", "acme", "--json"],
    ));
    let row = tokens
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == issued["id"])
        .unwrap_or_else(|| panic!("{tokens}"));
    assert_eq!(row["state"], "revoked");
    assert_eq!(row["user"], "dana");
    // A token's secret is printed once, when it is issued, and never in a list.
    assert!(!tokens.to_string().contains(secret), "{tokens}");
}

#[test]
fn completions_are_printed_for_each_shell_without_a_store() {
    let data_dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef switchboard"),
        ("fish", "complete -c switchboard"),
    ] {
        let script = stdout_of(&run_cli(data_dir.path(), &["completions", shell]));
        assert!(script.contains(marker), "{shell}: {script}");
        for subcommand in ["serve", "token", "servers", "completions"] {
            assert!(script.contains(subcommand), "{shell} lacks {subcommand}");
        }
    }
    // Nothing was opened or created: completions need no data directory.
    assert_eq!(std::fs::read_dir(data_dir.path()).unwrap().count(), 0);
    let unknown = run_cli(data_dir.path(), &["completions", "tcsh"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("possible values"));
}

/// `gateway connect-config --client CLIENT` for https://sb.example.com with a token, and `extra`.
fn connect_config(
    data_dir: &std::path::Path,
    client: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "gateway",
        "connect-config",
        "--client",
        client,
        "--api-url",
        "https://sb.example.com",
        "--token",
        "sb_gateway_token",
    ];
    args.extend(extra);
    run_cli(data_dir, &args)
}

#[test]
fn gateway_connect_config_prints_what_each_client_takes() {
    let data_dir = tempfile::tempdir().unwrap();
    let config = |client: &str, bud: Option<&str>| {
        let extra: Vec<&str> = bud.map(|bud| vec!["--bud", bud]).unwrap_or_default();
        stdout_of(&connect_config(data_dir.path(), client, &extra))
    };
    let cursor: Value = serde_json::from_str(&config("cursor", None)).unwrap();
    let entry = &cursor["mcpServers"]["switchboard"];
    assert_eq!(entry["url"], "https://sb.example.com/gateway/mcp");
    assert_eq!(entry["headers"]["Authorization"], "Bearer sb_gateway_token");
    let vscode: Value = serde_json::from_str(&config("vscode", Some("research"))).unwrap();
    let entry = &vscode["servers"]["switchboard"];
    assert_eq!(entry["type"], "http");
    assert_eq!(
        entry["url"],
        "https://sb.example.com/gateway/buds/research/mcp"
    );
    assert_eq!(entry["headers"]["Authorization"], "Bearer sb_gateway_token");
    assert_eq!(
        config("claude-code", None).trim(),
        "claude mcp add --transport http switchboard 'https://sb.example.com/gateway/mcp' --header 'Authorization: Bearer sb_gateway_token'"
    );
    let refused = run_cli(
        data_dir.path(),
        &["gateway", "connect-config", "--client", "emacs"],
    );
    assert!(!refused.status.success());
}

#[test]
fn gateway_connect_config_names_one_servers_endpoint() {
    let data_dir = tempfile::tempdir().unwrap();
    let config = |client: &str, extra: &[&str]| {
        let mut extra = extra.to_vec();
        extra.extend(["--server", "files"]);
        connect_config(data_dir.path(), client, &extra)
    };
    let cursor: Value = serde_json::from_str(&stdout_of(&config("cursor", &[]))).unwrap();
    let entry = &cursor["mcpServers"]["switchboard-files"];
    assert_eq!(
        entry["url"],
        "https://sb.example.com/gateway/servers/files/mcp"
    );
    assert_eq!(entry["headers"]["Authorization"], "Bearer sb_gateway_token");
    let vscode: Value = serde_json::from_str(&stdout_of(&config("vscode", &[]))).unwrap();
    let entry = &vscode["servers"]["switchboard-files"];
    assert_eq!(entry["type"], "http");
    assert_eq!(
        entry["url"],
        "https://sb.example.com/gateway/servers/files/mcp"
    );
    assert_eq!(
        stdout_of(&config("claude-code", &[])).trim(),
        "claude mcp add --transport http 'switchboard-files' 'https://sb.example.com/gateway/servers/files/mcp' --header 'Authorization: Bearer sb_gateway_token'"
    );
    // A bud and a server are two different endpoints: asking for both is refused.
    let both = config("cursor", &["--bud", "research"]);
    assert!(!both.status.success());
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
}
