//! Authentication, scopes, users and tokens, people (roles, deactivation, removal), revocation, the URL policy, request limits and
//! malformed input.

mod auth;
mod authorization_matrix;
mod connections;
mod isolation_load;
mod limits;
mod malformed_input;
mod my_tokens;
mod people;
mod revocation;
mod sso_unreachable;
mod ssrf_battery;
mod upstream_kills;
mod url_policy;
mod users;
