//! Malformed input, short CI version (issue 18, target 3; the bench
//! `benches/malformed_input.rs` sends 100,000 + 20,000): seeded malformed JSON-RPC to `/mcp` and
//! `/mcp/rpc`, malformed REST requests, and malformed answers from a stdio upstream, through
//! the real accept loop. Nothing may panic and nothing may answer 5xx; an upstream that answers
//! a call wrongly fails that call as a gateway error (502) with a typed body, and the session
//! keeps serving proper calls.

use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::malformed::{
    PANICS, Rng, count_panics, malformed_upstream_script, mcp_probe, rest_probe, run,
    upstream_probe,
};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use switchboard_mcp_client::McpClientConfig;

const SEED: u64 = 0x5eed_0018;

/// A server with every engine running (chat included, offline model), whose MCP client gives
/// up on an upstream call after 5 s.
pub async fn start() -> ChatServer {
    let defaults = ChatOptions::default();
    ChatServer::start(ChatOptions {
        mcp: McpClientConfig {
            tool_call_timeout_secs: 5,
            ..defaults.mcp.clone()
        },
        ..defaults
    })
    .await
}

/// Registers the malformed stdio fixture; returns its id.
pub async fn register_malformed_upstream(server: &ChatServer) -> String {
    let response = server
        .client
        .post(server.url("/api/mcp/servers"))
        .bearer_auth(&server.token)
        .json(&json!({
            "name": "malformed",
            "transport": "stdio",
            "command": "python3",
            "args": [malformed_upstream_script()],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    created["id"].as_str().unwrap().to_owned()
}

/// Calls the fixture's proper tool: the session must still serve it.
pub async fn proper_call_works(server: &ChatServer, id: &str) -> bool {
    let response = server
        .client
        .post(server.url(&format!("/api/mcp/servers/{id}/tools/ok/call")))
        .bearer_auth(&server.token)
        .json(&json!({"arguments": {}}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    status == 200 && body.to_string().contains("\"ok\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_and_upstream_answers_never_panic_or_answer_5xx() {
    count_panics();
    let server = start().await;
    let base = server.url("");
    let upstream = register_malformed_upstream(&server).await;
    let mut rng = Rng::new(SEED);

    let probes: Vec<_> = (0..3_000).map(|_| mcp_probe(&mut rng)).collect();
    let mcp = run(&server.client, &base, &server.token, probes.into_iter(), 8).await;
    assert_eq!(
        mcp.server_errors(),
        0,
        "/mcp: {:?}\n{:#?}",
        mcp.statuses,
        mcp.failures
    );

    let probes: Vec<_> = (0..1_000)
        .map(|_| rest_probe(&mut rng, &upstream))
        .collect();
    let rest = run(&server.client, &base, &server.token, probes.into_iter(), 8).await;
    assert_eq!(
        rest.server_errors(),
        0,
        "REST: {:?}\n{:#?}",
        rest.statuses,
        rest.failures
    );

    let probes: Vec<_> = (0..120)
        .map(|_| upstream_probe(&mut rng, &upstream))
        .collect();
    let stdio = run(&server.client, &base, &server.token, probes.into_iter(), 4).await;
    let unexpected: usize = stdio
        .statuses
        .iter()
        .filter(|(status, _)| !matches!(**status, 200 | 502))
        .map(|(_, count)| count)
        .sum();
    assert_eq!(
        unexpected, 0,
        "stdio upstream: {:?}\n{:#?}",
        stdio.statuses, stdio.failures
    );
    assert!(
        proper_call_works(&server, &upstream).await,
        "the upstream session stopped serving"
    );

    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "panics in the server");
}

/// The driver's own checks: a server that answers before reading a body and closes is a
/// refusal with the status it wrote, not a transport failure (the CI flake: a deeply nested
/// body to `GET /api/kg/schema` answered early, the client saw a broken pipe and recorded "no
/// answer"); a server that answers 500, closes without a word or hangs still fails.
mod driver {
    use crate::support::malformed::{Probe, send_within};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpSocket};

    /// How a fake server treats each connection after reading the request's headers.
    #[derive(Clone, Copy)]
    enum Behaviour {
        /// Writes this status and closes without reading the body.
        AnswerEarly(u16),
        /// Closes without writing anything.
        CloseSilently,
        /// Keeps the connection open and never answers.
        Hang,
    }

    /// A listener with a tiny receive buffer, so a client cannot hand its whole body to the
    /// kernel and is still writing when the answer comes and the connection is reset.
    async fn fake_server(behaviour: Behaviour) -> String {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(2048).unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener: TcpListener = socket.listen(16).unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    if let Behaviour::AnswerEarly(status) = behaviour {
                        // Answers before reading anything, and resets the connection at once
                        // (what a server closing with an unread body in its buffer does).
                        let answer = format!(
                            "HTTP/1.1 {status} Refused\r\ncontent-length: 7\r\nconnection: close\r\n\r\nrefused"
                        );
                        let _ = stream.write_all(answer.as_bytes()).await;
                        let _ = stream.set_zero_linger();
                        return;
                    }
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    match behaviour {
                        Behaviour::AnswerEarly(_) => {}
                        Behaviour::CloseSilently => {}
                        Behaviour::Hang => tokio::time::sleep(Duration::from_secs(3600)).await,
                    }
                });
            }
        });
        format!("http://{address}")
    }

    /// A 60 KB body (under the body limit) to `GET /api/kg/schema`, as in the flake.
    fn probe() -> Probe {
        Probe {
            class: "deep_nesting",
            method: reqwest::Method::GET,
            path: "/api/kg/schema".to_owned(),
            headers: vec![("content-type", b"application/json".to_vec())],
            body: format!("{{\"schema\":{}}}", "[".repeat(60_000)).into_bytes(),
            authorized: true,
        }
    }

    /// The status recorded, the failure if any, and whether reqwest lost the answer (so it
    /// had to be read from a request sent by hand).
    async fn status_of(behaviour: Behaviour) -> (u16, Option<String>, bool) {
        let base = fake_server(behaviour).await;
        let client = switchboard_test_support::http_client::http_client();
        let (_, status, resent, failure) =
            send_within(&client, &base, "t", probe(), Duration::from_secs(2)).await;
        (status, failure, resent)
    }

    #[tokio::test]
    async fn an_early_answer_and_a_closed_connection_is_a_refusal_with_its_status() {
        let mut lost_by_reqwest = 0;
        for _ in 0..20 {
            let (status, failure, resent) = status_of(Behaviour::AnswerEarly(400)).await;
            assert_eq!((status, failure), (400, None));
            lost_by_reqwest += usize::from(resent);
        }
        // The flake's condition: the client's own send failed on the early answer.
        assert!(lost_by_reqwest > 0, "the early answer never broke the send");
    }

    #[tokio::test]
    async fn an_early_500_still_fails() {
        let (status, failure, _) = status_of(Behaviour::AnswerEarly(500)).await;
        assert_eq!(status, 500);
        assert!(failure.is_some());
    }

    #[tokio::test]
    async fn a_connection_closed_without_an_answer_still_fails() {
        let (status, failure, _) = status_of(Behaviour::CloseSilently).await;
        assert_eq!(status, 0);
        assert!(failure.unwrap().contains("closed without an answer"));
    }

    #[tokio::test]
    async fn a_server_that_never_answers_still_fails() {
        let (status, failure, _) = status_of(Behaviour::Hang).await;
        assert_eq!(status, 0);
        assert!(failure.unwrap().contains("no answer within"));
    }
}
