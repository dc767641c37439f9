//! Property tests: on random small graphs, traversal and shortest paths agree with distances
//! computed naively (relaxation over the edge list), and every returned path is well formed.

use crate::fixed_now;
use proptest::prelude::*;
use serde_json::Map;
use switchboard_kg::query::TraverseQuery;
use switchboard_kg::{
    Direction, KnowledgeGraph, NewObject, NewRelationship, ObjectType, RelationshipType, Schema,
};

const UNREACHABLE: usize = usize::MAX;

#[derive(Debug, Clone)]
struct RandomGraph {
    nodes: usize,
    /// (from, to, is_link) — `is_link` picks the relationship type `link`, else `other`.
    edges: Vec<(usize, usize, bool)>,
}

fn random_graph() -> impl Strategy<Value = RandomGraph> {
    (2usize..12).prop_flat_map(|nodes| {
        prop::collection::vec((0..nodes, 0..nodes, any::<bool>()), 0..30)
            .prop_map(move |edges| RandomGraph { nodes, edges })
    })
}

fn node_id(index: usize) -> String {
    format!("n{index}")
}

fn build(random: &RandomGraph) -> (KnowledgeGraph, Vec<(usize, usize, bool)>) {
    let mut graph = KnowledgeGraph::new();
    let schema = Schema {
        object_types: vec![ObjectType::new("Node", "", vec![])],
        relationship_types: vec![
            RelationshipType::new("link", "", &["Node"], &["Node"]),
            RelationshipType::new("other", "", &["Node"], &["Node"]),
        ],
    };
    graph.apply_schema(schema, fixed_now(), None).unwrap();
    for index in 0..random.nodes {
        graph
            .create_object(
                NewObject {
                    id: Some(node_id(index)),
                    object_type: "Node".into(),
                    properties: Map::new(),
                },
                fixed_now(),
            )
            .unwrap();
    }
    let mut accepted = Vec::new();
    for &(from, to, is_link) in &random.edges {
        let relationship_type = if is_link { "link" } else { "other" };
        let created = graph.create_relationship(
            NewRelationship {
                id: None,
                relationship_type: relationship_type.into(),
                from_id: node_id(from),
                to_id: node_id(to),
                properties: Map::new(),
            },
            fixed_now(),
        );
        if created.is_ok() {
            accepted.push((from, to, is_link));
        }
    }
    (graph, accepted)
}

/// Hop distances from `start` following `edges` per `direction`, by repeated relaxation.
fn naive_distances(
    nodes: usize,
    edges: &[(usize, usize, bool)],
    start: usize,
    direction: Direction,
) -> Vec<usize> {
    let mut distance = vec![UNREACHABLE; nodes];
    distance[start] = 0;
    for _ in 0..nodes {
        for &(from, to, _) in edges {
            let mut relax = |a: usize, b: usize| {
                if distance[a] != UNREACHABLE && distance[a] + 1 < distance[b] {
                    distance[b] = distance[a] + 1;
                }
            };
            match direction {
                Direction::Out => relax(from, to),
                Direction::In => relax(to, from),
                Direction::Both => {
                    relax(from, to);
                    relax(to, from);
                }
            }
        }
    }
    distance
}

fn direction_strategy() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::Out),
        Just(Direction::In),
        Just(Direction::Both)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn shortest_path_matches_naive_distance(random in random_graph(), from in 0usize..12, to in 0usize..12, max_depth in 1usize..=6) {
        let (graph, edges) = build(&random);
        let (from, to) = (from % random.nodes, to % random.nodes);
        let distance = naive_distances(random.nodes, &edges, from, Direction::Both)[to];
        let path = graph.find_path(&node_id(from), &node_id(to), max_depth).unwrap();
        if distance <= max_depth {
            let path = path.expect("a path exists within max_depth");
            prop_assert_eq!(path.length(), distance);
            let mut previous = node_id(from);
            for step in &path.steps {
                let relationship = step.relationship;
                if step.forward {
                    prop_assert_eq!(&relationship.from_id, &previous);
                    prop_assert_eq!(&relationship.to_id, &step.object.id);
                } else {
                    prop_assert_eq!(&relationship.to_id, &previous);
                    prop_assert_eq!(&relationship.from_id, &step.object.id);
                }
                previous = step.object.id.clone();
            }
            prop_assert_eq!(previous, node_id(to));
        } else {
            prop_assert!(path.is_none());
        }
    }

    #[test]
    fn traversal_reaches_exactly_the_objects_within_depth(
        random in random_graph(),
        start in 0usize..12,
        depth in 1usize..=5,
        direction in direction_strategy(),
        only_links in any::<bool>(),
    ) {
        let (graph, edges) = build(&random);
        let start = start % random.nodes;
        let followed: Vec<(usize, usize, bool)> = edges.iter().copied().filter(|e| !only_links || e.2).collect();
        let distance = naive_distances(random.nodes, &followed, start, direction);
        let result = graph
            .traverse(&TraverseQuery {
                start_id: node_id(start),
                relationship: only_links.then(|| "link".to_owned()),
                direction,
                target_type: None,
                depth,
            })
            .unwrap();
        let mut expected: Vec<(String, usize)> = (0..random.nodes)
            .filter(|&node| node != start && distance[node] != UNREACHABLE && distance[node] <= depth)
            .map(|node| (node_id(node), distance[node]))
            .collect();
        expected.sort();
        let mut actual: Vec<(String, usize)> = result.reached.iter().map(|r| (r.object.id.clone(), r.depth)).collect();
        actual.sort();
        prop_assert_eq!(actual, expected);
        for reached in &result.reached {
            prop_assert!(reached.via.from_id == reached.object.id || reached.via.to_id == reached.object.id);
            if only_links {
                prop_assert_eq!(&reached.via.relationship_type, "link");
            }
        }
        let depths: Vec<usize> = result.reached.iter().map(|r| r.depth).collect();
        prop_assert!(depths.windows(2).all(|pair| pair[0] <= pair[1]), "breadth-first order");
    }
}
