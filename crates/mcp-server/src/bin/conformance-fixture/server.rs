//! [`FixtureServer`]: the conformance suite's fixture resources, prompts, completion, logging
//! and subscriptions, with the tools of `tools.rs`, as an rmcp handler.

#![allow(deprecated)] // logging and resources/subscribe are deprecated by 2026-07-28

use crate::fixtures::*;
use crate::legacy_input;
use crate::{mrtr, tools};
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// A change of the tool or prompt list, announced to `subscriptions/listen` streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListChange {
    Tools,
    Prompts,
}

/// What all sessions share: list-change announcements and the requestState sealing key.
pub struct FixtureShared {
    pub list_changes: broadcast::Sender<ListChange>,
    pub state_codec: RequestStateCodec,
}

impl Default for FixtureShared {
    fn default() -> Self {
        let key: [u8; 32] = rand_key();
        Self {
            list_changes: broadcast::channel(64).0,
            state_codec: RequestStateCodec::new(key.to_vec()),
        }
    }
}

fn rand_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    for chunk in key.chunks_mut(16) {
        chunk.copy_from_slice(&uuid::Uuid::new_v4().into_bytes());
    }
    key
}

#[derive(Clone)]
pub struct FixtureServer {
    shared: Arc<FixtureShared>,
    /// URIs this session subscribed to.
    subscriptions: Arc<Mutex<HashSet<String>>>,
}

impl FixtureServer {
    pub fn new(shared: Arc<FixtureShared>) -> Self {
        Self {
            shared,
            subscriptions: Arc::default(),
        }
    }
}

const TEMPLATE_PREFIX: &str = "test://template/";

impl FixtureServer {
    async fn log(context: &RequestContext<RoleServer>, message: String) {
        let log = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message))
            .with_logger("conformance-fixture");
        let _ = context.peer.notify_logging_message(log).await;
    }
}

impl ServerHandler for FixtureServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "switchboard-conformance-fixture",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::definitions()
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(answer) = mrtr::call(&request, &context, &self.shared.state_codec) {
            return answer;
        }
        if let Some(answer) = legacy_input::call(&request, &context) {
            return answer;
        }
        let change = match request.name.as_ref() {
            "test_trigger_tool_change" => Some(ListChange::Tools),
            "test_trigger_prompt_change" => Some(ListChange::Prompts),
            _ => None,
        };
        if let Some(change) = change {
            let _ = self.shared.list_changes.send(change);
            let done = ContentBlock::text("Mutation triggered");
            return Ok(CallToolResult::success(vec![done]).into());
        }
        tools::call(request, context)
            .await
            .map(CallToolResponse::from)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.list_changes.subscribe();
        loop {
            let change = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let accepted = context.accepted();
            let sent = match change {
                Ok(ListChange::Tools) if accepted.tools_list_changed == Some(true) => {
                    context.sink().notify_tool_list_changed().await
                }
                Ok(ListChange::Prompts) if accepted.prompts_list_changed == Some(true) => {
                    context.sink().notify_prompt_list_changed().await
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => Ok(()),
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            if sent.is_err() {
                return Ok(());
            }
        }
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://static-text", "static-text")
                .with_title("Static Text Resource")
                .with_description("A static text resource for testing")
                .with_mime_type("text/plain"),
            Resource::new("test://static-binary", "static-binary")
                .with_title("Static Binary Resource")
                .with_description("A static binary resource (image) for testing")
                .with_mime_type("image/png"),
            Resource::new(WATCHED_RESOURCE_URI, "watched-resource")
                .with_title("Watched Resource")
                .with_description("A resource clients may subscribe to")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("test://template/{id}/data", "template")
                .with_title("Resource Template")
                .with_description("A resource template with parameter substitution")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                ResourceContents::text("This is the content of the static text resource.", uri)
                    .with_mime_type("text/plain")
            }
            "test://static-binary" => {
                ResourceContents::blob(TEST_IMAGE_BASE64, uri).with_mime_type("image/png")
            }
            WATCHED_RESOURCE_URI => {
                ResourceContents::text("Watched resource content", uri).with_mime_type("text/plain")
            }
            _ => match uri
                .strip_prefix(TEMPLATE_PREFIX)
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => {
                    let body = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                    ResourceContents::text(body.to_string(), uri).with_mime_type("application/json")
                }
                _ => {
                    return Err(ErrorData::resource_not_found(
                        format!("Resource {uri} not found"),
                        Some(json!({ "uri": uri })),
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .insert(request.uri.clone());
        Self::log(&context, format!("Subscribed to resource: {}", request.uri)).await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .remove(&request.uri);
        Self::log(
            &context,
            format!("Unsubscribed from resource: {}", request.uri),
        )
        .await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = |name: &str, description: &str| {
            PromptArgument::new(name)
                .with_description(description)
                .with_required(true)
        };
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A simple prompt without arguments"),
                None,
            )
            .with_title("Simple Test Prompt"),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with required arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            )
            .with_title("Prompt With Arguments"),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that includes an embedded resource"),
                Some(vec![argument(
                    "resourceUri",
                    "URI of the resource to embed",
                )]),
            )
            .with_title("Prompt With Embedded Resource"),
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt that includes image content"),
                None,
            )
            .with_title("Prompt With Image"),
            Prompt::new(
                mrtr::PROMPT,
                Some("MRTR: prompt that requires elicitation input"),
                None,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let argument = |name: &str| -> Result<String, ErrorData> {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(name))
                .and_then(|value| value.as_str())
                .map(str::to_owned)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("{} needs the argument '{name}'", request.name),
                        None,
                    )
                })
        };
        if request.name == mrtr::PROMPT {
            return mrtr::prompt(&request);
        }
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::new_text(
                Role::User,
                "This is a simple prompt for testing.",
            )],
            "test_prompt_with_arguments" => {
                let (first, second) = (argument("arg1")?, argument("arg2")?);
                vec![PromptMessage::new_text(
                    Role::User,
                    format!("Prompt with arguments: arg1='{first}', arg2='{second}'"),
                )]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = argument("resourceUri")?;
                vec![
                    PromptMessage::new(
                        Role::User,
                        ContentBlock::resource(
                            ResourceContents::text("Embedded resource content for testing.", uri)
                                .with_mime_type("text/plain"),
                        ),
                    ),
                    PromptMessage::new_text(
                        Role::User,
                        "Please process the embedded resource above.",
                    ),
                ]
            }
            "test_prompt_with_image" => vec![
                PromptMessage::new(
                    Role::User,
                    ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
                ),
                PromptMessage::new_text(Role::User, "Please analyze the image above."),
            ],
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown prompt '{other}'"),
                    None,
                ));
            }
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn complete(
        &self,
        _: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let completion = CompletionInfo::with_all_values(Vec::new())
            .map_err(|error| ErrorData::internal_error(error, None))?;
        Ok(CompleteResult::new(completion))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = serde_json::to_value(request.level).unwrap_or_default();
        Self::log(
            &context,
            format!("Log level set to: {}", level.as_str().unwrap_or("unknown")),
        )
        .await;
        Ok(())
    }
}
