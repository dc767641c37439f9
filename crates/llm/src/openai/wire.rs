//! The Chat Completions wire format: the request body we send and the streamed chunks we
//! accept. Deliberately lenient on input — every field optional or defaulted — because the
//! OpenAI-compatible servers disagree in small ways (missing `index`, `content: null`,
//! `usage: null` on every chunk, arguments sent as an object instead of a string).

use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_core::{ChatMessage, ChatRole};

use crate::provider::{LlmRequest, ToolChoice};

/// Builds the JSON body of a streaming `POST /chat/completions`.
pub(crate) fn request_body(request: &LlmRequest, model: &str, include_usage: bool) -> Value {
    let mut body = json!({
        "model": model,
        "messages": wire_messages(&request.messages),
        "stream": true,
    });
    let object = body.as_object_mut().expect("body is an object");
    if include_usage {
        object.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }
                })
            })
            .collect();
        object.insert("tools".into(), Value::Array(tools));
        object.insert("tool_choice".into(), wire_tool_choice(&request.tool_choice));
    }
    if let Some(max_tokens) = request.max_tokens {
        object.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = request.temperature {
        object.insert("temperature".into(), json!(temperature));
    }
    body
}

fn wire_tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Function { name } => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The messages in order; the images of a run of tool messages follow the run as one `user`
/// message of `image_url` parts (the format takes images only in user messages, and no
/// message may come between an assistant's tool calls and their results).
fn wire_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut wire = Vec::with_capacity(messages.len());
    let mut pending: Vec<Value> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        wire.push(wire_message(message));
        if message.role != ChatRole::Tool {
            continue;
        }
        pending.extend(
            message
                .images
                .iter()
                .map(|image| json!({"type": "image_url", "image_url": {"url": image.data_uri()}})),
        );
        let run_ends = messages
            .get(index + 1)
            .is_none_or(|next| next.role != ChatRole::Tool);
        if run_ends && !pending.is_empty() {
            let mut content = vec![
                json!({"type": "text", "text": "The images the tool results above returned:"}),
            ];
            content.append(&mut pending);
            wire.push(json!({"role": "user", "content": content}));
        }
    }
    wire
}

fn wire_message(message: &ChatMessage) -> Value {
    match message.role {
        ChatRole::Assistant if !message.tool_calls.is_empty() => {
            let tool_calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    })
                })
                .collect();
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                Value::String(message.content.clone())
            };
            json!({"role": "assistant", "content": content, "tool_calls": tool_calls})
        }
        ChatRole::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        }),
        ChatRole::User if !message.images.is_empty() => {
            let text = json!({"type": "text", "text": message.content});
            let images = message
                .images
                .iter()
                .map(|image| json!({"type": "image_url", "image_url": {"url": image.data_uri()}}));
            let content: Vec<Value> = std::iter::once(text).chain(images).collect();
            json!({"role": "user", "content": content})
        }
        role => json!({"role": role.as_str(), "content": message.content}),
    }
}

/// One `data:` payload of the stream.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct StreamChunk {
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// Some servers report failures inside the stream as `{"error": {...}}`.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<ChunkDelta>,
    /// Non-streamed answers carry `message` instead of `delta`.
    #[serde(default)]
    pub message: Option<ChunkDelta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChunkDelta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    /// Missing on Gemini's endpoint; see the assembler.
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    /// Normally a string fragment; a few servers send the whole arguments as an object.
    #[serde(default)]
    pub arguments: Option<Value>,
}

impl FunctionDelta {
    pub fn arguments_text(&self) -> Option<String> {
        match &self.arguments {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => Some(other.to_string()),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: u32,
    #[serde(default)]
    pub completion_tokens: u32,
    #[serde(default)]
    pub total_tokens: u32,
    /// OpenAI reports prompt-cache hits here.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::{ToolCallRequest, ToolSpec};

    #[test]
    fn request_body_carries_tools_choice_usage_and_history_in_openai_shape() {
        let request = LlmRequest::new(
            "gpt-4o-mini",
            vec![
                ChatMessage::system("be brief"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(
                    "",
                    vec![ToolCallRequest {
                        id: "call_1".into(),
                        name: "kg__schema_version".into(),
                        arguments: "{}".into(),
                    }],
                ),
                ChatMessage::tool_result("call_1", "{\"version\":\"abc\"}"),
            ],
        )
        .with_tools(vec![ToolSpec {
            name: "kg__schema_version".into(),
            description: "Current schema version".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }])
        .with_tool_choice(ToolChoice::Function {
            name: "kg__schema_version".into(),
        })
        .with_max_tokens(100);
        let body = request_body(&request, "gpt-4o-mini", true);
        assert_eq!(
            body,
            json!({
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "kg__schema_version", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "{\"version\":\"abc\"}"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [{"type": "function", "function": {
                    "name": "kg__schema_version",
                    "description": "Current schema version",
                    "parameters": {"type": "object", "properties": {}},
                }}],
                "tool_choice": {"type": "function", "function": {"name": "kg__schema_version"}},
                "max_tokens": 100,
            })
        );
    }

    #[test]
    fn a_user_message_with_attached_images_is_text_then_image_parts() {
        let question =
            ChatMessage::user("What is this?").with_images(vec![switchboard_core::ImageInput {
                mime_type: "image/png".to_owned(),
                data: "AAAA".to_owned(),
            }]);
        let wire = wire_messages(&[question, ChatMessage::user("plain")]);
        assert_eq!(
            wire[0],
            json!({"role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ]})
        );
        assert_eq!(wire[1], json!({"role": "user", "content": "plain"}));
    }

    #[test]
    fn tool_result_images_follow_the_run_of_tool_messages_as_one_user_message() {
        let image = |data: &str| switchboard_core::ImageInput {
            mime_type: "image/png".to_owned(),
            data: data.to_owned(),
        };
        let calls = vec![
            ToolCallRequest {
                id: "c1".into(),
                name: "a".into(),
                arguments: "{}".into(),
            },
            ToolCallRequest {
                id: "c2".into(),
                name: "b".into(),
                arguments: "{}".into(),
            },
        ];
        let messages = vec![
            ChatMessage::assistant("", calls),
            ChatMessage::tool_result("c1", "[image]").with_images(vec![image("AAAA")]),
            ChatMessage::tool_result("c2", "text"),
            ChatMessage::assistant("Done.", Vec::new()),
        ];
        let wire = wire_messages(&messages);
        let roles: Vec<&str> = wire.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["assistant", "tool", "tool", "user", "assistant"]);
        assert_eq!(wire[1]["content"], "[image]");
        assert_eq!(
            wire[3]["content"][1],
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})
        );
    }

    #[test]
    fn no_tools_means_no_tool_choice_and_usage_can_be_left_out() {
        let body = request_body(&LlmRequest::new("m", vec![]), "m", false);
        assert!(body.get("tools").is_none());
        assert!(body.get("tool_choice").is_none());
        assert!(body.get("stream_options").is_none());
    }

    #[test]
    fn chunks_parse_leniently() {
        let chunk: StreamChunk = serde_json::from_str(
            r#"{"choices":[{"delta":{"content":null,"tool_calls":[{"id":"","function":{"arguments":{"a":1}}}]}}],"usage":null}"#,
        )
        .unwrap();
        let delta = chunk.choices[0].delta.as_ref().unwrap();
        assert_eq!(delta.content, None);
        let call = &delta.tool_calls.as_ref().unwrap()[0];
        assert_eq!(call.index, None);
        assert_eq!(
            call.function.as_ref().unwrap().arguments_text().unwrap(),
            "{\"a\":1}"
        );
    }
}
