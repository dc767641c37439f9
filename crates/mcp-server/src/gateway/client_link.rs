//! What the gateway sends its client while one of its `tools/call` runs: the approval
//! question of an `ASK_USER` call as an `elicitation/create` form ([`GatewayAsker`], only to a
//! client that declared form elicitation, on a protocol generation that allows the server to
//! ask), and the upstream's progress under the client's own `progressToken`
//! ([`GatewayProgress`]). Both ride the request's own response stream (the form names the
//! request it is about, SEP-2260's originating request; a progress notification is routed by
//! its token).
//!
//! The types here name no rmcp type in their interface: the host drives them with
//! `switchboard_core`'s [`ApprovalQuestion`] and [`ClientAnswer`].

use rmcp::model::GetExtensions;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, EnumSchema, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestId, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, Peer, PeerRequestOptions, RequestContext, RoleServer};
use serde::Deserialize;
use switchboard_core::{ApprovalQuestion, ClientAnswer};

/// The form's one field.
const DECISION_FIELD: &str = "decision";
const APPROVE: &str = "approve";
const DENY: &str = "deny";
/// Longest rendering of the arguments shown in the form, in characters.
const MAX_ARGUMENTS_CHARS: usize = 4000;

/// Asks the gateway's client to have its user approve a call (see the module docs).
#[derive(Clone, Debug)]
pub struct GatewayAsker {
    peer: Peer<RoleServer>,
    /// The client's `tools/call` the question is about: the form rides its response stream.
    call_id: RequestId,
}

/// What an accepted form holds.
#[derive(Deserialize)]
struct DecisionForm {
    decision: String,
}

impl GatewayAsker {
    /// An asker for the client of `context`, if it declared form elicitation and its protocol
    /// lets the server ask (requests from the server are gone from 2026-07-28 on).
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Option<Self> {
        let elicitation = context.client_capabilities()?.elicitation?;
        let form = elicitation.form.is_some() || elicitation.url.is_none();
        let version = context.protocol_version()?;
        (form && version < ProtocolVersion::V_2026_07_28).then(|| Self {
            peer: context.peer.clone(),
            call_id: context.id.clone(),
        })
    }

    /// Puts `question` to the client's user and waits (at most `question.timeout`). Dropped
    /// before the answer (a person decided in Switchboard first, the call ended), the form is
    /// withdrawn: the client is sent `notifications/cancelled` for it.
    pub async fn ask(&self, question: &ApprovalQuestion) -> ClientAnswer {
        let params = match approval_form(question) {
            Ok(params) => params,
            Err(reason) => return ClientAnswer::Unanswered(reason),
        };
        let mut request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        // Named, not left to the task it is sent from (the gate asks from a task of its own):
        // without it rmcp sends the form on the standalone GET stream, which a client may not
        // have opened yet, and the question waits unseen until it times out.
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.call_id.clone()));
        let options = PeerRequestOptions::with_timeout(question.timeout);
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(error) => return ClientAnswer::Unanswered(error.to_string()),
        };
        let mut withdrawal = Withdrawal {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let response = handle.await_response().await;
        withdrawal.id = None;
        match response {
            Ok(ClientResult::ElicitResult(result)) => answer_of(result),
            Ok(_) => ClientAnswer::Unanswered("the client answered something else".to_owned()),
            Err(error) => ClientAnswer::Unanswered(error.to_string()),
        }
    }
}

/// Withdraws a form still open when its question no longer matters.
struct Withdrawal {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Withdrawal {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let reason = "the call was decided elsewhere or ended".to_owned();
        tokio::spawn(async move {
            let notice = CancelledNotificationParam::new(Some(id), Some(reason));
            let _ = peer.notify_cancelled(notice).await;
        });
    }
}

