//! In-flight answers: one [`TurnHandle`] per conversation while its answer is generated. The
//! handle keeps every event of the answer so far, so a client that attaches late
//! (`GET /chat/{id}/stream`) sees the answer from its start and then follows it live.
//!
//! Watchers are counted: the turn's cancellation fires when the last one leaves (the client
//! that asked disconnected and nobody else is watching), so a closed tab stops the LLM request
//! and the in-flight tool calls, while a second tab keeps the answer going.

use crate::events::ChatEvent;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use switchboard_core::ConversationId;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The answer being generated for one conversation.
#[derive(Debug)]
pub struct TurnHandle {
    pub conversation_id: ConversationId,
    log: Mutex<Vec<ChatEvent>>,
    /// The number of events logged; watchers wait on it.
    published: watch::Sender<usize>,
    finished: AtomicBool,
    watchers: AtomicUsize,
    /// Fires when the last watcher leaves or the service shuts down.
    pub cancellation: CancellationToken,
}

impl TurnHandle {
    fn new(conversation_id: ConversationId, cancellation: CancellationToken) -> Self {
        Self {
            conversation_id,
            log: Mutex::new(Vec::new()),
            published: watch::Sender::new(0),
            finished: AtomicBool::new(false),
            watchers: AtomicUsize::new(0),
            cancellation,
        }
    }

    /// Appends an event for every watcher.
    pub fn emit(&self, event: ChatEvent) {
        let count = {
            let Ok(mut log) = self.log.lock() else { return };
            log.push(event);
            log.len()
        };
        self.published.send_replace(count);
    }

