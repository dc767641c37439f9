//! The knowledge graph: a whole graph round-trips, schema versions and records are appended
//! and deleted atomically, and nothing crosses workspaces.

use crate::fixtures::workspace_with_owner;
use crate::harness::{TestStore, store_test};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde_json::json;
use switchboard_kg::{
    KnowledgeGraph, NewObject, NewRelationship, ObjectType, SchemaEdit, sample_graph,
};
use switchboard_store::{StoreError, StoredKnowledgeGraph};

store_test!(
    a_whole_graph_round_trips_and_is_saved_only_once,
    schema_updates_and_records_append_and_delete,
    graphs_stay_in_their_workspace,
);

fn now() -> DateTime<Utc> {
    Utc::now()
        .duration_trunc(TimeDelta::microseconds(1))
        .unwrap()
}

fn stored(graph: &KnowledgeGraph) -> StoredKnowledgeGraph {
    let data = graph.export();
    StoredKnowledgeGraph {
        generation: 0,
        versions: graph.history().versioned_schemas().to_vec(),
        changelog: graph.history().changelog().to_vec(),
        objects: data.objects,
        relationships: data.relationships,
    }
}

fn sorted(mut graph: StoredKnowledgeGraph) -> StoredKnowledgeGraph {
    graph.objects.sort_by(|a, b| a.id.cmp(&b.id));
    graph.relationships.sort_by(|a, b| a.id.cmp(&b.id));
    graph
}

async fn a_whole_graph_round_trips_and_is_saved_only_once(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    assert_eq!(store.kg_load(&workspace.id).await.unwrap(), None);
    let sample = stored(&sample_graph(now()));
    assert_eq!(
        store
            .kg_save_new_graph(&workspace.id, &sample)
            .await
            .unwrap(),
        Some(1),
        "stored, generation 1"
    );
    let loaded = store.kg_load(&workspace.id).await.unwrap().expect("stored");
    assert_eq!(
        sorted(loaded.clone()),
        sorted(StoredKnowledgeGraph {
            generation: 1,
            ..sample.clone()
        })
    );
    assert_eq!(loaded.versions.len(), 4);
    assert_eq!(
        store
            .kg_save_new_graph(&workspace.id, &sample)
            .await
            .unwrap(),
        None,
        "only once"
    );
    assert_eq!(store.kg_generation(&workspace.id).await.unwrap(), 1);

    let restored =
        switchboard_kg::SchemaHistory::from_parts(loaded.versions, loaded.changelog).unwrap();
    let graph = KnowledgeGraph::restore(restored, loaded.objects, loaded.relationships).unwrap();
    assert_eq!(graph.object_count(), sample.objects.len());
    assert_eq!(
        graph.schema().content_hash(),
        sample.versions[3].version.version
    );
}

async fn schema_updates_and_records_append_and_delete(test: TestStore) {
    let store = &test.store;
    let (workspace, _) = workspace_with_owner(store, "acme").await;
    let mut graph = sample_graph(now());
    store
        .kg_save_new_graph(&workspace.id, &stored(&graph))
        .await
        .unwrap();

    let update = graph
        .plan_schema_edit(
            SchemaEdit::UpsertObjectType {
                object_type: ObjectType::new("Meeting", "", vec![]),
            },
            now(),
            Some("meetings".into()),
        )
        .unwrap()
        .unwrap();
    store
        .kg_save_schema_update(&workspace.id, 1, &update)
        .await
        .unwrap();
    graph.commit_schema(update.clone());
    let duplicate = store
        .kg_save_schema_update(&workspace.id, 2, &update)
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, StoreError::UniqueViolation { .. }),
        "{duplicate}"
    );
    // A change planned on an older generation (another replica stored one since) is refused,
    // and stores nothing.
    let stale = store
        .kg_insert_records(&workspace.id, 1, &[], &[])
        .await
        .unwrap_err();
    assert!(matches!(stale, StoreError::Conflict(_)), "{stale}");
    assert_eq!(store.kg_generation(&workspace.id).await.unwrap(), 2);

    let meeting = graph
        .plan_object(
            NewObject {
                id: Some("meeting-1".into()),
                object_type: "Meeting".into(),
                properties: Default::default(),
            },
            now(),
        )
        .unwrap();
    graph.insert_object(meeting.clone());
    let tag = graph
        .plan_relationship(
            NewRelationship {
                id: Some("rel-1".into()),
                relationship_type: "tagged_with".into(),
                from_id: "doc-q4-okrs".into(),
                to_id: "tag-design".into(),
                properties: json!({}).as_object().cloned().unwrap(),
            },
            now(),
        )
        .unwrap();
    store
        .kg_insert_records(&workspace.id, 2, &[meeting], std::slice::from_ref(&tag))
        .await
        .unwrap();
    let loaded = store.kg_load(&workspace.id).await.unwrap().unwrap();
    assert_eq!(loaded.versions.len(), 5);
    assert_eq!(
        loaded.versions[4].version.message.as_deref(),
        Some("meetings")
    );
    assert_eq!(
        loaded.changelog.last().unwrap().change.description,
        "Added object type Meeting (0 properties)"
    );
    assert!(loaded.objects.iter().any(|o| o.id == "meeting-1"));
    assert!(loaded.relationships.contains(&tag));

    let dangling = store
        .kg_insert_records(
            &workspace.id,
            3,
            &[],
            &[switchboard_kg::RelationshipRecord {
                id: "rel-2".into(),
                to_id: "nope".into(),
                ..tag.clone()
            }],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(dangling, StoreError::NotFound { .. }),
        "{dangling}"
    );

    let touching_team: usize = loaded
        .relationships
        .iter()
        .filter(|r| r.from_id == "team-design" || r.to_id == "team-design")
        .count();
    assert!(touching_team > 0);
    store
        .kg_delete_records(
            &workspace.id,
            3,
            &["team-design".to_owned()],
            &["rel-1".to_owned()],
        )
        .await
        .unwrap();
    let after = store.kg_load(&workspace.id).await.unwrap().unwrap();
    assert!(!after.objects.iter().any(|o| o.id == "team-design"));
    assert_eq!(
        after.relationships.len(),
        loaded.relationships.len() - touching_team - 1
    );
}

async fn graphs_stay_in_their_workspace(test: TestStore) {
    let store = &test.store;
    let (acme, _) = workspace_with_owner(store, "acme").await;
    let (globex, _) = workspace_with_owner(store, "globex").await;
    let sample = stored(&sample_graph(now()));
    store.kg_save_new_graph(&acme.id, &sample).await.unwrap();
    assert_eq!(store.kg_load(&globex.id).await.unwrap(), None);
    // globex cannot link to acme's objects: the foreign key is per workspace.
    assert!(
        store
            .kg_save_new_graph(
                &globex.id,
                &StoredKnowledgeGraph {
                    versions: sample.versions.clone(),
                    ..Default::default()
                }
            )
            .await
            .unwrap()
            .is_some()
    );
    let cross = store
        .kg_insert_records(&globex.id, 1, &[], &sample.relationships[..1])
        .await
        .unwrap_err();
    assert!(matches!(cross, StoreError::NotFound { .. }), "{cross}");
    store
        .kg_delete_records(&globex.id, 1, &["doc-q4-okrs".to_owned()], &[])
        .await
        .unwrap();
    let acme_graph = store.kg_load(&acme.id).await.unwrap().unwrap();
    assert!(
        acme_graph.objects.iter().any(|o| o.id == "doc-q4-okrs"),
        "acme's object survives globex's delete"
    );
}
