//! Shutdown in two phases, as the chat engine sees it. Phase 1 (drain): new answers are
//! refused ([`ChatError::ShuttingDown`]) while the answers already running go on to their
//! natural end, with their tool calls and approvals working as usual; the server waits on
//! [`ChatService::answers_finished`]. Phase 2 ([`ChatService::shutdown`]): whatever is still
//! running is cancelled and saves what it produced.
//!
//! The refusal and the registration of a new answer happen under one lock, so once the drain
//! has begun and no answer is left in flight, none can appear afterwards.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use crate::turn::handle::{TurnHandle, TurnWatcher};
use std::sync::{Arc, Mutex};
use switchboard_core::ConversationId;

/// Whether new answers are still accepted.
#[derive(Debug, Default)]
pub(crate) struct Drain {
    /// True from the start of phase 1. Held while a new answer registers.
    refusing: Mutex<bool>,
}

impl ChatService {
    /// Phase 1 of a shutdown: from now on `start_turn` fails with
    /// [`ChatError::ShuttingDown`]; answers already running are left alone.
    pub fn refuse_new_answers(&self) {
        if let Ok(mut refusing) = self.drain.refusing.lock() {
            *refusing = true;
        }
    }

    /// True once [`Self::refuse_new_answers`] was called.
    pub fn is_refusing_new_answers(&self) -> bool {
        self.drain
            .refusing
            .lock()
            .map(|refusing| *refusing)
            .unwrap_or(true)
    }

    /// Resolves when no answer is in flight. After [`Self::refuse_new_answers`] this is
    /// final: nothing new can start. Before it, it is only a snapshot.
    pub async fn answers_finished(&self) {
        loop {
            let running: Vec<Arc<TurnHandle>> = self
                .engine
                .turns
                .all()
                .into_iter()
                .filter(|turn| !turn.is_finished())
                .collect();
            if running.is_empty() {
                return;
            }
            futures::future::join_all(running.iter().map(|turn| turn.wait_finished())).await;
        }
    }

    /// Registers a new answer for the conversation unless the engine is draining or one is
    /// already in flight there.
    pub(crate) fn register_answer(
        &self,
        conversation_id: &ConversationId,
    ) -> ChatResult<(Arc<TurnHandle>, TurnWatcher)> {
        let refusing = self
            .drain
            .refusing
            .lock()
            .map_err(|_| ChatError::ShuttingDown)?;
        if *refusing || self.engine.shutdown.is_cancelled() {
            return Err(ChatError::ShuttingDown);
        }
        self.engine
            .turns
            .begin(conversation_id, self.engine.shutdown.child_token())
            .ok_or_else(answer_in_flight_here)
    }
}

/// 409 for a question while this process answers in the conversation.
fn answer_in_flight_here() -> ChatError {
    ChatError::Conflict(
        "an answer is already being generated in this conversation; follow it with \
         GET /chat/{id}/stream or wait until it is done"
            .to_owned(),
    )
}

/// 409 for a question while another replica answers in the conversation (its claim in the
/// store): following it live works only through that replica.
pub(crate) fn answer_in_flight_elsewhere() -> ChatError {
    ChatError::Conflict(
        "an answer is already being generated in this conversation (by another Switchboard \
         replica); wait until it is done"
            .to_owned(),
    )
}
