//! End-to-end tests of the HTTP surface: the real accept loop on 127.0.0.1:0, a real SQLite
//! store in a temporary directory, and reqwest (or a raw TCP socket) as the client.

mod auth;
mod kg;
mod lifecycle;
mod limits;
mod support;
