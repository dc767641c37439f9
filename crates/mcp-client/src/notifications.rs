//! Routing of server notifications within one session.
//!
//! Progress notifications carry the progress token rmcp put on the request, so they reach
//! exactly the call that caused them (a notification racing ahead of the caller's registration
//! is held briefly and delivered on registration). Log messages carry no request id: they go to
//! the caller only while exactly one call is in flight on the session — on a shared session
//! another user's call must never see them — and always to the logs. List-changed
//! notifications go to the capability cache's callback, resource updates to the session's
//! watchers of that URI ([`crate::resource_watch`]). Each running call's timeout clock
//! (`CallClock`) is kept here too: progress touches it, and an elicitation of the call
//! holds it still.

use crate::call_clock::{CallClock, ClockPause};
use crate::client_link::ClientLink;
use crate::resource_watch::ResourceWatches;
use rmcp::model::{ProgressToken, RequestId};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use switchboard_core::ConversationId;
use tokio::sync::mpsc;

/// What a caller hears about its call while it runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CallEvent {
    Progress {
        progress: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Log {
        level: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        logger: Option<String>,
        data: Value,
    },
    /// The call became a task: sent when the server creates it (never dropped: the caller
    /// keeps its id to follow it after a restart) and at every change of its status or
    /// message.
    Task(switchboard_core::ToolTask),
}

/// Which capability list an upstream says changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListChangeKind {
    Tools,
    Resources,
    Prompts,
}

/// Called when an upstream reports a list change.
pub type ListChangedCallback = Arc<dyn Fn(ListChangeKind) + Send + Sync>;

const UNCLAIMED_PROGRESS_LIMIT: usize = 64;

/// What a running call registers with the router besides its token and id.
pub(crate) struct RegisteredCall {
    pub conversation_id: Option<ConversationId>,
    pub sink: mpsc::Sender<CallEvent>,
    pub clock: Arc<CallClock>,
    pub link: Option<Arc<dyn ClientLink>>,
}

pub(crate) struct NotificationRouter {
    server_name: String,
    state: Mutex<RouterState>,
    list_changed: Option<ListChangedCallback>,
    /// Signalled when a call registers (see [`NotificationRouter::await_call`]).
    registered: tokio::sync::Notify,
    /// The session's watched resources (`notifications/resources/updated` goes there).
    pub watches: ResourceWatches,
    /// Where task status notifications go, with the server they came from.
    tasks: Option<(
        Arc<crate::task_watch::TaskWatchers>,
        switchboard_core::ServerId,
    )>,
}

#[derive(Default)]
struct RouterState {
    /// Sink per progress token, and whether its call is still running (a finished call's sink
    /// lingers briefly for late progress, but no longer receives log messages).
    sinks: HashMap<String, (mpsc::Sender<CallEvent>, bool)>,
    unclaimed: VecDeque<(String, CallEvent)>,
    /// The conversation and timeout clock of each running call, by request id (elicitation
    /// routing and pausing).
    calls: HashMap<String, (Option<ConversationId>, Arc<CallClock>)>,
    /// The client of each running call that can answer upstream requests itself, by request id.
    links: HashMap<String, Arc<dyn ClientLink>>,
    /// The timeout clock of each running call, by progress token.
    clocks: HashMap<String, Arc<CallClock>>,
}

impl std::fmt::Debug for NotificationRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationRouter")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// Keeps a call's registration alive; dropping it unregisters the sink.
pub(crate) struct ProgressRegistration {
    router: Arc<NotificationRouter>,
    key: String,
    call_key: String,
}

impl ProgressRegistration {
    /// The call has its answer: keep delivering late progress, stop claiming log messages.
    pub fn finish(&self) {
        if let Ok(mut state) = self.router.state.lock() {
            state.calls.remove(&self.call_key);
            state.links.remove(&self.call_key);
            state.clocks.remove(&self.key);
            if let Some((_, active)) = state.sinks.get_mut(&self.key) {
                *active = false;
            }
        }
    }
}

impl Drop for ProgressRegistration {
    fn drop(&mut self) {
        if let Ok(mut state) = self.router.state.lock() {
            state.sinks.remove(&self.key);
            state.calls.remove(&self.call_key);
            state.links.remove(&self.call_key);
            state.clocks.remove(&self.key);
        }
    }
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

fn request_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

impl NotificationRouter {
    pub fn new(server_name: String, list_changed: Option<ListChangedCallback>) -> Self {
        Self {
            server_name,
            state: Mutex::new(RouterState::default()),
            list_changed,
            registered: tokio::sync::Notify::new(),
            watches: ResourceWatches::default(),
            tasks: None,
        }
    }

