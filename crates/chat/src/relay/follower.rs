//! The following replica's side: an answer running elsewhere, read from the store. The seam
//! between what was relayed before the client came and what comes after is the sequence
//! number: rows are read from the first (`seq > -1`), then only `seq > last read` when woken
//! by a notice or by the [`POLL`] timer, so nothing is read twice and nothing is skipped.
//! The stream ends after `done`; if the answer's claim is gone and no `done` was relayed (its
//! replica died, or gave up relaying), it ends with `error` `answer_lost` and `done` (failed).

use super::decode;
use super::notices::{AnswerNotices, Following};
use crate::events::{ChatEvent, DoneEvent, ErrorEvent, TurnOutcome};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use switchboard_store::{AnswerClaim, Store};
use tokio_util::sync::CancellationToken;

/// How often a follower reads the store without a notice (a notice may be lost), and checks
/// that the answer is still in flight.
const POLL: Duration = Duration::from_secs(1);
/// Most rows read at once.
const READ_MAX: i64 = 512;

struct Follower {
    store: Store,
    claim: AnswerClaim,
    following: Following,
    pending: VecDeque<ChatEvent>,
    last_seq: i64,
    /// The claim was seen released: one more read, then the answer is over.
    claim_gone: bool,
    ended: bool,
}

/// The events of the answer `claim` names, from its first, ending with `done`.
pub(crate) fn follow_remote_answer(
    store: Store,
    notices: &Arc<AnswerNotices>,
    shutdown: &CancellationToken,
    claim: AnswerClaim,
) -> BoxStream<'static, ChatEvent> {
    let following = notices.follow(&store, shutdown, &claim.answer_id);
    let follower = Follower {
        store,
        claim,
        following,
        pending: VecDeque::new(),
        last_seq: -1,
        claim_gone: false,
        ended: false,
    };
    futures::stream::unfold(follower, |mut follower| async move {
        follower.next_event().await.map(|event| (event, follower))
    })
    .boxed()
}

impl Follower {
    async fn next_event(&mut self) -> Option<ChatEvent> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                self.ended = event.is_done();
                return Some(event);
            }
            if self.ended {
                return None;
            }
            if self.read().await {
                continue;
            }
            if self.claim_gone {
                self.lost();
                continue;
            }
            self.wait().await;
        }
    }

    /// Reads the rows after the last one; true when any came.
    async fn read(&mut self) -> bool {
        let rows = match self
            .store
            .answer_stream_events_after(&self.claim.answer_id, self.last_seq, READ_MAX)
            .await
        {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, "could not read the events of an answer on another replica");
                return false;
            }
        };
        let any = !rows.is_empty();
        for row in rows {
            self.last_seq = row.seq;
            match decode(&row.event) {
                Ok(event) => self.pending.push_back(event),
                Err(error) => {
                    tracing::warn!(%error, seq = row.seq, "skipped an undecodable relayed event")
                }
            }
        }
        any
    }

    /// Until a notice, or [`POLL`]; on a quiet poll, checks the answer is still claimed.
    async fn wait(&mut self) {
        let receiver = &mut self.following.receiver;
        match tokio::time::timeout(POLL, receiver.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => tokio::time::sleep(POLL).await,
            Err(_) => match self
                .store
                .conversation_answer_claim(&self.claim.conversation_id)
                .await
            {
                Ok(claim) => {
                    self.claim_gone =
                        claim.is_none_or(|claim| claim.answer_id != self.claim.answer_id);
                }
                Err(error) => {
                    tracing::warn!(%error, "could not check an answer on another replica")
                }
            },
        }
    }

    /// The answer ended without its `done` reaching the store.
    fn lost(&mut self) {
        tracing::warn!(
            conversation_id = %self.claim.conversation_id,
            "the answer followed on another replica ended without its last events"
        );
        self.pending.push_back(ChatEvent::Error(ErrorEvent {
            code: "answer_lost".into(),
            message: "the replica answering stopped before the answer's end reached this one; \
                      what it stored is in the conversation"
                .into(),
        }));
        self.pending.push_back(ChatEvent::Done(DoneEvent {
            conversation_id: self.claim.conversation_id.clone(),
            message_id: None,
            outcome: TurnOutcome::Failed,
            answered_by: None,
            usage: None,
        }));
    }
}
