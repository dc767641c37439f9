//! Find with filters and pagination, traversal, counts and schema lookups on the sample graph.

use crate::fixed_now;
use serde_json::json;
use switchboard_kg::query::TraverseQuery;
use switchboard_kg::{Direction, KgErrorKind, sample_graph};

#[test]
fn find_filters_by_equality_and_operators() {
    let graph = sample_graph(fixed_now());
    let drafts = graph
        .find_objects("Document", Some(&json!({"status": "draft"})), None, None)
        .unwrap();
    let titles: Vec<&str> = drafts.objects.iter().map(|o| o.label()).collect();
    assert_eq!(
        titles,
        vec![
            "Pricing Proposal",
            "Research Notes: Ranking",
            "Search Relevance Study"
        ]
    );
    assert_eq!(drafts.total_matching, 3);
    let guides = graph
        .find_objects("Document", Some(&json!({"title": {"contains": "GUIDE"}, "status": {"in": ["published", "in_review"]}})), None, None)
        .unwrap();
    assert_eq!(guides.total_matching, 2);
    let error = graph
        .find_objects("Document", Some(&json!({"colour": "red"})), None, None)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "filter names unknown property 'colour' of Document (its properties: content, created_on, status, title)"
    );
    let error = graph
        .find_objects(
            "Document",
            Some(&json!({"title": {"like": "x"}})),
            None,
            None,
        )
        .unwrap_err();
    assert!(error.to_string().contains("unknown operator 'like'"));
}

#[test]
fn pagination_walks_every_object_once() {
    let graph = sample_graph(fixed_now());
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = graph
            .find_objects("Document", None, Some(5), cursor.as_deref())
            .unwrap();
        assert_eq!(page.total_matching, 12);
        seen.extend(page.objects.iter().map(|o| o.id.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(seen, sorted, "ids come in order, no repeats");
    assert_eq!(seen.len(), 12);
    assert!(
        graph
            .find_objects("Document", None, Some(500), None)
            .is_err()
    );
    assert!(
        graph
            .find_objects("Document", None, None, Some("zz-not-hex"))
            .is_err()
    );
}

#[test]
fn traverse_follows_direction_type_filter_and_depth() {
    let graph = sample_graph(fixed_now());
    let query =
        |relationship: Option<&str>, direction, target_type: Option<&str>, depth| TraverseQuery {
            start_id: "project-q4-planning".into(),
            relationship: relationship.map(str::to_owned),
            direction,
            target_type: target_type.map(str::to_owned),
            depth,
        };
    let documents = graph
        .traverse(&query(
            Some("belongs_to"),
            Direction::In,
            Some("Document"),
            1,
        ))
        .unwrap();
    let mut ids: Vec<&str> = documents
        .reached
        .iter()
        .map(|r| r.object.id.as_str())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec!["doc-product-roadmap", "doc-q3-retro", "doc-q4-okrs"]
    );
    assert!(
        documents
            .reached
            .iter()
            .all(|r| r.depth == 1 && r.via.relationship_type == "belongs_to")
    );

    let outgoing_only = graph
        .traverse(&query(Some("belongs_to"), Direction::Out, None, 1))
        .unwrap();
    assert!(outgoing_only.reached.is_empty());

    let people_two_hops = graph
        .traverse(&query(None, Direction::Both, Some("Person"), 2))
        .unwrap();
    let mut people: Vec<&str> = people_two_hops
        .reached
        .iter()
        .map(|r| r.object.id.as_str())
        .collect();
    people.sort();
    // Leader at depth 1; document authors and team members at depth 2.
    assert!(people.contains(&"person-ana-silva"));
    assert!(people.contains(&"person-farah-nasser"));
    assert!(
        people.contains(&"person-ben-okafor"),
        "platform member via owned_by -> member_of"
    );
    assert!(people_two_hops.reached.iter().all(|r| r.depth <= 2));

    let bad_depth = graph
        .traverse(&query(None, Direction::Out, None, 9))
        .unwrap_err();
    assert_eq!(bad_depth.kind(), KgErrorKind::Invalid);
    let bad_relationship = graph
        .traverse(&query(Some("likes"), Direction::Out, None, 1))
        .unwrap_err();
    assert_eq!(bad_relationship.kind(), KgErrorKind::NotFound);
    assert!(
        bad_relationship
            .to_string()
            .contains("available relationship types: authored_by, belongs_to")
    );
}

#[test]
fn counts_group_by_property_values() {
    let graph = sample_graph(fixed_now());
    let counts = graph.count_objects("Document", Some("status")).unwrap();
    assert_eq!(counts.total, 12);
    let pairs: Vec<(String, usize)> = counts
        .groups
        .iter()
        .map(|g| (g.value.to_string(), g.count))
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("\"published\"".to_owned(), 5),
            ("\"draft\"".to_owned(), 3),
            ("\"archived\"".to_owned(), 2),
            ("\"in_review\"".to_owned(), 2)
        ]
    );
    assert!(graph.count_objects("Document", Some("owner")).is_err());
    assert_eq!(graph.count_objects("Team", None).unwrap().total, 3);
}

