//! Protocol 2026-07-28 fixtures: tools (and one prompt) that answer `input_required` with
//! elicitation, sampling and roots requests for the client to fulfil and retry with
//! (multi round-trip requests, SEP-2322), a sealed `requestState` that must come back intact,
//! and a tool that needs a client capability the request may not declare (SEP-2575).

use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// Names and descriptions of the fixture's 2026-07-28 tools.
pub const TOOLS: [(&str, &str); 9] = [
    ("test_missing_capability", "Test tool requiring sampling"),
    (
        "test_input_required_result_elicitation",
        "MRTR: returns InputRequiredResult with elicitation request",
    ),
    (
        "test_input_required_result_sampling",
        "MRTR: returns InputRequiredResult with sampling request",
    ),
    (
        "test_input_required_result_list_roots",
        "MRTR: returns InputRequiredResult with roots/list request",
    ),
    (
        "test_input_required_result_request_state",
        "MRTR: returns InputRequiredResult with requestState",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "MRTR: returns InputRequiredResult with multiple input requests",
    ),
    (
        "test_input_required_result_multi_round",
        "MRTR: multi-round InputRequiredResult workflow",
    ),
    (
        "test_input_required_result_tampered_state",
        "MRTR: integrity-protected requestState test",
    ),
    (
        "test_input_required_result_capabilities",
        "MRTR: respects client capabilities in inputRequests",
    ),
];

pub const PROMPT: &str = "test_input_required_result_prompt";

fn elicit(message: &str, field: &str, field_type: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {field: {"type": field_type}}, "required": [field]}
    }})
}

pub fn sample(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens
    }})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

