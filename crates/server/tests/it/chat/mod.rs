//! The chat API and its answers: conversations, buds, the agent loop with real and scripted models,
//! limits, shutdown.

mod anthropic;
mod api;
mod app_calls;
mod app_context;
mod apps;
mod attachment_updates;
mod bombs;
mod budgets;
mod buds;
mod call_ids;
mod context_window;
mod design_fields;
mod in_flight;
mod limits;
mod llm_providers;
mod model_choice;
mod nul_characters;
mod offline_everything;
mod offline_kg;
mod openai;
mod partial_input;
mod provider_switch;
mod replicas;
mod resources_prompts;
mod rich_results;
mod shutdown;
mod tasks;
mod tool_choice;
mod tool_search;
mod tools;
mod unreachable;
mod user_fields;
