//! The fixture tools: fixed content of every kind, a tool error, logging and progress during a
//! call, and server-to-client requests (sampling, elicitation) in the middle of a call.

#![allow(deprecated)] // sampling and logging are deprecated by 2026-07-28 but are what this tests

use crate::fixtures::*;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const STEP_DELAY: Duration = Duration::from_millis(50);

fn object_schema(value: Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().cloned().expect("schemas are objects"))
}

fn empty_schema() -> Arc<JsonObject> {
    object_schema(json!({ "type": "object", "properties": {} }))
}

fn string_argument_schema(name: &str, description: &str) -> Arc<JsonObject> {
    object_schema(json!({
        "type": "object",
        "properties": { name: { "type": "string", "description": description } },
        "required": [name]
    }))
}

pub fn definitions() -> Vec<Tool> {
    let mut tools = fixture_tools();
    tools.extend(
        crate::mrtr::TOOLS
            .iter()
            .map(|(name, description)| Tool::new(*name, *description, empty_schema())),
    );
    tools
}

fn fixture_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_simple_text",
            "Tests simple text content response",
            empty_schema(),
        ),
        Tool::new(
            "test_image_content",
            "Tests image content response",
            empty_schema(),
        ),
        Tool::new(
            "test_audio_content",
            "Tests audio content response",
            empty_schema(),
        ),
        Tool::new(
            "test_embedded_resource",
            "Tests embedded resource content response",
            empty_schema(),
        ),
        Tool::new(
            "test_multiple_content_types",
            "Tests response with text, image and resource content",
            empty_schema(),
        ),
        Tool::new(
            "test_tool_with_logging",
            "Tests a tool that emits log messages during execution",
            empty_schema(),
        ),
        Tool::new(
            "test_tool_with_progress",
            "Tests a tool that reports progress notifications",
            empty_schema(),
        ),
        Tool::new(
            "test_error_handling",
            "Tests error response handling",
            empty_schema(),
        ),
        Tool::new(
            "test_sampling",
            "Tests server-initiated sampling (LLM completion request)",
            string_argument_schema("prompt", "The prompt to send to the LLM"),
        ),
        Tool::new(
            "test_elicitation",
            "Tests server-initiated elicitation (user input request)",
            string_argument_schema("message", "The message to show the user"),
        ),
        Tool::new(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values (SEP-1034)",
            empty_schema(),
        ),
        Tool::new(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schemas (SEP-1330)",
            empty_schema(),
        ),
        Tool::new(
            "test_trigger_tool_change",
            "Diagnostic hook: announces a tool list change",
            empty_schema(),
        ),
        Tool::new(
            "test_trigger_prompt_change",
            "Diagnostic hook: announces a prompt list change",
            empty_schema(),
        ),
        Tool::new(
            "test_custom_header",
            "Tests an argument mirrored in a custom HTTP header (SEP-2243)",
            object_schema(custom_header_schema()),
        ),
        Tool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features (SEP-1613)",
            object_schema(json_schema_2020_12()),
        ),
    ]
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

pub fn string_argument(request: &CallToolRequestParams, name: &str) -> Result<String, ErrorData> {
    request
        .arguments
        .as_ref()
        .and_then(|arguments| arguments.get(name))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("{} needs the string argument '{name}'", request.name),
                None,
            )
        })
}

pub async fn call(
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    Ok(match request.name.as_ref() {
        "test_simple_text" => text("This is a simple text response for testing."),
        "test_image_content" => {
            CallToolResult::success(vec![ContentBlock::image(TEST_IMAGE_BASE64, "image/png")])
        }
        "test_audio_content" => {
            CallToolResult::success(vec![ContentBlock::audio(TEST_AUDIO_BASE64, "audio/wav")])
        }
        "test_embedded_resource" => CallToolResult::success(vec![ContentBlock::resource(
            ResourceContents::text(
                "This is an embedded resource content.",
                "test://embedded-resource",
            )
            .with_mime_type("text/plain"),
        )]),
        "test_multiple_content_types" => CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
            ContentBlock::resource(
                ResourceContents::text(
                    json!({"test": "data", "value": 123}).to_string(),
                    "test://mixed-content-resource",
                )
                .with_mime_type("application/json"),
            ),
        ]),
        "test_tool_with_logging" => {
            for (index, message) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .iter()
            .enumerate()
            {
                if index > 0 {
                    tokio::time::sleep(STEP_DELAY).await;
                }
                let log = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message))
                    .with_logger("conformance-fixture");
                context
                    .peer
                    .notify_logging_message(log)
                    .await
                    .map_err(internal)?;
            }
            text("Tool with logging executed successfully")
        }
        "test_tool_with_progress" => {
            let token = context.meta.get_progress_token();
            for (index, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if index > 0 {
                    tokio::time::sleep(STEP_DELAY).await;
                }
                if let Some(token) = &token {
                    let notification = ProgressNotificationParam::new(token.clone(), progress)
                        .with_total(100.0)
                        .with_message(format!("Completed step {progress} of 100"));
                    context
                        .peer
                        .notify_progress(notification)
                        .await
                        .map_err(internal)?;
                }
            }
            let shown =
                token.map(|token| serde_json::to_value(token).unwrap_or_default().to_string());
            text(shown.unwrap_or_else(|| "no progress token".into()))
        }
        "test_error_handling" => CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )]),
        "test_sampling" => {
            let prompt = string_argument(&request, "prompt")?;
            let params: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                "maxTokens": 100
            }))
            .map_err(internal)?;
            match context.peer.create_message(params).await {
                Ok(result) => {
                    let answer = serde_json::to_value(&result.message).unwrap_or_default();
                    let reply = answer["content"]["text"]
                        .as_str()
                        .unwrap_or("No response")
                        .to_owned();
                    text(format!("LLM response: {reply}"))
                }
                Err(error) => text(format!("Sampling not supported or error: {error}")),
            }
        }
        "test_elicitation" => {
            let message = string_argument(&request, "message")?;
            elicit(
                &context,
                &message,
                elicitation_response_form(),
                "User response",
            )
            .await?
        }
        "test_elicitation_sep1034_defaults" => {
            elicit(
                &context,
                "Please review and update the form fields with defaults",
                elicitation_with_defaults(),
                "Elicitation completed",
            )
            .await?
        }
        "test_elicitation_sep1330_enums" => {
            elicit(
                &context,
                "Please select options from the enum fields",
                elicitation_with_enums(),
                "Elicitation completed",
            )
            .await?
        }
        "test_custom_header" => text(format!("region: {}", string_argument(&request, "region")?)),
        "json_schema_2020_12_tool" => {
            let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
            text(format!("JSON Schema 2020-12 tool called with: {arguments}"))
        }
        other => CallToolResult::error(vec![ContentBlock::text(format!("Unknown tool '{other}'"))]),
    })
}

async fn elicit(
    context: &RequestContext<RoleServer>,
    message: &str,
    schema: Value,
    label: &str,
) -> Result<CallToolResult, ErrorData> {
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": schema
    }))
    .map_err(internal)?;
    Ok(match context.peer.create_elicitation(params).await {
        Ok(result) => {
            let action = serde_json::to_value(result.action).unwrap_or_default();
            let content = result.content.unwrap_or_else(|| json!({}));
            text(format!(
                "{label}: action={}, content={content}",
                action.as_str().unwrap_or("unknown")
            ))
        }
        Err(error) => text(format!("Elicitation not supported or error: {error}")),
    })
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}
