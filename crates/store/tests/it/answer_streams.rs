//! Answer streams between replicas: events appended in batches read back in order after any
//! sequence number, one answer's rows never mixed with another's, pruned per answer and per
//! conversation; on PostgreSQL each batch is announced (`<answer>:<last seq>`) to a listener of
//! another store on the same database, on SQLite there is no listener.

use crate::harness::{Backend, TestStore, store_test};
use std::time::Duration;
use switchboard_core::ConversationId;
use switchboard_store::{AnswerStreamEvent, AnswerStreamNotice, SecretCipher};

store_test!(events_are_read_after_a_sequence_number_announced_and_pruned);

fn texts(rows: &[switchboard_store::StreamEventRow]) -> Vec<(i64, &str)> {
    rows.iter()
        .map(|row| (row.seq, row.event.as_str()))
        .collect()
}

async fn events_are_read_after_a_sequence_number_announced_and_pruned(test: TestStore) {
    let store = &test.store;
    let other_replica = test.reopen_with(SecretCipher::generate()).await;
    let mut listener = other_replica.listen_for_answer_streams().await.unwrap();
    assert_eq!(listener.is_some(), test.backend == Backend::Postgres);
    assert_eq!(
        store.relays_answer_streams(),
        test.backend == Backend::Postgres
    );
    let conversation = ConversationId::from(format!("conv_{}", uuid::Uuid::new_v4().simple()));
    let answer = format!("ans_{}", uuid::Uuid::new_v4().simple());
    let big = "x".repeat(20_000);
    let first: Vec<String> = vec!["a".into(), "b".into()];
    let second: Vec<String> = vec![big.clone(), "d".into()];
    store
        .append_answer_stream_events(&conversation, &answer, 0, &first)
        .await
        .unwrap();
    store
        .append_answer_stream_events(&conversation, &answer, 2, &second)
        .await
        .unwrap();
    store
        .append_answer_stream_events(&conversation, &answer, 4, &[])
        .await
        .unwrap();
    let all = other_replica
        .answer_stream_events_after(&answer, -1, 100)
        .await
        .unwrap();
    assert_eq!(
        texts(&all),
        [(0, "a"), (1, "b"), (2, big.as_str()), (3, "d")]
    );
    let after = other_replica
        .answer_stream_events_after(&answer, 1, 1)
        .await
        .unwrap();
    assert_eq!(
        texts(&after),
        [(2, big.as_str())],
        "after seq 1, at most one"
    );
    assert!(
        store
            .append_answer_stream_events(&conversation, &answer, 3, &["again".into()])
            .await
            .is_err(),
        "a sequence number is written once"
    );

    if let Some(listener) = listener.as_mut() {
        let mut heard = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while heard.len() < 2 {
            match tokio::time::timeout_at(deadline, listener.next()).await {
                Ok(Ok(AnswerStreamEvent::Notice(notice))) if notice.answer_id == answer => {
                    heard.push(notice)
                }
                Ok(Ok(_)) => continue,
                Ok(Err(error)) => panic!("the listener failed: {error}"),
                Err(_) => panic!("heard only {heard:?} within 5 s"),
            }
        }
        let notice = |seq| AnswerStreamNotice {
            answer_id: answer.clone(),
            seq,
        };
        assert_eq!(
            heard,
            [notice(1), notice(3)],
            "one notice per batch, its last seq"
        );
    }

    // The conversation's next answer clears the earlier ones; an answer's own prune its rows.
    let next = format!("ans_{}", uuid::Uuid::new_v4().simple());
    store
        .append_answer_stream_events(&conversation, &next, 0, &["n".into()])
        .await
        .unwrap();
    assert_eq!(
        store
            .prune_earlier_answer_streams(&conversation, &next)
            .await
            .unwrap(),
        4
    );
    assert!(
        store
            .answer_stream_events_after(&answer, -1, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.prune_answer_stream(&next).await.unwrap(), 1);
}
