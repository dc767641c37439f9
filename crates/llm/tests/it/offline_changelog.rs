//! The schema changelog as a person reads it through the offline assistant: the real kg tool on
//! the sample graph, rendered by the planner. Sentences agree in number with their counts and
//! say what a description became instead of "description changed".

use chrono::Utc;
use switchboard_llm::{OfflinePlannerConfig, OfflineProvider};

use crate::offline_phrasings::{catalog, converse, sample_graph};

async fn ask(question: &str) -> String {
    let provider =
        OfflineProvider::new(OfflinePlannerConfig::default()).with_today(Utc::now().date_naive());
    let graph = sample_graph().await;
    let transcript = converse(&provider, &catalog(), &graph, question).await;
    assert_eq!(
        transcript.calls.first().map(|(name, _)| name.as_str()),
        Some("kg__schema_changelog"),
        "{:?}",
        transcript.calls
    );
    transcript.answer
}

#[tokio::test]
async fn one_change_is_announced_in_the_singular() {
    let answer = ask("show the 1 most recent schema change").await;
    assert!(
        answer.starts_with("Here is the latest change to the schema:\n"),
        "{answer}"
    );
}

#[tokio::test]
async fn changes_say_what_a_description_became() {
    let answer = ask("show the last 20 schema changes").await;
    assert!(
        answer.starts_with("Here are the 20 most recent changes to the schema, newest first:\n"),
        "{answer}"
    );
    assert!(
        answer.contains(
            "Modified property description of Project: new description \"Goal, scope and non-goals of the project\""
        ),
        "{answer}"
    );
    assert!(!answer.contains("description changed"), "{answer}");
}

#[tokio::test]
async fn changes_since_a_date_agree_with_their_count() {
    let answer = ask("what changed in the schema in the past 6 days?").await;
    assert!(
        answer.starts_with("There are 4 changes to the schema since "),
        "{answer}"
    );
}