    /// Task status notifications of this session go to `watchers`, as `server_id`'s.
    pub fn with_task_watchers(
        mut self,
        watchers: Arc<crate::task_watch::TaskWatchers>,
        server_id: switchboard_core::ServerId,
    ) -> Self {
        self.tasks = Some((watchers, server_id));
        self
    }

    /// A task status notification: to the follower of that task of this server, if any.
    pub fn task_status(&self, task: rmcp::model::DetailedTask) {
        match &self.tasks {
            Some((watchers, server_id)) => watchers.deliver(server_id, task),
            None => {
                tracing::debug!(server = %self.server_name, "a task notification outside any call")
            }
        }
    }

    pub fn server_name(&self) -> &str {
        &self.server_name
    }

    /// Whether anyone hears list changes (a throw-away connection has nobody).
    pub fn wants_list_changes(&self) -> bool {
        self.list_changed.is_some()
    }

    /// Routes the notifications for `token` to `sink` (and its signs of life to `clock`, the
    /// upstream's requests of the call to `link`) until the registration is dropped.
    pub fn register(
        self: &Arc<Self>,
        token: &ProgressToken,
        request_id: &RequestId,
        call: RegisteredCall,
    ) -> ProgressRegistration {
        let RegisteredCall {
            conversation_id,
            sink,
            clock,
            link,
        } = call;
        let key = token_key(token);
        let call_key = request_key(request_id);
        if let Ok(mut state) = self.state.lock() {
            if let Some(link) = link {
                state.links.insert(call_key.clone(), link);
            }
            state
                .calls
                .insert(call_key.clone(), (conversation_id, clock.clone()));
            state.clocks.insert(key.clone(), clock);
            let mut kept = VecDeque::new();
            for (unclaimed_key, event) in state.unclaimed.drain(..) {
                if unclaimed_key == key {
                    let _ = sink.try_send(event);
                } else {
                    kept.push_back((unclaimed_key, event));
                }
            }
            state.unclaimed = kept;
            state.sinks.insert(key.clone(), (sink, true));
        }
        self.registered.notify_waiters();
        ProgressRegistration {
            router: self.clone(),
            key,
            call_key,
        }
    }

    pub fn progress(
        &self,
        token: &ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let event = CallEvent::Progress {
            progress,
            total,
            message,
        };
        let key = token_key(token);
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if let Some(clock) = state.clocks.get(&key) {
            clock.touch();
        }
        match state.sinks.get(&key) {
            Some((sink, _)) => {
                let _ = sink.try_send(event);
            }
            None => {
                if state.unclaimed.len() >= UNCLAIMED_PROGRESS_LIMIT {
                    state.unclaimed.pop_front();
                }
                state.unclaimed.push_back((key, event));
            }
        }
    }

    /// Waits (up to `limit`) until the call an upstream request belongs to is registered: a
    /// call registers just after its request is sent, so the upstream's request (an
    /// elicitation) can arrive first.
    pub async fn await_call(&self, origin: Option<&RequestId>, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let registered = self.registered.notified();
            tokio::pin!(registered);
            registered.as_mut().enable();
            let known = self.state.lock().is_ok_and(|state| match origin {
                Some(origin) => state.calls.contains_key(&request_key(origin)),
                None => !state.calls.is_empty(),
            });
            if known {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return,
                () = registered => {}
            }
        }
    }

    /// The conversation an upstream request belongs to: the one of the call whose response
    /// stream carried it (`origin`, known on Streamable HTTP), else the one conversation all
    /// running calls share; `None` when it cannot be told.
    pub fn conversation_for(&self, origin: Option<&RequestId>) -> Option<ConversationId> {
        let state = self.state.lock().ok()?;
        if let Some(origin) = origin
            && let Some((conversation, _)) = state.calls.get(&request_key(origin))
        {
            return conversation.clone();
        }
        let mut conversations = state.calls.values().map(|(conversation, _)| conversation);
        let first = conversations.next()?.clone()?;
        conversations
            .all(|conversation| conversation.as_ref() == Some(&first))
            .then_some(first)
    }

