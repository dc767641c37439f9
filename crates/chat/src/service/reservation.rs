//! The reservation of an answer between its checks and its task: registered in this process
//! (`TurnRegistry`) and claimed in the store (`conversation_answers`, one answer per
//! conversation across replicas). [`AnswerReservation`] is a guard: until
//! [`AnswerReservation::commit`] hands both to the answer's task, dropping it — any early
//! return of `start_turn` — undoes them, so no failure path can leave a conversation
//! refusing questions.

use super::ChatService;
use super::drain::answer_in_flight_elsewhere;
use crate::engine::Engine;
use crate::error::ChatResult;
use crate::turn::handle::{TurnHandle, TurnWatcher};
use std::sync::Arc;
use switchboard_store::{AnswerClaim, ConversationRecord, Store};

/// An answer registered and claimed, not yet running (see the module docs).
pub(super) struct AnswerReservation {
    engine: Arc<Engine>,
    handle: Arc<TurnHandle>,
    /// `None` until the store granted it.
    claim: Option<AnswerClaim>,
    /// Set by `commit`: from then on the answer's task owns both.
    committed: bool,
}

impl AnswerReservation {
    /// Registers the answer here, then claims the conversation in the store. A conversation
    /// made for this question (`created_here`) is removed again when the registration is
    /// refused (a shutdown began meanwhile): it would stay empty.
    pub(super) async fn acquire(
        service: &ChatService,
        conversation: &ConversationRecord,
        created_here: bool,
    ) -> ChatResult<(Self, TurnWatcher)> {
        let engine = &service.engine;
        let (handle, watcher) = match service.register_answer(&conversation.id) {
            Ok(registered) => registered,
            Err(error) => {
                if created_here {
                    discard_conversation(&engine.store, conversation).await;
                }
                return Err(error);
            }
        };
        let mut reservation = AnswerReservation {
            engine: engine.clone(),
            handle,
            claim: None,
            committed: false,
        };
        // On a refused claim `reservation` is dropped: the registration above is undone.
        reservation.claim = Some(
            engine
                .store
                .claim_conversation_answer(&conversation.workspace_id, &conversation.id)
                .await?
                .ok_or_else(answer_in_flight_elsewhere)?,
        );
        Ok((reservation, watcher))
    }

    /// Hands the registration and the claim to the answer's task, which ends both.
    pub(super) fn commit(mut self) -> (Arc<TurnHandle>, Option<AnswerClaim>) {
        let claim = self.claim.take();
        self.committed = true;
        (self.handle.clone(), claim)
    }
}

impl Drop for AnswerReservation {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        self.handle.finish();
        self.engine.turns.end(&self.handle);
        let Some(claim) = self.claim.take() else {
            return;
        };
        // Drop cannot wait: the release runs on its own. Until it is done, other replicas
        // refuse questions in this conversation (this one does not: its registry is clear).
        let store = self.engine.store.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { release_claim(&store, &claim).await });
            }
            Err(_) => tracing::warn!(
                conversation_id = %claim.conversation_id,
                "an answer claim was dropped outside the runtime; it goes with this instance"
            ),
        }
    }
}

/// Ends the store's claim of an answer. A failure only delays other replicas: the claim goes
/// with this instance (when it stops or is presumed dead), and this process takes its own
/// claims over.
pub(super) async fn release_claim(store: &Store, claim: &AnswerClaim) {
    if let Err(error) = store.release_conversation_answer(claim).await {
        tracing::warn!(
            conversation_id = %claim.conversation_id,
            %error,
            "could not release the conversation's answer claim; other replicas refuse new \
             questions there until this instance stops"
        );
    }
}

async fn discard_conversation(store: &Store, conversation: &ConversationRecord) {
    if let Err(cleanup) = store
        .delete_conversation(&conversation.workspace_id, &conversation.id)
        .await
    {
        tracing::warn!(%cleanup, "could not remove the conversation of a refused question");
    }
}
