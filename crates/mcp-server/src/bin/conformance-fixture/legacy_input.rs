//! The 2025-11-25 tools that ask their client in the middle of a call (`test_sampling`,
//! `test_elicitation`, `test_elicitation_sep1034_defaults`, `test_elicitation_sep1330_enums`),
//! answering a 2026-07-28 request the way a server of both generations does: a server may not
//! send requests to the client on 2026-07-28, so the same question goes out as an
//! `input_required` round (SEP-2322), and the answer that comes back gives the same text as
//! the client's answer to the request would. A client (Switchboard's gateway among them) that
//! speaks 2026-07-28 to this fixture can so be checked against the 2025-11-25 scenarios.

use crate::fixtures::{
    elicitation_response_form, elicitation_with_defaults, elicitation_with_enums,
};
use crate::mrtr::{input_required, sample};
use crate::tools::string_argument;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// The key of the one input each tool asks for.
const KEY: &str = "answer";

/// One of the four tools on a 2026-07-28 request; `None` otherwise (the tool asks the
/// client with a request of its own, as before).
pub fn call(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let is_stateless = context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if !is_stateless {
        return None;
    }
    let answer = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(KEY));
    let form = |message: &str, schema: Value, label: &str| match answer {
        Some(answer) => Ok(form_answer(answer, label)),
        None => ask(json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": message, "requestedSchema": schema
        }})),
    };
    Some(match request.name.as_ref() {
        "test_sampling" => match answer {
            Some(answer) => Ok(sampling_answer(answer)),
            None => string_argument(request, "prompt").and_then(|prompt| ask(sample(&prompt, 100))),
        },
        "test_elicitation" => string_argument(request, "message")
            .and_then(|message| form(&message, elicitation_response_form(), "User response")),
        "test_elicitation_sep1034_defaults" => form(
            "Please review and update the form fields with defaults",
            elicitation_with_defaults(),
            "Elicitation completed",
        ),
        "test_elicitation_sep1330_enums" => form(
            "Please select options from the enum fields",
            elicitation_with_enums(),
            "Elicitation completed",
        ),
        _ => return None,
    })
}

fn ask(input: Value) -> Result<CallToolResponse, ErrorData> {
    input_required(json!({ KEY: input }), None).map(Into::into)
}

fn text(text: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

/// As `tools::elicit` words the client's answer.
fn form_answer(answer: &Value, label: &str) -> CallToolResponse {
    let action = answer["action"].as_str().unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or_else(|| json!({}));
    text(format!("{label}: action={action}, content={content}"))
}

/// As `test_sampling` words the client's answer.
fn sampling_answer(answer: &Value) -> CallToolResponse {
    let reply = answer["content"]["text"].as_str().unwrap_or("No response");
    text(format!("LLM response: {reply}"))
}
