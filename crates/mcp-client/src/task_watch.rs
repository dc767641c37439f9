//! Task status notifications (SEP-2663's `notifications/tasks`, as rmcp 3.9 names and types
//! them: `TaskStatusNotificationParams`, a whole `DetailedTask`) delivered to whoever follows
//! that task in this process.
//!
//! Why a client-wide table and not the session's notification router: a task outlives the
//! request that created it and its follower polls with requests of their own, each on
//! whichever session the pool gives it, so the notification may arrive on any session of the
//! server. The table is keyed by the server's id *and* the task id: a server can only speak
//! of its own tasks, never move another server's call along. A notification nobody follows
//! (a task of another process, or one that just ended) is dropped; the follower's poll stays
//! the fallback, so a lost or full delivery costs at most one poll interval.

use rmcp::model::DetailedTask;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::ServerId;
use tokio::sync::mpsc;

/// Notifications held for a follower that is busy polling (the newest matter; more are
/// dropped and the next poll catches up).
const PENDING_PER_TASK: usize = 8;

type Key = (ServerId, String);

/// Who follows which task of which server, in this process.
#[derive(Debug, Default)]
pub(crate) struct TaskWatchers {
    watchers: Mutex<HashMap<Key, mpsc::Sender<DetailedTask>>>,
}

impl TaskWatchers {
    /// Starts receiving `task_id`'s notifications from `server_id` until the watch is dropped.
    pub fn watch(self: &Arc<Self>, server_id: &ServerId, task_id: &str) -> TaskWatch {
        let (sender, receiver) = mpsc::channel(PENDING_PER_TASK);
        let key = (server_id.clone(), task_id.to_owned());
        if let Ok(mut watchers) = self.watchers.lock() {
            watchers.insert(key.clone(), sender);
        }
        TaskWatch {
            receiver,
            key,
            watchers: Arc::clone(self),
        }
    }

    /// Hands a notification from `server_id` to the follower of its task, if there is one.
    pub fn deliver(&self, server_id: &ServerId, task: DetailedTask) {
        let key = (server_id.clone(), task.task.task_id.clone());
        let sender = self
            .watchers
            .lock()
            .ok()
            .and_then(|watchers| watchers.get(&key).cloned());
        match sender {
            Some(sender) => {
                if sender.try_send(task).is_err() {
                    tracing::debug!(task_id = %key.1, "a task notification was dropped; the next poll catches up");
                }
            }
            None => {
                tracing::debug!(task_id = %key.1, "a notification for a task nobody here follows")
            }
        }
    }
}

/// One follower's notifications; dropping it stops them.
#[derive(Debug)]
pub(crate) struct TaskWatch {
    receiver: mpsc::Receiver<DetailedTask>,
    key: Key,
    watchers: Arc<TaskWatchers>,
}

impl TaskWatch {
    /// The next notification (never ends while the watch lives).
    pub async fn next(&mut self) -> DetailedTask {
        match self.receiver.recv().await {
            Some(task) => task,
            // The table holds the sender while the watch lives; only a poisoned lock (no
            // insertion) gets here: then there is nothing to wait for.
            None => std::future::pending().await,
        }
    }
}

impl Drop for TaskWatch {
    fn drop(&mut self) {
        if let Ok(mut watchers) = self.watchers.watchers.lock() {
            watchers.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Task, TaskPayload, TaskStatus};

    fn working(task_id: &str, message: &str) -> DetailedTask {
        let mut task = Task::new(
            task_id.to_owned(),
            TaskStatus::Working,
            String::new(),
            String::new(),
        );
        task.status_message = Some(message.to_owned());
        DetailedTask::new(task, TaskPayload::Working)
    }

    #[tokio::test]
    async fn a_notification_reaches_only_the_follower_of_its_server_and_task() {
        let watchers = Arc::new(TaskWatchers::default());
        let ours = ServerId::from("srv_a".to_owned());
        let other = ServerId::from("srv_b".to_owned());
        let mut watch = watchers.watch(&ours, "t1");
        watchers.deliver(&other, working("t1", "from another server"));
        watchers.deliver(&ours, working("t2", "another task"));
        watchers.deliver(&ours, working("t1", "ours"));
        let received = watch.next().await;
        assert_eq!(received.task.status_message.as_deref(), Some("ours"));
        drop(watch);
        assert!(watchers.watchers.lock().unwrap().is_empty());
        // Nobody follows now: dropped without harm.
        watchers.deliver(&ours, working("t1", "late"));
    }
}
