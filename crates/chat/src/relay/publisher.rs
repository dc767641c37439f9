//! The answering replica's side: every event of the answer, in order, appended to the store
//! (`answer_stream_events`, keyed by the answer's claim) in batches — whatever was logged
//! since the last write goes in one transaction, which also sends the notice. The task ends
//! once `done` is stored; the answer's task waits for it before releasing the claim, so a
//! follower that sees the claim gone finds every event in the store.

use super::encode;
use crate::turn::handle::TurnHandle;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{AnswerClaim, Store};

/// Most events written in one transaction.
const BATCH_MAX: usize = 256;
/// First wait after a failed write; doubled up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);
/// A batch that cannot be written for this long is given up (followers end with
/// `answer_lost` once the claim is released).
const GIVE_UP_AFTER: Duration = Duration::from_secs(30);
/// How long an ended answer's events stay for followers still reading them.
pub(crate) const PRUNE_AFTER: Duration = Duration::from_secs(60);

/// Relays the answer's events until it finished. Failures are logged and retried, never
/// fatal to the answer.
pub(crate) async fn publish_answer(store: Store, handle: Arc<TurnHandle>, claim: AnswerClaim) {
    if let Err(error) = store
        .prune_earlier_answer_streams(&claim.conversation_id, &claim.answer_id)
        .await
    {
        tracing::warn!(%error, "could not remove the events of earlier answers");
    }
    let mut published = handle.subscribe();
    let mut next = 0usize;
    loop {
        let (events, finished) = handle.events_from(next);
        if events.is_empty() {
            if finished || published.changed().await.is_err() {
                return;
            }
            continue;
        }
        for batch in events.chunks(BATCH_MAX) {
            let encoded: Vec<String> = batch
                .iter()
                .map(|event| {
                    encode(event).unwrap_or_else(|error| {
                        tracing::error!(%error, kind = event.kind(), "cannot encode an event");
                        String::new()
                    })
                })
                .collect();
            if !append(&store, &claim, next as i64, &encoded).await {
                return;
            }
            next += batch.len();
        }
    }
}

/// Appends one batch, retrying; false when given up.
async fn append(store: &Store, claim: &AnswerClaim, first_seq: i64, events: &[String]) -> bool {
    let started = tokio::time::Instant::now();
    let mut wait = RETRY_FIRST;
    loop {
        match store
            .append_answer_stream_events(
                &claim.conversation_id,
                &claim.answer_id,
                first_seq,
                events,
            )
            .await
        {
            Ok(()) => return true,
            Err(error) if started.elapsed() < GIVE_UP_AFTER => {
                tracing::warn!(
                    %error,
                    conversation_id = %claim.conversation_id,
                    "could not relay the answer's events to other replicas; retrying"
                );
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(RETRY_MAX);
            }
            Err(error) => {
                tracing::error!(
                    %error,
                    conversation_id = %claim.conversation_id,
                    "gave up relaying the answer's events: followers on other replicas miss \
                     the rest of it"
                );
                return false;
            }
        }
    }
}

/// Removes the answer's events once followers had [`PRUNE_AFTER`] to read them (in its own
/// task; a replica stopping first leaves them to the conversation's next answer).
pub(crate) fn prune_later(store: Store, answer_id: String) {
    tokio::spawn(async move {
        tokio::time::sleep(PRUNE_AFTER).await;
        if let Err(error) = store.prune_answer_stream(&answer_id).await {
            tracing::warn!(%error, "could not remove an ended answer's relayed events");
        }
    });
}