/// The form: a message naming the server, the tool, its description and arguments, and one
/// required choice, approve or deny.
fn approval_form(question: &ApprovalQuestion) -> Result<ElicitRequestParams, String> {
    let choice = EnumSchema::builder(vec![APPROVE.to_owned(), DENY.to_owned()])
        .title("Decision")
        .enum_titles(vec!["Approve".to_owned(), "Deny".to_owned()])?
        .build();
    let requested_schema = ElicitationSchema::builder()
        .required_enum_schema(DECISION_FIELD, choice)
        .title("Approve a tool call")
        .build()
        .map_err(str::to_owned)?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: approval_message(question),
        requested_schema,
    })
}

fn approval_message(question: &ApprovalQuestion) -> String {
    let arguments = serde_json::to_string_pretty(&question.arguments).unwrap_or_default();
    let mut shown: String = arguments.chars().take(MAX_ARGUMENTS_CHARS).collect();
    if shown.len() < arguments.len() {
        shown.push_str("\n…");
    }
    format!(
        "Switchboard asks whether to run the tool \"{tool}\" of the server \"{server}\".\n\n\
         Tool description: {description}\n\nArguments:\n{shown}\n\n\
         Choose approve to run it once, or deny.",
        tool = question.tool,
        server = question.server,
        description = question.description,
    )
}

fn answer_of(result: ElicitResult) -> ClientAnswer {
    match result.action {
        ElicitationAction::Accept => {
            let form = result
                .content
                .map(serde_json::from_value::<DecisionForm>)
                .and_then(Result::ok);
            match form.as_ref().map(|form| form.decision.as_str()) {
                Some(APPROVE) => ClientAnswer::Approved,
                Some(DENY) => ClientAnswer::Denied,
                _ => ClientAnswer::Unanswered(format!(
                    "the accepted form has no {DECISION_FIELD} of {APPROVE} or {DENY}"
                )),
            }
        }
        ElicitationAction::Decline => ClientAnswer::Declined,
        _ => ClientAnswer::Cancelled,
    }
}

/// Reports the upstream's progress to the gateway's client under its own token.
#[derive(Clone, Debug)]
pub struct GatewayProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl GatewayProgress {
    /// For a request whose `_meta` carried a `progressToken`.
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Option<Self> {
        Some(Self {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token()?,
        })
    }

    /// Sends `notifications/progress`; a client that left is not an error.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let mut params = ProgressNotificationParam::new(self.token.clone(), progress);
        params.total = total;
        params.message = message;
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "could not forward progress to the gateway's client");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::time::Duration;

    fn question() -> ApprovalQuestion {
        ApprovalQuestion {
            server: "everything".to_owned(),
            tool: "echo".to_owned(),
            description: "Echoes".to_owned(),
            arguments: Value::from(serde_json::Map::from_iter([(
                "message".to_owned(),
                Value::from("hi"),
            )])),
            timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn the_form_names_server_tool_and_arguments_and_asks_one_choice() {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = approval_form(&question()).unwrap()
        else {
            panic!("a form");
        };
        assert!(message.contains("\"echo\"") && message.contains("\"everything\""));
        assert!(message.contains("\"message\": \"hi\""), "{message}");
        assert_eq!(requested_schema.required, Some(vec!["decision".to_owned()]));
    }

    #[test]
    fn answers_are_read_from_the_form() {
        let accept =
            |content: Value| ElicitResult::new(ElicitationAction::Accept).with_content(content);
        let with = |decision: &str| {
            Value::from(serde_json::Map::from_iter([(
                "decision".to_owned(),
                Value::from(decision),
            )]))
        };
        assert_eq!(answer_of(accept(with("approve"))), ClientAnswer::Approved);
        assert_eq!(answer_of(accept(with("deny"))), ClientAnswer::Denied);
        assert!(matches!(
            answer_of(accept(with("maybe"))),
            ClientAnswer::Unanswered(_)
        ));
        let decline = ElicitResult::new(ElicitationAction::Decline);
        assert_eq!(answer_of(decline), ClientAnswer::Declined);
        let cancel = ElicitResult::new(ElicitationAction::Cancel);
        assert_eq!(answer_of(cancel), ClientAnswer::Cancelled);
    }
}
