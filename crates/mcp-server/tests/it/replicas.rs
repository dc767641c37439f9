//! Replicas on one PostgreSQL database (a fresh schema per test) each hold a workspace's graph
//! in memory. A change stored through one is seen through the other at its next use; a change
//! planned on a graph the other replica has changed since is planned again on the stored graph
//! (stored once, never on a stale plan, and a refusal is the fresh graph's); writers on both
//! replicas at once all land.

use chrono::Utc;
use serde_json::json;
use std::sync::Arc;
use switchboard_core::WorkspaceId;
use switchboard_kg::{KgErrorKind, NewObject, ObjectType, SchemaEdit};
use switchboard_mcp_server::{
    CacheLifetimes, GraphError, KnowledgeGraphs, StoreGraphPersistence, WorkspaceGraph,
};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use switchboard_test_support::postgres::PostgresSchema;

/// Two replicas' graphs over `schema`, and the workspace (with the sample graph stored).
async fn two_replicas(
    schema: &PostgresSchema,
    data_dir: &std::path::Path,
) -> (KnowledgeGraphs, KnowledgeGraphs, WorkspaceId) {
    let config = DatabaseConfig {
        url: Some(schema.url()),
        max_connections: 4,
        ..DatabaseConfig::default()
    };
    let open = || async {
        let cipher = SecretCipher::from_key_bytes([3u8; 32]);
        Store::open(&config, data_dir, cipher).await.unwrap()
    };
    let replica = |store: Store| {
        KnowledgeGraphs::new(
            Arc::new(StoreGraphPersistence(store)),
            CacheLifetimes::default(),
        )
    };
    let workspace = open()
        .await
        .bootstrap_default(None)
        .await
        .unwrap()
        .expect("empty store")
        .workspace
        .id;
    let a = replica(open().await);
    let b = replica(open().await);
    assert!(
        a.load_sample_if_empty(&workspace, Utc::now())
            .await
            .unwrap()
    );
    (a, b, workspace)
}

fn tag(id: &str) -> NewObject {
    NewObject {
        id: Some(id.to_owned()),
        object_type: "Tag".to_owned(),
        properties: json!({"name": id}).as_object().cloned().unwrap(),
    }
}

async fn graph(graphs: &KnowledgeGraphs, workspace: &WorkspaceId) -> Arc<WorkspaceGraph> {
    graphs.workspace(workspace).await.unwrap()
}

fn has(graph: &WorkspaceGraph, id: &str) -> bool {
    graph.read().object(id).is_some()
}

fn kind(error: GraphError) -> KgErrorKind {
    match error {
        GraphError::Kg(error) => error.kind(),
        other => panic!("a storage error where the graph should refuse: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_replica_is_seen_through_the_other() {
    let schema = PostgresSchema::create();
    let data_dir = tempfile::tempdir().unwrap();
    let (a, b, workspace) = two_replicas(&schema, data_dir.path()).await;
    // B has its graph in memory before A changes anything.
    let before = graph(&b, &workspace).await;
    let objects_before = before.read().object_count();

    graph(&a, &workspace)
        .await
        .create_object(tag("from-a"))
        .await
        .unwrap();
    let seen = graph(&b, &workspace).await;
    assert!(has(&seen, "from-a"), "B sees A's object");
    assert_eq!(seen.read().object_count(), objects_before + 1);

    seen.delete_object("from-a").await.unwrap();
    let on_a = graph(&a, &workspace).await;
    assert!(!has(&on_a, "from-a"), "A sees B's delete");

    let meeting = ObjectType::new("Meeting", "", vec![]);
    let update = graph(&a, &workspace)
        .await
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: meeting,
            },
            Some("meetings".into()),
        )
        .await
        .unwrap()
        .expect("a new version");
    let on_b = graph(&b, &workspace).await;
    assert_eq!(on_b.read().schema().content_hash(), update.version.version);
    on_b.create_object(NewObject {
        id: Some("standup".into()),
        object_type: "Meeting".into(),
        properties: Default::default(),
    })
    .await
    .expect("B plans on A's schema");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_planned_on_a_stale_graph_is_planned_again_on_the_stored_one() {
    let schema = PostgresSchema::create();
    let data_dir = tempfile::tempdir().unwrap();
    let (a, b, workspace) = two_replicas(&schema, data_dir.path()).await;
    let on_a = graph(&a, &workspace).await;
    let on_b = graph(&b, &workspace).await;

    // B's handle was taken before A's write: its first plan is stale, its store refused, and
    // the write lands on the reloaded graph, which then holds both.
    on_a.create_object(tag("first")).await.unwrap();
    on_b.create_object(tag("second")).await.unwrap();
    assert!(has(&on_b, "first") && has(&on_b, "second"));
    let again = graph(&a, &workspace).await;
    assert!(has(&again, "second"));

    // What the fresh graph refuses is refused, not stored on the stale one.
    on_a.create_object(tag("taken")).await.unwrap();
    let duplicate = on_b.create_object(tag("taken")).await.unwrap_err();
    assert_eq!(kind(duplicate), KgErrorKind::Conflict);
    on_a.delete_object("first").await.unwrap();
    let gone = on_b.delete_object("first").await.unwrap_err();
    assert_eq!(kind(gone), KgErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_on_both_replicas_at_once_all_land() {
    let schema = PostgresSchema::create();
    let data_dir = tempfile::tempdir().unwrap();
    let (a, b, workspace) = two_replicas(&schema, data_dir.path()).await;
    let objects_before = graph(&a, &workspace).await.read().object_count();
    let writes = (0..40).map(|index| {
        let replica = if index % 2 == 0 { a.clone() } else { b.clone() };
        let workspace = workspace.clone();
        tokio::spawn(async move {
            let graph = replica.workspace(&workspace).await?;
            graph
                .create_object(tag(&format!("concurrent-{index}")))
                .await
        })
    });
    for write in futures::future::join_all(writes).await {
        write.unwrap().expect("every write lands");
    }
    for replica in [&a, &b] {
        let seen = graph(replica, &workspace).await;
        assert_eq!(seen.read().object_count(), objects_before + 40);
    }
}
