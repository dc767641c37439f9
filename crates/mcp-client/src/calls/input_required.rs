//! Multi round-trip requests (protocol 2026-07-28, SEP-2322): an upstream that needs input
//! in the middle of `tools/call`, `prompts/get` or `resources/read` no longer sends a request
//! of its own; it answers `input_required` with the requests (a form, a model's completion,
//! the roots) and an opaque `requestState`, and the client sends the same request again with
//! the answers and that state. The answers come from the same parties, in the same order, as
//! for an earlier version's own requests ([`crate::input_answers`]), so a gateway client or a
//! person in the chat sees the same thing whatever version the upstream speaks.
//!
//! Each round is a request of its own under the call's limits; a round that brings only state
//! (the upstream is still working) waits a moment first, as rmcp's helper does; after
//! [`MAX_INPUT_ROUNDS`] the call fails. Cancelling the call while a person answers ends it.

#![allow(deprecated)] // sampling (`CreateMessage*`) is deprecated by SEP-2577; servers still ask.

use super::{CallContext, Limits};
use crate::UpstreamError;
use crate::client::McpClient;
use crate::input_answers::Answerers;
use crate::server::UpstreamServer;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
    GetPromptRequestParams, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ListRootsResult, ReadResourceRequest, ReadResourceRequestParams, ServerResult,
};
use serde_json::Value;
use std::time::Duration;

/// Rounds of `input_required` one request may go through (rmcp's default cap).
pub(crate) const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What the next round of a request carries.
#[derive(Debug, Default)]
pub(super) struct RoundInput {
    pub responses: Option<InputResponses>,
    pub state: Option<String>,
}

impl McpClient {
    /// Sends the request `build` makes for each round (the first with nothing) until the
    /// upstream answers with anything but `input_required`.
    pub(super) async fn send_answering_input(
        &self,
        server: &UpstreamServer,
        context: &CallContext,
        build: impl Fn(RoundInput) -> ClientRequest,
    ) -> Result<(ServerResult, Limits), UpstreamError> {
        let mut input = RoundInput::default();
        let mut state_only_rounds = 0u32;
        for _ in 0..MAX_INPUT_ROUNDS {
            let (result, limits) = self.send(server, build(input), context).await?;
            let ServerResult::InputRequiredResult(asked) = result else {
                return Ok((result, limits));
            };
            input = self
                .answer_round(server, context, asked, &mut state_only_rounds)
                .await?;
        }
        Err(UpstreamError::Protocol(format!(
            "it still asked for more input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// The answers to one `input_required`, or why the call cannot go on.
    async fn answer_round(
        &self,
        server: &UpstreamServer,
        context: &CallContext,
        asked: InputRequiredResult,
        state_only_rounds: &mut u32,
    ) -> Result<RoundInput, UpstreamError> {
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() {
            if asked.request_state.is_none() {
                return Err(UpstreamError::Protocol(
                    "it answered input_required with neither requests nor state".into(),
                ));
            }
            // Still working: come back a little later each time (50 ms up to 250 ms).
            let wait = (50u64 << (*state_only_rounds).min(3)).min(250);
            *state_only_rounds += 1;
            tokio::select! {
                () = context.cancellation.cancelled() => return Err(UpstreamError::Cancelled),
                () = tokio::time::sleep(Duration::from_millis(wait)) => {}
            }
            return Ok(RoundInput {
                responses: None,
                state: asked.request_state,
            });
        }
        *state_only_rounds = 0;
        let answerers = self.answerers(server, context);
        let responses = tokio::select! {
            () = context.cancellation.cancelled() => return Err(UpstreamError::Cancelled),
            responses = answer_all(&answerers, requests) => responses?,
        };
        Ok(RoundInput {
            responses: Some(responses),
            state: asked.request_state,
        })
    }

    /// Who answers the questions of `context`'s call to `server`.
    pub(super) fn answerers(&self, server: &UpstreamServer, context: &CallContext) -> Answerers {
        Answerers {
            server_name: server.name.clone(),
            conversation_id: context.caller.conversation_id.clone(),
            link: context.client_link.clone(),
            responder: self.inner.elicitation.clone(),
        }
    }
}

/// Every request of a round, answered at once (a person may fill in two forms side by side).
pub(super) async fn answer_all(
    answerers: &Answerers,
    requests: InputRequests,
) -> Result<InputResponses, UpstreamError> {
    let answers = requests.into_iter().map(|(key, request)| async move {
        answer(answerers, request).await.map(|answer| (key, answer))
    });
    Ok(futures::future::try_join_all(answers)
        .await?
        .into_iter()
        .collect())
}

/// One request's answer, as the JSON of its result.
async fn answer(answerers: &Answerers, request: InputRequest) -> Result<Value, UpstreamError> {
    let unanswered = |method: &'static str| {
        move |error: ErrorData| UpstreamError::InputUnanswered {
            method,
            reason: error.message.to_string(),
        }
    };
    let answer = match request {
        InputRequest::Elicitation(request) => {
            let wire = serde_json::to_value(&request.params).unwrap_or(Value::Null);
            let result = answerers
                .elicit(wire)
                .await
                .map_err(unanswered("elicitation/create"))?;
            serde_json::to_value(result)
        }
        InputRequest::CreateMessage(request) => {
            let params = serde_json::to_value(&request.params).unwrap_or(Value::Null);
            let result = answerers
                .sample(params)
                .await
                .map_err(unanswered("sampling/createMessage"))?;
            serde_json::to_value(result)
        }
        // We declare no roots: there are none to list.
        InputRequest::ListRoots(_) => serde_json::to_value(ListRootsResult::default()),
        _ => {
            return Err(UpstreamError::Protocol(
                "it asked for input of a kind this client does not know".into(),
            ));
        }
    };
    answer.map_err(|error| {
        UpstreamError::Protocol(format!("an answer could not be encoded: {error}"))
    })
}

/// `tools/call` with `params`, each round's input added.
pub(super) fn call_tool(params: CallToolRequestParams) -> impl Fn(RoundInput) -> ClientRequest {
    move |input| {
        let mut params = params.clone();
        params.input_responses = input.responses;
        params.request_state = input.state;
        ClientRequest::CallToolRequest(CallToolRequest::new(params))
    }
}

/// `resources/read` of `uri`, each round's input added.
pub(super) fn read_resource(uri: &str) -> impl Fn(RoundInput) -> ClientRequest {
    move |input| {
        let mut params = ReadResourceRequestParams::new(uri);
        params.input_responses = input.responses;
        params.request_state = input.state;
        ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
    }
}

/// `prompts/get` of `name` with `arguments`, each round's input added.
pub(super) fn get_prompt(
    name: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> impl Fn(RoundInput) -> ClientRequest {
    move |input| {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments.clone();
        params.input_responses = input.responses;
        params.request_state = input.state;
        ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
    }
}
