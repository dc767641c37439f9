//! Answers to what an upstream asks of its client in the middle of a call — a form
//! (`elicitation/create`) or a model's completion (`sampling/createMessage`) — however it asks:
//! as a request of its own on the session (protocol versions up to 2025-11-25, handled by
//! [`crate::handler`]) or inside the call's `input_required` result (2026-07-28's multi
//! round-trip requests, SEP-2322, driven by `calls::input_required`). Both ask the same parties in
//! the same order, so a person or a gateway client sees one behaviour whatever the upstream's
//! version: the call's own client when it answers that kind ([`ClientLink`], the gateway's
//! client), else Switchboard's forms ([`ElicitationResponder`]) for a form; sampling has no
//! answer of Switchboard's own.

#![allow(deprecated)] // sampling (`CreateMessage*`) is deprecated by SEP-2577; servers still ask.

use crate::client_link::{ClientLink, ForwardedKind, ForwardedRequest, check_elicitation_content};
use crate::handler::{ElicitationRequest, ElicitationResponder, ElicitationResponse};
use rmcp::ErrorData;
use rmcp::model::{CreateMessageResult, ElicitResult, ElicitationAction, ErrorCode};
use serde_json::Value;
use std::sync::Arc;
use switchboard_core::ConversationId;

/// Who can answer for one call.
#[derive(Clone, Debug)]
pub(crate) struct Answerers {
    /// The upstream that asks (its registered name).
    pub server_name: String,
    /// The conversation of the call, when known.
    pub conversation_id: Option<ConversationId>,
    /// The call's own client, whatever it declared ([`ClientLink::answers`] is checked here).
    pub link: Option<Arc<dyn ClientLink>>,
    /// Switchboard's forms, when wired in.
    pub responder: Option<Arc<dyn ElicitationResponder>>,
}

impl Answerers {
    fn link_answering(&self, kind: ForwardedKind) -> Option<Arc<dyn ClientLink>> {
        self.link.clone().filter(|link| link.answers(kind))
    }

    /// A form, as the upstream sent its `params`: the call's client fills it in when it
    /// declared elicitation (its answer checked against the form), else Switchboard's forms;
    /// with neither, or for a URL-mode request, it is declined.
    pub async fn elicit(&self, wire: Value) -> Result<ElicitResult, ErrorData> {
        if wire.get("mode").and_then(Value::as_str) == Some("url") {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        if let Some(link) = self.link_answering(ForwardedKind::Elicitation) {
            return self.forward_elicitation(link, wire).await;
        }
        let Some(responder) = self.responder.clone() else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let request = ElicitationRequest {
            server_name: self.server_name.clone(),
            conversation_id: self.conversation_id.clone(),
            message: wire
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            requested_schema: wire.get("requestedSchema").cloned().unwrap_or(Value::Null),
        };
        Ok(match responder.respond(request).await {
            ElicitationResponse::Accept(content) => {
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(content);
                result
            }
            ElicitationResponse::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationResponse::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// A sampling request's `params`, passed on to the call's client when it declared
    /// sampling; refused otherwise (no model of Switchboard's answers an upstream).
    pub async fn sample(&self, params: Value) -> Result<CreateMessageResult, ErrorData> {
        let Some(link) = self.link_answering(ForwardedKind::Sampling) else {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "sampling is only answered during a call of a gateway client that declared sampling",
                None,
            ));
        };
        let answer = self.forward(link, ForwardedKind::Sampling, params).await?;
        serde_json::from_value(answer).map_err(|error| {
            ErrorData::internal_error(
                format!("the client's sampling answer is not a CreateMessageResult: {error}"),
                None,
            )
        })
    }

    async fn forward(
        &self,
        link: Arc<dyn ClientLink>,
        kind: ForwardedKind,
        params: Value,
    ) -> Result<Value, ErrorData> {
        let request = ForwardedRequest {
            kind,
            server_name: self.server_name.clone(),
            params,
        };
        link.forward(request)
            .await
            .map_err(|error| ErrorData::new(ErrorCode(error.code), error.message, None))
    }

    /// The client's answer to a form, checked against the form before it goes upstream.
    async fn forward_elicitation(
        &self,
        link: Arc<dyn ClientLink>,
        wire: Value,
    ) -> Result<ElicitResult, ErrorData> {
        let schema = wire.get("requestedSchema").cloned().unwrap_or(Value::Null);
        let answer = self.forward(link, ForwardedKind::Elicitation, wire).await?;
        let result: ElicitResult = serde_json::from_value(answer).map_err(|error| {
            ErrorData::internal_error(
                format!("the client's elicitation answer is not an ElicitResult: {error}"),
                None,
            )
        })?;
        if result.action == ElicitationAction::Accept {
            let content = result.content.clone().unwrap_or(Value::Null);
            check_elicitation_content(&schema, &content).map_err(|reason| {
                ErrorData::internal_error(
                    format!(
                        "the client's accepted form does not fit the requested schema: {reason}"
                    ),
                    None,
                )
            })?;
        }
        Ok(result)
    }
}
