//! Integration tests of the test-support crate: the interop peers it starts behave as their
//! doc comments say, so the suites that build on them start from facts.

mod oauth_peer;
