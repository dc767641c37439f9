//! The 2025-03-26 discovery path, where the MCP server's own origin is its authorization
//! server: no Protected Resource Metadata, and the authorization server metadata at
//! `{origin}/.well-known/oauth-authorization-server`.
//!
//! Servers written to that revision often serve the document there while naming an issuer
//! under a path of the same origin (`{origin}/oauth`, their endpoints under it), as the
//! TypeScript SDK's own router and the conformance suite's `2025-03-26-oauth-metadata-backcompat`
//! do. rmcp holds the document to RFC 8414 §3.3 (the issuer must be the one the well-known URL
//! was built from) and refuses it. The 2025-03-26 revision itself asks for no such check, and
//! the document comes from the very origin the person asked to connect to, so nothing is
//! trusted that the server URL did not already vouch for. This module accepts exactly that case
//! — the expected issuer is the server's bare origin and the named one is on the same origin —
//! and nothing else: an issuer on another origin, or any mismatch on the Protected Resource
//! Metadata path, stays refused.

use super::error::OAuthError;
use super::http::{PolicedOAuthHttp, display_url};
use rmcp::transport::auth::{AuthorizationMetadata, OAuthHttpRedirectPolicy};
use url::Url;

const WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";

/// Whether an issuer mismatch rmcp reported is the 2025-03-26 same-origin case (see the module
/// doc): `expected` is `server_url`'s bare origin and `received` lives on that origin.
pub(super) fn is_same_origin_legacy_issuer(
    server_url: &Url,
    expected: &str,
    received: &str,
) -> bool {
    let (Ok(expected), Ok(received)) = (Url::parse(expected), Url::parse(received)) else {
        return false;
    };
    let bare_origin = matches!(expected.path(), "" | "/") && expected.query().is_none();
    bare_origin
        && expected.origin() == server_url.origin()
        && received.origin() == server_url.origin()
}

/// The metadata document at `server_url`'s origin, provided it names `issuer` (the one rmcp
/// saw) and every endpoint it names is on that origin.
pub(super) async fn fetch(
    http: &PolicedOAuthHttp,
    server_url: &Url,
    issuer: &str,
) -> Result<AuthorizationMetadata, OAuthError> {
    let mut url = server_url.clone();
    url.set_path(WELL_KNOWN);
    url.set_query(None);
    url.set_fragment(None);
    let discovery = |reason: String| OAuthError::Discovery {
        server: display_url(server_url),
        reason,
    };
    let request = http::Request::get(url.as_str())
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|error| discovery(format!("bad metadata request: {error}")))?;
    let response = http
        .send(request, OAuthHttpRedirectPolicy::Follow)
        .await
        .map_err(OAuthError::Http)?;
    if !response.status().is_success() {
        return Err(discovery(format!(
            "{} answered {} for its authorization server metadata",
            display_url(&url),
            response.status()
        )));
    }
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(response.body()).map_err(|error| {
            discovery(format!(
                "its authorization server metadata is not valid: {error}"
            ))
        })?;
    if metadata.issuer.as_deref() != Some(issuer) {
        return Err(discovery(
            "its authorization server metadata changed while it was read".to_owned(),
        ));
    }
    let endpoints = [
        Some(metadata.authorization_endpoint.as_str()),
        Some(metadata.token_endpoint.as_str()),
        metadata.registration_endpoint.as_deref(),
    ];
    for endpoint in endpoints.into_iter().flatten() {
        let same_origin = Url::parse(endpoint)
            .map(|endpoint| endpoint.origin() == server_url.origin())
            .unwrap_or(false);
        if !same_origin {
            return Err(discovery(format!(
                "its authorization server metadata names the endpoint '{endpoint}' outside the \
                 server's origin, which a 2025-03-26 server may not"
            )));
        }
    }
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::is_same_origin_legacy_issuer;
    use url::Url;

    #[test]
    fn only_a_bare_origin_expected_and_a_same_origin_issuer_is_the_legacy_case() {
        let server = Url::parse("http://mcp.example:8080/mcp").unwrap();
        let case = |expected, received| is_same_origin_legacy_issuer(&server, expected, received);
        assert!(case(
            "http://mcp.example:8080/",
            "http://mcp.example:8080/oauth"
        ));
        assert!(case(
            "http://mcp.example:8080",
            "http://mcp.example:8080/oauth"
        ));
        assert!(!case(
            "http://mcp.example:8080/",
            "http://auth.example/oauth"
        ));
        assert!(!case(
            "http://mcp.example:8080/",
            "https://mcp.example:8080/oauth"
        ));
        assert!(!case("http://auth.example/", "http://auth.example/oauth"));
        assert!(!case(
            "http://mcp.example:8080/tenant",
            "http://mcp.example:8080/oauth"
        ));
        assert!(!case("not a url", "http://mcp.example:8080/oauth"));
    }
}
