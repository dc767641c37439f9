//! The contract: the OpenAPI document (committed, served, and checked against real answers)
//! and, reviewed as data, `insta` snapshots of the chat's SSE stream and of each API
//! area's main answers, taken through the real HTTP interface of the real server. The `.snap`
//! files beside these tests are the reviewed contract; see `support::snapshot` for what is
//! replaced before a snapshot is taken.

mod api_answers;
mod chat_stream;
mod openapi;
mod openapi_admin_areas;
mod openapi_chat_areas;
mod openapi_contract;
