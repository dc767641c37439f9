//! The sample dataset has the promised shape, history and relationships: it is what a fresh
//! install shows, and the offline planner's example questions name its objects.

use crate::fixed_now;
use chrono::Duration;
use switchboard_kg::{ChangeKind, ChangeSubject, ChangelogSince, sample_graph};

#[test]
fn sample_has_five_types_four_versions_and_connected_data() {
    let graph = sample_graph(fixed_now());
    assert_eq!(
        graph.schema().object_type_names(),
        vec!["Document", "Person", "Project", "Tag", "Team"]
    );
    let versions: Vec<_> = graph.history().versions().collect();
    assert_eq!(versions.len(), 4);
    assert_eq!(versions[3].created_at, fixed_now() - Duration::days(5));
    assert_eq!(
        graph.history().current().unwrap().version,
        graph.schema().content_hash()
    );
    assert_eq!(graph.object_count_of_type("Document"), 12);
    assert_eq!(graph.object_count_of_type("Person"), 8);
    assert!(
        graph.relationship_count() > 50,
        "{}",
        graph.relationship_count()
    );
}

#[test]
fn sample_history_is_identical_across_runs() {
    let first = sample_graph(fixed_now());
    let second = sample_graph(fixed_now() + Duration::days(3));
    let hashes = |graph: &switchboard_kg::KnowledgeGraph| {
        graph
            .history()
            .versions()
            .map(|v| v.version.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(hashes(&first), hashes(&second));
}

#[test]
fn sample_changelog_tells_the_story() {
    let graph = sample_graph(fixed_now());
    let since = ChangelogSince::parse("2").unwrap();
    let (entries, total) = graph.history().changes_since(Some(&since), 100).unwrap();
    assert_eq!(total, entries.len());
    let removed_task = entries
        .iter()
        .find(|entry| {
            entry.change.change == ChangeKind::Removed
                && entry.change.subject == ChangeSubject::Type
        })
        .expect("Task removal is recorded");
    assert_eq!(removed_task.change.type_name.as_deref(), Some("Task"));
    assert_eq!(removed_task.sequence, 4);
    assert!(entries.iter().any(|entry| entry.change.description
        == "Added property status (enum: draft, in_review, published, archived) to Document"));
    assert!(entries.iter().all(|entry| entry.sequence > 2));
}