#[test]
fn schema_lookups_answer_type_and_relationship_questions() {
    let graph = sample_graph(fixed_now());
    let schema = graph.schema();
    let details = schema.type_details("Document").unwrap();
    let outgoing: Vec<&str> = details.outgoing.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        outgoing,
        vec!["authored_by", "belongs_to", "references", "tagged_with"]
    );
    let incoming: Vec<&str> = details.incoming.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(incoming, vec!["references"]);
    let between: Vec<&str> = schema
        .relationships_between(Some("Person"), None)
        .unwrap()
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(between, vec!["leads", "member_of"]);
    let hits = schema.search("status").unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|hit| hit.score == 3));
    assert!(schema.search("  ").is_err());
}

#[test]
fn search_objects_finds_names_across_types_best_match_first() {
    let graph = sample_graph(fixed_now());
    let found = |query: &str, type_name: Option<&str>| -> Vec<(String, &'static str)> {
        graph
            .search_objects(query, type_name, None)
            .unwrap()
            .hits
            .iter()
            .map(|hit| (hit.object.id.clone(), hit.matched.as_str()))
            .collect()
    };
    assert_eq!(
        found("product roadmap", None),
        [("doc-product-roadmap".to_owned(), "exact")]
    );
    // A phrase of whole words, across types: a project and a document share "launch".
    assert_eq!(
        found("LAUNCH", None),
        [
            ("doc-launch-checklist".to_owned(), "phrase"),
            ("project-product-launch".to_owned(), "phrase"),
        ]
    );
    // A query word may name the type instead of being part of the name.
    assert_eq!(
        found("platform team", None),
        [("team-platform".to_owned(), "all_words")]
    );
    assert_eq!(
        found("silva ana", None),
        [("person-ana-silva".to_owned(), "all_words")]
    );
    assert_eq!(
        found("team-design", None),
        [("team-design".to_owned(), "exact")]
    );
    // Whole words only: "plat" is not a word of "Platform"; a type word alone names nothing.
    assert!(found("plat", None).is_empty());
    assert!(found("team", None).is_empty());
    assert!(found("Alice", None).is_empty());
    assert_eq!(
        found("design", Some("Team")),
        [("team-design".to_owned(), "exact")]
    );
    let all = graph.search_objects("design", None, Some(2)).unwrap();
    // The tag and the team named design, then the Design System Guide.
    assert_eq!(all.total_matching, 3, "{:?}", all.hits);
    assert_eq!(all.hits.len(), 2);
    assert_eq!(all.hits[0].matched.as_str(), "exact");

    let error = graph
        .search_objects("design", Some("Invoice"), None)
        .unwrap_err();
    assert_eq!(error.kind(), KgErrorKind::NotFound);
    assert!(error.to_string().contains("Team"), "{error}");
    assert!(graph.search_objects(" ?! ", None, None).is_err());
    assert!(graph.search_objects("design", None, Some(0)).is_err());
}
