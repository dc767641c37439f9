//! A write acknowledged over HTTP survives `kill -9` of the process.

use crate::process::{ADMIN_TOKEN, Service};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const WRITES: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill_9() {
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let service = Service::start(data_dir.path());

    // Concurrent writers, each write acknowledged with 201 before we count it.
    let mut writers = Vec::new();
    for index in 0..WRITES {
        let client = client.clone();
        let url = service.url("/api/tokens");
        writers.push(tokio::spawn(async move {
            let response = client
                .post(url)
                .bearer_auth(ADMIN_TOKEN)
                .json(&json!({ "name": format!("durable-{index}"), "scopes": ["chat:use"] }))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::CREATED);
            let body: Value = response.json().await.unwrap();
            (
                body["token"]["id"].as_str().unwrap().to_owned(),
                body["plaintext"].as_str().unwrap().to_owned(),
            )
        }));
    }
    let mut acknowledged = Vec::new();
    for writer in writers {
        acknowledged.push(writer.await.unwrap());
    }
    // One acknowledged revocation too: it must not come back to life.
    let (revoked_id, revoked_plaintext) = acknowledged.pop().unwrap();
    let revoked = client
        .delete(service.url(&format!("/api/tokens/{revoked_id}")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);

    service.kill_9();
    let service = Service::start(data_dir.path());

    let listed: Value = client
        .get(service.url("/api/tokens"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed_ids: BTreeSet<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|token| token["revoked_at"].is_null())
        .map(|token| token["id"].as_str().unwrap())
        .collect();
    for (id, plaintext) in &acknowledged {
        assert!(
            listed_ids.contains(id.as_str()),
            "token {id} lost after kill -9"
        );
        let me = client
            .get(service.url("/api/me"))
            .bearer_auth(plaintext)
            .send()
            .await
            .unwrap();
        assert_eq!(
            me.status(),
            StatusCode::OK,
            "token {id} no longer authenticates"
        );
    }
    assert!(!listed_ids.contains(revoked_id.as_str()));
    let after_revoke = client
        .get(service.url("/api/me"))
        .bearer_auth(&revoked_plaintext)
        .send()
        .await
        .unwrap();
    assert_eq!(after_revoke.status(), StatusCode::UNAUTHORIZED);
}