    /// The client link of the call an upstream request belongs to: the call whose response
    /// stream carried it (`origin`), else the only call running on the session. `None` when
    /// that call has no link or the call cannot be told.
    pub fn link_for(&self, origin: Option<&RequestId>) -> Option<Arc<dyn ClientLink>> {
        let state = self.state.lock().ok()?;
        match origin {
            Some(origin) => state.links.get(&request_key(origin)).cloned(),
            None if state.calls.len() == 1 => state.links.values().next().cloned(),
            None => None,
        }
    }

    /// Holds still the timeout clock of the call an upstream request (an elicitation) belongs
    /// to — the call whose response stream carried it, else, when that cannot be told, every
    /// running call of the session (each stays bounded by the hard maximum).
    pub fn pause_calls(&self, origin: Option<&RequestId>) -> Vec<ClockPause> {
        let Ok(state) = self.state.lock() else {
            return Vec::new();
        };
        if let Some(origin) = origin
            && let Some((_, clock)) = state.calls.get(&request_key(origin))
        {
            return vec![clock.pause()];
        }
        state
            .calls
            .values()
            .map(|(_, clock)| clock.pause())
            .collect()
    }

    pub fn log(&self, level: String, logger: Option<String>, data: Value) {
        tracing::info!(
            target: "switchboard_mcp_client::upstream_log",
            server = %self.server_name,
            level = %switchboard_core::log_text(&level),
            logger = %switchboard_core::log_text(logger.as_deref().unwrap_or("")),
            data = %switchboard_core::log_json(&data),
            "upstream log message"
        );
        let Ok(state) = self.state.lock() else { return };
        let mut active = state.sinks.values().filter(|(_, active)| *active);
        if let (Some((sink, _)), None) = (active.next(), active.next()) {
            let _ = sink.try_send(CallEvent::Log {
                level,
                logger,
                data,
            });
        }
    }

    /// `notifications/resources/updated`: to the watchers of `uri` (nobody else asked).
    pub fn resource_updated(&self, uri: &str) {
        tracing::debug!(server = %self.server_name, uri = %switchboard_core::log_text(uri), "upstream resource updated");
        self.watches.updated(uri);
    }

    pub fn list_changed(&self, kind: ListChangeKind) {
        tracing::info!(server = %self.server_name, ?kind, "upstream reported a list change");
        metrics::counter!("mcp_list_changed_total", "server" => self.server_name.clone())
            .increment(1);
        if let Some(callback) = &self.list_changed {
            callback(kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn call(conversation: &str, sink: mpsc::Sender<CallEvent>) -> RegisteredCall {
        RegisteredCall {
            conversation_id: Some(conversation.into()),
            sink,
            clock: CallClock::new(),
            link: None,
        }
    }

    #[test]
    fn early_progress_is_delivered_on_registration_and_logs_only_reach_a_lone_call() {
        let router = Arc::new(NotificationRouter::new("srv".into(), None));
        let token = ProgressToken(NumberOrString::Number(7));
        router.progress(&token, 1.0, Some(3.0), None);
        let (sink, mut events) = mpsc::channel(8);
        let registration = router.register(&token, &RequestId::Number(1), call("c1", sink));
        assert_eq!(
            events.try_recv().unwrap(),
            CallEvent::Progress {
                progress: 1.0,
                total: Some(3.0),
                message: None
            }
        );
        router.log("info".into(), None, Value::from("hello"));
        assert!(matches!(events.try_recv().unwrap(), CallEvent::Log { .. }));

        let other = ProgressToken(NumberOrString::Number(8));
        let (other_sink, mut other_events) = mpsc::channel(8);
        let _other_registration =
            router.register(&other, &RequestId::Number(2), call("c2", other_sink));
        router.log("info".into(), None, Value::from("ambiguous"));
        assert!(events.try_recv().is_err());
        assert!(other_events.try_recv().is_err());

        // A finished call still hears late progress but no longer claims log messages.
        registration.finish();
        router.progress(&token, 2.0, None, None);
        assert!(matches!(
            events.try_recv().unwrap(),
            CallEvent::Progress { .. }
        ));
        router.log("info".into(), None, Value::from("for the other call"));
        assert!(matches!(
            other_events.try_recv().unwrap(),
            CallEvent::Log { .. }
        ));
        drop(registration);
        router.progress(&token, 3.0, None, None);
        assert!(events.try_recv().is_err());
    }
}
