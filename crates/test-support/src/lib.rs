//! Fakes and helpers shared by the test suites of several crates. Nothing here is linked
//! into the product.

pub mod conformance;
pub mod fake_anthropic;
pub mod fake_openai;
pub mod figures;
pub mod http_client;
pub mod interop;
pub mod local_server;
pub mod postgres;
pub mod raw_http;
pub mod ssrf_forms;
pub mod task_server;
pub mod upstream_bombs;
