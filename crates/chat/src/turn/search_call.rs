//! A `search_tools` call (`crate::tools::ToolOffer`): recorded like any call so the
//! conversation shows it (`proposed` → `approved` → `dispatched` → `completed`, server
//! `switchboard`), answered from the turn's own catalog without reaching a server or the
//! approval gate (there is nothing to approve: it reads the names and descriptions of tools the
//! conversation already offers), its matches offered from the next step on.

use super::TurnRun;
use super::call_outcome::{Settled, failure, parse_arguments};
use super::tool_step::{CallNames, EventTemplate, finish_call, record_proposed, transition};
use crate::error::ChatResult;
use std::time::Instant;
use switchboard_core::{ChatMessage, MessageId, ToolCallRequest, ToolCallState};
use switchboard_mcp_client::{ToolContent, ToolResult};
use switchboard_store::ToolCallOutcome;

/// The server name `search_tools` calls are recorded under.
const HOST_SERVER: &str = "switchboard";

pub(super) async fn run_search_call(
    run: &TurnRun<'_>,
    message_id: &MessageId,
    call: ToolCallRequest,
) -> ChatResult<ChatMessage> {
    let names = CallNames {
        server_id: None,
        app: None,
        server_name: HOST_SERVER.to_owned(),
        tool_name: call.name.clone(),
    };
    let record = record_proposed(run, message_id, &call, &names).await?;
    let parsed = parse_arguments(&call.arguments);
    let event = EventTemplate::new(run, &call, &record, names, &parsed);
    let started = Instant::now();
    let searched = parsed.and_then(|arguments| run.offer.search(&arguments));
    let settled = match searched {
        Err(message) => failure(ToolCallState::Failed, "invalid_arguments", message),
        Ok(found) => {
            for state in [ToolCallState::Approved, ToolCallState::Dispatched] {
                transition(run, &record, state, ToolCallOutcome::default()).await?;
            }
            let text = serde_json::to_string(&found).unwrap_or_default();
            Settled {
                state: ToolCallState::Completed,
                result: Some(ToolResult {
                    content: vec![ToolContent::Text { text }],
                    structured_content: None,
                    is_error: false,
                }),
                error: None,
                duration: Some(started.elapsed()),
            }
        }
    };
    finish_call(run, &record, &call, settled, &event, None).await
}