pub fn input_required(
    requests: Value,
    state: Option<String>,
) -> Result<InputRequiredResult, ErrorData> {
    let requests: InputRequests = serde_json::from_value(requests).map_err(|error| {
        ErrorData::internal_error(format!("fixture input requests: {error}"), None)
    })?;
    Ok(InputRequiredResult::new(Some(requests), state))
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

/// `content.<field>` of an elicitation answer, or `unknown`.
fn answer_text(responses: &InputResponses, key: &str, field: &str) -> String {
    responses
        .get(key)
        .and_then(|response| response["content"][field].as_str())
        .unwrap_or("unknown")
        .to_owned()
}

fn state(value: Value) -> String {
    value.to_string()
}

fn read_state(request: &CallToolRequestParams) -> Option<Value> {
    request
        .request_state
        .as_deref()
        .and_then(|raw| serde_json::from_str(raw).ok())
}

fn nonce() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Runs one of [`TOOLS`]; `None` for any other name. `codec` seals integrity-checked state.
pub fn call(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    codec: &RequestStateCodec,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let responses = request.input_responses.clone().unwrap_or_default();
    let capabilities = context.client_capabilities().unwrap_or_default();
    let answer = match request.name.as_ref() {
        "test_missing_capability" => {
            if capabilities.sampling.is_none() {
                let required: ClientCapabilities =
                    serde_json::from_value(json!({"sampling": {}})).unwrap_or_default();
                return Some(Err(ErrorData::missing_required_client_capability(required)));
            }
            Ok(text("Success"))
        }
        "test_input_required_result_elicitation" => match responses.contains_key("user_name") {
            true => Ok(text(format!(
                "Hello, {}!",
                answer_text(&responses, "user_name", "name")
            ))),
            false => input_required(
                json!({"user_name": elicit("What is your name?", "name", "string")}),
                None,
            )
            .map(Into::into),
        },
        "test_input_required_result_sampling" => match responses.get("sample_request") {
            Some(response) => Ok(text(format!(
                "Sampling result: {}",
                response["content"]["text"]
                    .as_str()
                    .unwrap_or("no response")
            ))),
            None => input_required(
                json!({"sample_request": sample("What is the capital of France?", 100)}),
                None,
            )
            .map(Into::into),
        },
        "test_input_required_result_list_roots" => match responses.get("roots_request") {
            Some(response) => Ok(text(format!(
                "Found {} root(s)",
                response["roots"].as_array().map_or(0, Vec::len)
            ))),
            None => input_required(json!({"roots_request": roots()}), None).map(Into::into),
        },
        "test_input_required_result_request_state" => {
            let confirmed = responses
                .get("confirm")
                .is_some_and(|r| r["content"]["ok"] == true);
            match read_state(request) {
                Some(state) if state["kind"] == "request-state" && confirmed => {
                    Ok(text("state-ok: requestState validated"))
                }
                _ => input_required(
                    json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                    Some(state(json!({"kind": "request-state", "nonce": nonce()}))),
                )
                .map(Into::into),
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let complete = ["user_name", "greeting", "client_roots"]
                .iter()
                .all(|key| responses.contains_key(*key));
            match read_state(request) {
                Some(state) if state["kind"] == "multiple-inputs" && complete => {
                    let greeting = responses["greeting"]["content"]["text"]
                        .as_str()
                        .unwrap_or("Hello there!");
                    let roots = responses["client_roots"]["roots"]
                        .as_array()
                        .map_or(0, Vec::len);
                    let name = answer_text(&responses, "user_name", "name");
                    Ok(text(format!(
                        "Name: {name}; Greeting: {greeting}; Roots: {roots}"
                    )))
                }
                _ => input_required(
                    json!({
                        "user_name": elicit("What is your name?", "name", "string"),
                        "greeting": sample("Generate a greeting", 50),
                        "client_roots": roots()
                    }),
                    Some(state(json!({"kind": "multiple-inputs", "nonce": nonce()}))),
                )
                .map(Into::into),
            }
        }
        "test_input_required_result_multi_round" => {
            let step1 = || {
                input_required(
                    json!({"step1": elicit("Step 1: What is your name?", "name", "string")}),
                    Some(state(json!({"round": 1, "nonce": nonce()}))),
                )
                .map(Into::into)
            };
            match read_state(request) {
                Some(state) if state["round"] == 1 && responses.contains_key("step1") => input_required(
                    json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}),
                    Some(self::state(json!({"round": 2, "name": answer_text(&responses, "step1", "name"), "nonce": nonce()}))),
                )
                .map(Into::into),
                Some(state) if state["round"] == 2 && responses.contains_key("step2") => {
                    let name = state["name"].as_str().unwrap_or("friend").to_owned();
                    Ok(text(format!(
                        "Multi-round complete for {name} who likes {}",
                        answer_text(&responses, "step2", "color")
                    )))
                }
                _ => step1(),
            }
        }
        "test_input_required_result_tampered_state" => {
            if let Some(raw) = &request.request_state {
                let Ok(verified) = codec.open_json::<Value>(raw) else {
                    return Some(Err(ErrorData::invalid_params(
                        "requestState integrity check failed",
                        None,
                    )));
                };
                if verified["kind"] == "tamper-test" && responses.contains_key("confirm") {
                    return Some(Ok(text("integrity-ok: state verified")));
                }
            }
            let sealed = codec
                .seal_json(&json!({"kind": "tamper-test", "nonce": nonce()}))
                .map_err(|error| ErrorData::internal_error(error.to_string(), None));
            sealed.and_then(|sealed| {
                input_required(
                    json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
                    Some(sealed),
                )
                .map(Into::into)
            })
        }
        "test_input_required_result_capabilities" => {
            if !responses.is_empty() {
                let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
                return Some(Ok(text(format!(
                    "capabilities-ok: received {}",
                    keys.join(",")
                ))));
            }
            let mut requests = serde_json::Map::new();
            if capabilities.elicitation.is_some() {
                requests.insert(
                    "elicit_input".into(),
                    elicit("Elicitation input", "value", "string"),
                );
            }
            if capabilities.sampling.is_some() {
                requests.insert("sample_input".into(), sample("Sample request", 50));
            }
            if requests.is_empty() {
                return Some(Ok(text("No supported capabilities declared")));
            }
            codec
                .seal_json(&json!({"kind": "capabilities-test", "nonce": nonce()}))
                .map_err(|error| ErrorData::internal_error(error.to_string(), None))
                .and_then(|sealed| {
                    input_required(Value::Object(requests), Some(sealed)).map(Into::into)
                })
        }
        _ => return None,
    };
    Some(answer)
}

/// The MRTR prompt: asks for context by elicitation, then uses it.
pub fn prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    let responses = request.input_responses.clone().unwrap_or_default();
    if responses.contains_key("user_context") {
        let context = answer_text(&responses, "user_context", "context");
        let message =
            PromptMessage::new_text(Role::User, format!("Prompt with context: {context}"));
        return Ok(GetPromptResult::new(vec![message]).into());
    }
    input_required(
        json!({"user_context": elicit("What context should the prompt use?", "context", "string")}),
        None,
    )
    .map(Into::into)
}