    /// Marks the answer complete; watchers end after the last logged event.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        let count = self.log.lock().map(|log| log.len()).unwrap_or(0);
        self.published.send_replace(count);
    }

    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Waits until the turn has finished (its `done` is logged).
    pub async fn wait_finished(&self) {
        let mut receiver = self.published.subscribe();
        while !self.is_finished() {
            if receiver.changed().await.is_err() {
                return;
            }
        }
    }

    /// The events logged from `index` on, and whether the answer had finished when they were
    /// read. Not a watcher: reading this way never keeps the answer going (the relay to other
    /// replicas uses it).
    pub fn events_from(&self, index: usize) -> (Vec<ChatEvent>, bool) {
        let finished = self.is_finished();
        let events = self
            .log
            .lock()
            .map(|log| {
                log.get(index..)
                    .map(<[ChatEvent]>::to_vec)
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        (events, finished)
    }

    /// Changes with every logged event and at the end (subscribe before reading).
    pub fn subscribe(&self) -> watch::Receiver<usize> {
        self.published.subscribe()
    }

    /// A watcher that starts at the first event of the answer.
    pub fn watch(self: &Arc<Self>) -> TurnWatcher {
        self.watchers.fetch_add(1, Ordering::SeqCst);
        TurnWatcher {
            handle: self.clone(),
            next_index: 0,
            receiver: self.published.subscribe(),
        }
    }
}

/// Reads a turn's events in order, waiting for new ones. Dropping the last watcher of an
/// unfinished turn cancels the turn.
#[derive(Debug)]
pub struct TurnWatcher {
    handle: Arc<TurnHandle>,
    next_index: usize,
    receiver: watch::Receiver<usize>,
}

impl TurnWatcher {
    /// The next event, or `None` once the turn finished and everything was read.
    pub async fn next_event(&mut self) -> Option<ChatEvent> {
        loop {
            // Whether the turn had finished is read before the log: `finish` comes after the
            // last `emit`, so a log read after seeing it holds every event. Read the other way
            // round, a `done` emitted between the two reads was lost (the stream ended without
            // it).
            let finished = self.handle.is_finished();
            let event = self
                .handle
                .log
                .lock()
                .ok()
                .and_then(|log| log.get(self.next_index).cloned());
            if let Some(event) = event {
                self.next_index += 1;
                return Some(event);
            }
            if finished {
                return None;
            }
            if self.receiver.changed().await.is_err() {
                return None;
            }
        }
    }
}

impl Drop for TurnWatcher {
    fn drop(&mut self) {
        let left = self.handle.watchers.fetch_sub(1, Ordering::SeqCst) - 1;
        if left == 0 && !self.handle.is_finished() {
            tracing::info!(
                conversation_id = %self.handle.conversation_id,
                "every client left: cancelling the answer (what was produced is kept)"
            );
            self.handle.cancellation.cancel();
        }
    }
}

/// The answers in flight, one per conversation at most.
#[derive(Debug, Default)]
pub struct TurnRegistry {
    turns: Mutex<HashMap<ConversationId, Arc<TurnHandle>>>,
}

impl TurnRegistry {
    /// Registers a new answer for the conversation and returns it with its first watcher, or
    /// `None` when one is already in flight.
    pub fn begin(
        &self,
        conversation_id: &ConversationId,
        cancellation: CancellationToken,
    ) -> Option<(Arc<TurnHandle>, TurnWatcher)> {
        let mut turns = self.turns.lock().ok()?;
        if turns
            .get(conversation_id)
            .is_some_and(|turn| !turn.is_finished())
        {
            return None;
        }
        let handle = Arc::new(TurnHandle::new(conversation_id.clone(), cancellation));
        let watcher = handle.watch();
        turns.insert(conversation_id.clone(), handle.clone());
        Some((handle, watcher))
    }

    /// The answer in flight for a conversation.
    pub fn current(&self, conversation_id: &ConversationId) -> Option<Arc<TurnHandle>> {
        let turns = self.turns.lock().ok()?;
        turns
            .get(conversation_id)
            .filter(|turn| !turn.is_finished())
            .cloned()
    }

    /// Forgets a finished answer (only if it is still the registered one).
    pub fn end(&self, handle: &Arc<TurnHandle>) {
        if let Ok(mut turns) = self.turns.lock()
            && turns
                .get(&handle.conversation_id)
                .is_some_and(|current| Arc::ptr_eq(current, handle))
        {
            turns.remove(&handle.conversation_id);
        }
    }

    /// Every answer in flight (for shutdown).
    pub fn all(&self) -> Vec<Arc<TurnHandle>> {
        self.turns
            .lock()
            .map(|turns| turns.values().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ErrorEvent;

    fn event(text: &str) -> ChatEvent {
        ChatEvent::Token(text.to_owned())
    }

    #[tokio::test]
    async fn a_late_watcher_sees_everything_from_the_start() {
        let registry = TurnRegistry::default();
        let conversation = ConversationId::from("c1");
        let (handle, mut first) = registry
            .begin(&conversation, CancellationToken::new())
            .unwrap();
        handle.emit(event("a"));
        let mut late = handle.watch();
        handle.emit(event("b"));
        handle.finish();
        for watcher in [&mut first, &mut late] {
            assert_eq!(watcher.next_event().await, Some(event("a")));
            assert_eq!(watcher.next_event().await, Some(event("b")));
            assert_eq!(watcher.next_event().await, None);
        }
        assert!(!handle.cancellation.is_cancelled());
    }

    #[tokio::test]
    async fn only_one_answer_per_conversation_and_the_last_watcher_cancels() {
        let registry = TurnRegistry::default();
        let conversation = ConversationId::from("c1");
        let (handle, first) = registry
            .begin(&conversation, CancellationToken::new())
            .unwrap();
        assert!(
            registry
                .begin(&conversation, CancellationToken::new())
                .is_none()
        );
        let second = handle.watch();
        drop(first);
        assert!(!handle.cancellation.is_cancelled(), "a watcher is left");
        drop(second);
        assert!(handle.cancellation.is_cancelled());
        handle.emit(ChatEvent::Error(ErrorEvent {
            code: "cancelled".into(),
            message: "x".into(),
        }));
        handle.finish();
        registry.end(&handle);
        assert!(registry.current(&conversation).is_none());
        assert!(
            registry
                .begin(&conversation, CancellationToken::new())
                .is_some()
        );
    }

    #[tokio::test]
    async fn watchers_wake_up_for_new_events() {
        let registry = TurnRegistry::default();
        let (handle, mut watcher) = registry
            .begin(&ConversationId::from("c1"), CancellationToken::new())
            .unwrap();
        let reader = tokio::spawn(async move { watcher.next_event().await });
        tokio::task::yield_now().await;
        handle.emit(event("late"));
        assert_eq!(reader.await.unwrap(), Some(event("late")));
    }
}
