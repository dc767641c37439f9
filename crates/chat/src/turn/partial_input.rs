//! The input of a call to a tool with an MCP App while the model still writes it: each
//! arguments fragment the provider streams is added to its call's text, and what that text
//! reads as so far ([`partial_object`]) goes out as a `tool_input_partial` event, so the app
//! can show a preview (`ui/notifications/tool-input-partial`) before the call even starts.
//! Only calls to tools with an app are followed (nobody else renders partial input), at most
//! one event per [`PARTIAL_INPUT_MIN_INTERVAL`] per call and only when the object changed;
//! the complete input always follows in the call's `mcp_tool` `started` event.

use super::TurnRun;
use super::partial_json::partial_object;
use crate::events::{ChatEvent, ToolInputPartialEvent};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use switchboard_core::ToolApp;
use switchboard_llm::ToolCallArgumentsDelta;

/// Least time between two `tool_input_partial` events of one call.
pub(super) const PARTIAL_INPUT_MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The calls of one model answer whose input is being streamed, by their index.
#[derive(Debug, Default)]
pub(super) struct PartialInputs {
    calls: HashMap<u32, PartialCall>,
}

#[derive(Debug)]
struct PartialCall {
    /// The tool's server and name and its app; `None`: the tool has no app (or is unknown),
    /// so the call is not followed.
    target: Option<(String, String, ToolApp)>,
    text: String,
    last_sent: Option<(Instant, Map<String, Value>)>,
}

impl PartialInputs {
    /// Adds `delta` to its call; answers the event to send, if one is due.
    pub(super) fn on_fragment(
        &mut self,
        run: &TurnRun<'_>,
        delta: ToolCallArgumentsDelta,
    ) -> Option<ChatEvent> {
        let call = self
            .calls
            .entry(delta.index)
            .or_insert_with(|| PartialCall {
                target: app_target(run, &delta.name),
                text: String::new(),
                last_sent: None,
            });
        let (server, tool, app) = call.target.clone()?;
        call.text.push_str(&delta.fragment);
        let now = Instant::now();
        if let Some((sent_at, _)) = &call.last_sent
            && now.duration_since(*sent_at) < PARTIAL_INPUT_MIN_INTERVAL
        {
            return None;
        }
        let arguments = partial_object(&call.text).filter(|object| !object.is_empty())?;
        if call
            .last_sent
            .as_ref()
            .is_some_and(|(_, sent)| *sent == arguments)
        {
            return None;
        }
        call.last_sent = Some((now, arguments.clone()));
        Some(ChatEvent::ToolInputPartial(ToolInputPartialEvent {
            index: delta.index,
            call_id: delta.id,
            server,
            tool,
            arguments: Value::Object(arguments),
            app,
        }))
    }
}

/// The server, upstream tool name and app of the tool the model named, when it has an app.
fn app_target(run: &TurnRun<'_>, name: &str) -> Option<(String, String, ToolApp)> {
    let (route, target) = run.tools.lookup(name)?;
    let app = ToolApp::of(target.registered_server_id.as_ref(), &route.tool)?;
    Some((route.server_name.clone(), route.tool_name.clone(), app))
}
