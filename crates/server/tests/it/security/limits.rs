//! Request limits and connection timeouts: body size, malformed input, slow and idle clients.

use crate::support::{TestServer, error_of};
use reqwest::StatusCode;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn an_oversized_body_gets_a_json_413_with_or_without_content_length() {
    let server = TestServer::start().await;
    let oversized = vec![b'x'; 200 * 1024];
    let with_length = server
        .client
        .post(server.url("/api/tokens"))
        .bearer_auth(&server.owner_token)
        .header("content-type", "application/json")
        .body(oversized.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(with_length.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (code, message) = error_of(with_length).await;
    assert_eq!(code, "payload_too_large");
    assert!(message.contains("65536"), "{message}");

    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = oversized
        .chunks(8 * 1024)
        .map(|chunk| Ok(chunk.to_vec()))
        .collect();
    let streamed = server
        .client
        .post(server.url("/api/tokens"))
        .bearer_auth(&server.owner_token)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_of(streamed).await.0, "payload_too_large");
}

#[tokio::test]
async fn framework_errors_use_the_json_error_shape() {
    let server = TestServer::start().await;
    let not_found = server
        .client
        .get(server.url("/no/such/route"))
        .send()
        .await
        .unwrap();
    assert_eq!(not_found.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_of(not_found).await.0, "not_found");

    let wrong_method = server
        .client
        .put(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(error_of(wrong_method).await.0, "method_not_allowed");

    let bad_json = server
        .client
        .post(server.url("/api/tokens"))
        .bearer_auth(&server.owner_token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_json.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_of(bad_json).await.0, "bad_request");

    let unknown_scope = server
        .client
        .post(server.url("/api/tokens"))
        .bearer_auth(&server.owner_token)
        .json(&serde_json::json!({ "name": "x", "scopes": ["root"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_scope.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let (code, message) = error_of(unknown_scope).await;
    assert_eq!(code, "invalid_request");
    assert!(message.contains("root"), "{message}");
}

/// Reads until the server closes the connection; returns how long that took, or `None` if
/// it was still open after `limit`.
async fn time_until_closed(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + limit).into(), stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
        }
    }
}

#[tokio::test]
async fn a_client_sending_headers_byte_by_byte_is_dropped() {
    let server = TestServer::start().await; // header_read_timeout_secs = 1
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n\r\n";
    let writer_task = tokio::spawn(async move {
        for byte in request {
            if writer.write_all(&[*byte]).await.is_err() {
                return false; // the server hung up on us: good
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        true // sent the whole head: the timeout did not fire
    });
    let started = Instant::now();
    let mut buffer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut buffer)).await;
    let elapsed = started.elapsed();
    assert!(read.is_ok(), "connection still open after 5 s");
    assert!(
        elapsed < Duration::from_secs(4),
        "dropped only after {elapsed:?}; the whole head takes ~7 s to send"
    );
    assert!(
        !String::from_utf8_lossy(&buffer).contains("200 OK"),
        "the slow request must not have been served"
    );
    writer_task.abort();
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let server = TestServer::start().await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut buffer = [0u8; 1024];
    let read = stream.read(&mut buffer).await.unwrap();
    assert!(String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 200"));
    let closed_after = time_until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(
        closed_after.is_some(),
        "an idle keep-alive connection stayed open for 5 s"
    );
}

#[tokio::test]
async fn an_encoded_nul_in_the_path_or_query_is_a_400_naming_it() {
    let server = TestServer::start().await;
    for path in [
        "/api/mcp/servers/kg%00",
        "/chat/conversations/abc%00def",
        "/api/audit?tool=schema%00version",
    ] {
        let response = server.get(path, &server.owner_token).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
        let (code, message) = error_of(response).await;
        assert_eq!(code, "bad_request", "{path}");
        assert!(message.contains("%00"), "{path}: {message}");
    }
    // A plain `%` sequence that is not NUL still reaches the route.
    let ordinary = server
        .get("/api/audit?tool=schema%5Fversion", &server.owner_token)
        .send()
        .await
        .unwrap();
    assert_eq!(ordinary.status(), StatusCode::OK);
}
