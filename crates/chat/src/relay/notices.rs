//! One `LISTEN switchboard_answer_streams` per replica, started by the first follower, fanning
//! notices out to the followers of the answer named (a map answer id → wake-up counter), so
//! ten thousand followers cost one connection and a hash lookup per notice. A lost connection
//! wakes every follower (they read the store again) and is opened again; failures are logged
//! and retried, never fatal — followers read on a timer meanwhile.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use switchboard_store::{AnswerStreamEvent, Store};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Wait before opening the listener again after a failure.
const LISTENER_RETRY: Duration = Duration::from_secs(1);

/// The followers of this replica, by the answer they follow.
#[derive(Debug, Default)]
pub(crate) struct AnswerNotices {
    followed: Mutex<HashMap<String, watch::Sender<u64>>>,
    listening: AtomicBool,
}

/// A follower's interest in one answer: `changed()` fires on a notice for it (or a
/// reconnection). Dropping it forgets the answer once nobody else here follows it.
pub(crate) struct Following {
    pub receiver: watch::Receiver<u64>,
    answer_id: String,
    notices: Arc<AnswerNotices>,
}

impl Drop for Following {
    fn drop(&mut self) {
        if let Ok(mut followed) = self.notices.followed.lock()
            && followed
                .get(&self.answer_id)
                .is_some_and(|sender| sender.receiver_count() <= 1)
        {
            followed.remove(&self.answer_id);
        }
    }
}

impl AnswerNotices {
    /// Follows an answer's notices, starting this replica's listener on first use.
    pub(crate) fn follow(
        self: &Arc<Self>,
        store: &Store,
        shutdown: &CancellationToken,
        answer_id: &str,
    ) -> Following {
        if !self.listening.swap(true, Ordering::SeqCst) {
            tokio::spawn(listen(
                Arc::downgrade(self),
                store.clone(),
                shutdown.clone(),
            ));
        }
        let receiver = match self.followed.lock() {
            Ok(mut followed) => followed
                .entry(answer_id.to_owned())
                .or_insert_with(|| watch::Sender::new(0))
                .subscribe(),
            // A poisoned map: this follower reads on its timer only.
            Err(_) => watch::Sender::new(0).subscribe(),
        };
        Following {
            receiver,
            answer_id: answer_id.to_owned(),
            notices: self.clone(),
        }
    }

    fn wake(&self, answer_id: &str) {
        if let Ok(followed) = self.followed.lock()
            && let Some(sender) = followed.get(answer_id)
        {
            sender.send_modify(|count| *count += 1);
        }
    }

    fn wake_all(&self) {
        if let Ok(followed) = self.followed.lock() {
            for sender in followed.values() {
                sender.send_modify(|count| *count += 1);
            }
        }
    }
}

/// The listener loop: ends with the service (shutdown) or once the engine is gone.
async fn listen(notices: Weak<AnswerNotices>, store: Store, shutdown: CancellationToken) {
    loop {
        let opened = tokio::select! {
            () = shutdown.cancelled() => return,
            opened = store.listen_for_answer_streams() => opened,
        };
        let mut listener = match opened {
            Ok(Some(listener)) => listener,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for answers of other replicas; retrying (followers poll meanwhile)");
                tokio::time::sleep(LISTENER_RETRY).await;
                continue;
            }
        };
        // Listening now: whatever was announced before is in the store; read it.
        match notices.upgrade() {
            Some(notices) => notices.wake_all(),
            None => return,
        }
        loop {
            let heard = tokio::select! {
                () = shutdown.cancelled() => return,
                heard = listener.next() => heard,
            };
            let Some(notices) = notices.upgrade() else {
                return;
            };
            match heard {
                Ok(AnswerStreamEvent::Notice(notice)) => notices.wake(&notice.answer_id),
                Ok(AnswerStreamEvent::Reconnected) => notices.wake_all(),
                Err(error) => {
                    tracing::warn!(%error, "lost the listener for answers of other replicas; retrying");
                    notices.wake_all();
                    tokio::time::sleep(LISTENER_RETRY).await;
                }
            }
        }
    }
}
