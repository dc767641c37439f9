//! Our request (OpenAI-shaped history, tools, tool choice) in the Messages API's shape.
//!
//! The two formats differ in ways the API enforces:
//! - system messages are not turns: they are joined into the top-level `system`;
//! - an assistant's tool calls are `tool_use` blocks of its message, with `input` a JSON
//!   object (not a string);
//! - tool results are `tool_result` blocks of a *user* message, and the results answering
//!   one assistant message must all be in the next user message — so consecutive messages
//!   of the same role are merged into one (which also keeps a user question that follows
//!   tool results valid);
//! - text blocks must not be empty;
//! - a tool result's images (for a model that takes images) are image blocks inside its
//!   `tool_result`, after its text; a user message's (its attached context) follow its text.
//!
//! Prompt caching: `cache_control` goes on the last tool definition (the tool catalog, the
//! largest stable part of the prompt) and on the last block of the history (so the next
//! step of the same turn reads everything before its new tool results from the cache).

use serde_json::Value;
use switchboard_core::{ChatMessage, ChatRole, ToolCallRequest};

use super::wire::{
    CacheControl, ContentBlock, ImageSource, Message, MessagesRequest, Role, Tool,
    ToolResultContent, ToolResultPart, WireToolChoice,
};
use crate::provider::{LlmRequest, ToolChoice};

/// The whole request body for `model`, at most `max_tokens` tokens out.
pub(crate) fn messages_request(
    request: &LlmRequest,
    model: &str,
    max_tokens: u32,
) -> MessagesRequest {
    let (system, mut messages) = map_history(&request.messages);
    if let Some(last_block) = messages
        .last_mut()
        .and_then(|message| message.content.last_mut())
    {
        last_block.set_cache_control();
    }
    let mut tools: Vec<Tool> = request
        .tools
        .iter()
        .map(|tool| Tool {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.parameters.clone(),
            cache_control: None,
        })
        .collect();
    if let Some(last_tool) = tools.last_mut() {
        last_tool.cache_control = Some(CacheControl::Ephemeral);
    }
    let tool_choice = (!tools.is_empty()).then(|| wire_tool_choice(&request.tool_choice));
    MessagesRequest {
        model: model.to_owned(),
        max_tokens: request.max_tokens.unwrap_or(max_tokens),
        system,
        messages,
        tools,
        tool_choice,
        temperature: request.temperature,
        stream: true,
    }
}

fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice {
    match choice {
        ToolChoice::Auto => WireToolChoice::Auto,
        ToolChoice::None => WireToolChoice::None,
        ToolChoice::Required => WireToolChoice::Any,
        ToolChoice::Function { name } => WireToolChoice::Tool { name: name.clone() },
    }
}

