//! Workspace isolation under load (issue 18, target 5, ContextForge-style): 200 people in two
//! workspaces read at once for a bounded time, each through the real HTTP API with their own
//! token — their conversation list, their conversation, who they are — and each also asks for
//! a conversation of someone in the other workspace. Every answer is checked: a list holds only
//! the caller's conversation, `/api/me` names the caller's workspace, the other workspace's
//! conversation is 404. The figure is 0 cross-workspace reads.
//!
//! CI runs 3 s; `SWITCHBOARD_ISOLATION_SECS=300` runs the 5 minutes.

use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::{other_workspace, person_with_token};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use switchboard_core::{ScopeSet, WorkspaceId};
use switchboard_store::{Store, UserRole};

const PEOPLE_PER_WORKSPACE: usize = 100;

/// One person of the load: their token, workspace and conversation.
#[derive(Clone, Debug)]
struct Person {
    token: String,
    workspace_id: String,
    conversation_id: String,
}

#[derive(Debug, Default)]
struct Tally {
    reads: AtomicU64,
    cross_workspace_reads: AtomicU64,
    wrong_answers: AtomicU64,
}

async fn people_of(
    server: &ChatServer,
    store: &Store,
    workspace_id: &WorkspaceId,
    prefix: &str,
) -> Vec<Person> {
    let mut people = Vec::new();
    for index in 0..PEOPLE_PER_WORKSPACE {
        let name = format!("{prefix} {index}");
        let (_, token) =
            person_with_token(store, workspace_id, &name, UserRole::Member, "chat:use").await;
        let response = server
            .client
            .post(server.url("/chat/conversations"))
            .bearer_auth(&token)
            .json(&json!({"title": format!("{prefix} {index}'s")}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        let created: Value = response.json().await.unwrap();
        people.push(Person {
            token,
            workspace_id: workspace_id.to_string(),
            conversation_id: created["id"].as_str().unwrap().to_owned(),
        });
    }
    people
}

/// One round of `person`'s reads; `stranger` is someone of the other workspace.
async fn one_round(server: &ChatServer, person: &Person, stranger: &Person, tally: &Tally) {
    let get = |path: String| {
        server
            .client
            .get(server.url(&path))
            .bearer_auth(&person.token)
            .send()
    };
    let mut wrong = 0;
    let mut cross = 0;

    let list: Value = get("/chat/conversations".into())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["conversations"]
        .as_array()
        .map(|conversations| {
            conversations
                .iter()
                .filter_map(|conversation| conversation["id"].as_str())
                .collect()
        })
        .unwrap_or_default();
    if ids.contains(&stranger.conversation_id.as_str()) {
        cross += 1;
    }
    if ids != [person.conversation_id.as_str()] {
        wrong += 1;
    }

    let own = get(format!("/chat/conversations/{}", person.conversation_id))
        .await
        .unwrap();
    let own: Value = own.json().await.unwrap();
    if own["conversation"]["id"] != person.conversation_id.as_str() {
        wrong += 1;
    }

    let me: Value = get("/api/me".into()).await.unwrap().json().await.unwrap();
    if me["workspace"]["id"] != person.workspace_id.as_str() {
        cross += 1;
    }

    let theirs = get(format!("/chat/conversations/{}", stranger.conversation_id))
        .await
        .unwrap();
    if theirs.status() != 404 {
        cross += 1;
    }

    tally.reads.fetch_add(4, Ordering::Relaxed);
    tally.wrong_answers.fetch_add(wrong, Ordering::Relaxed);
    tally
        .cross_workspace_reads
        .fetch_add(cross, Ordering::Relaxed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_people_in_two_workspaces_read_only_their_own_data() {
    let seconds = std::env::var("SWITCHBOARD_ISOLATION_SECS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(3);
    let server = Arc::new(ChatServer::start(ChatOptions::default()).await);
    let store = server.store.clone();
    let (workspace_b, _) = other_workspace(&store, "isolation-b", ScopeSet::all()).await;
    let people_a = people_of(&server, &store, &server.workspace_id, "a").await;
    let people_b = people_of(&server, &store, &workspace_b, "b").await;
    let tally = Arc::new(Tally::default());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for (index, person) in people_a.iter().chain(&people_b).enumerate() {
        // Someone of the other workspace, different for each person.
        let others = if index < PEOPLE_PER_WORKSPACE {
            &people_b
        } else {
            &people_a
        };
        let stranger = others[(index * 7 + 3) % PEOPLE_PER_WORKSPACE].clone();
        let (person, server, tally) = (person.clone(), Arc::clone(&server), Arc::clone(&tally));
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                one_round(&server, &person, &stranger, &tally).await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let reads = tally.reads.load(Ordering::Relaxed);
    let cross = tally.cross_workspace_reads.load(Ordering::Relaxed);
    let wrong = tally.wrong_answers.load(Ordering::Relaxed);
    println!(
        "isolation load: {} people × {seconds} s: {reads} reads, {cross} cross-workspace reads, {wrong} wrong answers",
        2 * PEOPLE_PER_WORKSPACE
    );
    assert!(
        reads >= 2 * PEOPLE_PER_WORKSPACE as u64 * 4,
        "{reads} reads"
    );
    assert_eq!(cross, 0, "cross-workspace reads");
    assert_eq!(wrong, 0, "answers about someone else");
}
