//! Integration tests of the MCP client side, through the real wire against peers we did not
//! write (reference servers, the Python SDK, the conformance suite) and against misbehaving
//! servers written for the fault tests.

mod bombs;
mod catalog_properties;
mod conformance;
mod error_messages;
mod everything;
mod fastmcp;
mod faults;
mod filesystem;
mod latency;
mod lifecycle;
mod limits;
mod listen;
mod metrics;
mod negotiation;
mod oauth;
mod silent;
mod ssrf_battery;
mod support;
mod task_input;
mod timeouts;
mod url_policy;
mod websocket;