/// The joined system prompt (if any) and the turns, same-role neighbours merged.
fn map_history(history: &[ChatMessage]) -> (Option<String>, Vec<Message>) {
    let mut system_parts: Vec<&str> = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    for message in history {
        let (role, blocks) = match message.role {
            ChatRole::System => {
                if !message.content.trim().is_empty() {
                    system_parts.push(&message.content);
                }
                continue;
            }
            ChatRole::User => (Role::User, user_blocks(message)),
            ChatRole::Assistant => (Role::Assistant, assistant_blocks(message)),
            ChatRole::Tool => (Role::User, vec![tool_result_block(message)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(Message {
                role,
                content: blocks,
            }),
        }
    }
    let system = (!system_parts.is_empty()).then(|| system_parts.join("\n\n"));
    (system, messages)
}

fn text_block(text: &str) -> Option<ContentBlock> {
    (!text.trim().is_empty()).then(|| ContentBlock::Text {
        text: text.to_owned(),
        cache_control: None,
    })
}

/// A user message's text, then the images of its attached context.
fn user_blocks(message: &ChatMessage) -> Vec<ContentBlock> {
    let mut blocks: Vec<ContentBlock> = text_block(&message.content).into_iter().collect();
    blocks.extend(message.images.iter().map(|image| ContentBlock::Image {
        source: ImageSource {
            kind: "base64",
            media_type: image.mime_type.clone(),
            data: image.data.clone(),
        },
        cache_control: None,
    }));
    blocks
}

fn assistant_blocks(message: &ChatMessage) -> Vec<ContentBlock> {
    let mut blocks: Vec<ContentBlock> = text_block(&message.content).into_iter().collect();
    blocks.extend(message.tool_calls.iter().map(|call| ContentBlock::ToolUse {
        id: call.id.clone(),
        name: call.name.clone(),
        input: tool_input(call),
        cache_control: None,
    }));
    blocks
}

/// The call's arguments as the JSON object `tool_use.input` must be. Arguments the model
/// sent that are not an object (the chat engine already answered them with an error) are
/// kept as text under `arguments`, so the model still sees what it sent.
fn tool_input(call: &ToolCallRequest) -> Value {
    if call.arguments.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => serde_json::json!({ "arguments": call.arguments }),
    }
}

/// A tool message as a `tool_result` block; its images (if any) as image blocks inside it.
fn tool_result_block(message: &ChatMessage) -> ContentBlock {
    let content = if message.images.is_empty() {
        ToolResultContent::Text(message.content.clone())
    } else {
        let text = ToolResultPart::Text {
            text: message.content.clone(),
        };
        let images = message.images.iter().map(|image| ToolResultPart::Image {
            source: ImageSource {
                kind: "base64",
                media_type: image.mime_type.clone(),
                data: image.data.clone(),
            },
        });
        ToolResultContent::Blocks(std::iter::once(text).chain(images).collect())
    };
    ContentBlock::ToolResult {
        tool_use_id: message.tool_call_id.clone().unwrap_or_default(),
        content,
        is_error: message.is_error,
        cache_control: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::ToolSpec;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("{name} does things"),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    #[test]
    fn history_maps_to_system_tool_use_and_merged_tool_results_with_cache_breakpoints() {
        let request = LlmRequest::new(
            "",
            vec![
                ChatMessage::system("be brief"),
                ChatMessage::user("hi"),
                ChatMessage::assistant(
                    "Looking.",
                    vec![
                        call("toolu_a", "kg__schema_version", ""),
                        call("toolu_b", "kg__type_info", "{\"type_name\":\"Team\"}"),
                    ],
                ),
                ChatMessage::tool_result("toolu_a", "{\"version\":\"1\"}"),
                ChatMessage::tool_error("toolu_b", "unknown type"),
            ],
        )
        .with_tools(vec![tool("kg__type_info"), tool("kg__schema_version")])
        .with_tool_choice(ToolChoice::Required);
        let body = serde_json::to_value(messages_request(&request, "claude-test", 1024)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "claude-test",
                "max_tokens": 1024,
                "system": "be brief",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "toolu_a", "name": "kg__schema_version", "input": {}},
                        {"type": "tool_use", "id": "toolu_b", "name": "kg__type_info", "input": {"type_name": "Team"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"version\":\"1\"}"},
                        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "unknown type",
                         "is_error": true, "cache_control": {"type": "ephemeral"}},
                    ]},
                ],
                "tools": [
                    {"name": "kg__schema_version", "description": "kg__schema_version does things",
                     "input_schema": {"type": "object", "properties": {}}},
                    {"name": "kg__type_info", "description": "kg__type_info does things",
                     "input_schema": {"type": "object", "properties": {}},
                     "cache_control": {"type": "ephemeral"}},
                ],
                "tool_choice": {"type": "any"},
                "stream": true,
            })
        );
    }

    #[test]
    fn empty_text_is_dropped_non_object_arguments_are_kept_and_no_tools_means_no_choice() {
        let request = LlmRequest::new(
            "",
            vec![
                ChatMessage::user("first"),
                ChatMessage::assistant("", vec![call("toolu_x", "t", "[1,2]")]),
                ChatMessage::tool_result("toolu_x", "bad arguments"),
                ChatMessage::user("second"),
            ],
        )
        .with_max_tokens(50)
        .with_tool_choice(ToolChoice::None);
        let body = serde_json::to_value(messages_request(&request, "m", 4096)).unwrap();
        assert_eq!(body["max_tokens"], 50);
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type": "tool_use", "id": "toolu_x", "name": "t", "input": {"arguments": "[1,2]"}}])
        );
        let last = &body["messages"][2];
        assert_eq!(last["role"], "user");
        assert_eq!(last["content"][0]["type"], "tool_result");
        assert_eq!(
            last["content"][1],
            json!({"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn tool_choice_maps_to_auto_any_tool_none() {
        for (choice, expected) in [
            (ToolChoice::Auto, json!({"type": "auto"})),
            (ToolChoice::None, json!({"type": "none"})),
            (ToolChoice::Required, json!({"type": "any"})),
            (
                ToolChoice::Function { name: "t".into() },
                json!({"type": "tool", "name": "t"}),
            ),
        ] {
            let request = LlmRequest::new("", vec![ChatMessage::user("q")])
                .with_tools(vec![tool("t")])
                .with_tool_choice(choice);
            let body = serde_json::to_value(messages_request(&request, "m", 10)).unwrap();
            assert_eq!(body["tool_choice"], expected);
        }
    }

    #[test]
    fn a_user_message_s_attached_images_follow_its_text() {
        let question =
            ChatMessage::user("What is this?").with_images(vec![switchboard_core::ImageInput {
                mime_type: "image/png".to_owned(),
                data: "AAAA".to_owned(),
            }]);
        let (_, messages) = map_history(&[question]);
        let blocks = serde_json::to_value(&messages[0].content).unwrap();
        assert_eq!(
            blocks,
            json!([
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            ])
        );
    }

    #[test]
    fn tool_result_images_are_image_blocks_inside_the_result() {
        let image = switchboard_core::ImageInput {
            mime_type: "image/png".to_owned(),
            data: "iVBOR".to_owned(),
        };
        let (_, messages) = map_history(&[
            ChatMessage::user("show me"),
            ChatMessage::assistant(
                "",
                vec![call("toolu_i", "everything__get-tiny-image", "{}")],
            ),
            ChatMessage::tool_result("toolu_i", "[image image/png]").with_images(vec![image]),
        ]);
        let wire = serde_json::to_value(&messages).unwrap();
        assert_eq!(
            wire[2]["content"][0]["content"],
            json!([
                {"type": "text", "text": "[image image/png]"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}
            ])
        );
    }
}
