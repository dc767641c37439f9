//! Integration tests of switchboard-llm through its public API: the `openai` and `anthropic`
//! providers against their scripted fake servers over real HTTP, and the offline planner end
//! to end.

mod anthropic_errors;
mod anthropic_streaming;
mod offline_changelog;
mod offline_phrasings;
mod offline_provider;
mod openai_errors;
mod openai_streaming;
mod support;
