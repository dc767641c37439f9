//! Integration tests of switchboard-llm through its public API: the `openai` provider against
//! the scripted fake server over real HTTP, and the offline planner end to end.

mod offline_changelog;
mod offline_phrasings;
mod offline_provider;
mod openai_errors;
mod openai_streaming;
mod support;
