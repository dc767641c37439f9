//! Token revocation (RFC 7009) at the endpoint the authorization server advertises
//! (`revocation_endpoint` in its metadata), authenticated as the client's token endpoint
//! method says. rmcp has no revocation, so this small request is ours.

use super::error::OAuthError;
use super::flow::{RegisteredClient, Revocation, TokenEndpointAuthMethod};
use super::http::PolicedOAuthHttp;
use oauth2::TokenResponse as _;
use rmcp::transport::auth::{AuthorizationMetadata, OAuthHttpRedirectPolicy, StoredCredentials};

pub(crate) async fn revoke(
    http: &PolicedOAuthHttp,
    metadata: &AuthorizationMetadata,
    client: &RegisteredClient,
    stored: &StoredCredentials,
) -> Result<Revocation, OAuthError> {
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|value| value.as_str())
    else {
        return Ok(Revocation::NotOffered);
    };
    let Some(token) = stored.token_response.as_ref() else {
        return Ok(Revocation::NothingStored);
    };
    let (value, hint) = match token.refresh_token() {
        Some(refresh) => (refresh.secret().as_str(), "refresh_token"),
        None => (token.access_token().secret().as_str(), "access_token"),
    };
    // Built in a plain function: the form serializer is not `Send`, and the revocation must
    // be able to run on any thread (axum handlers need that).
    let request = revocation_request(endpoint, client, value, hint)?;
    let response = http.send(request, OAuthHttpRedirectPolicy::Stop).await?;
    if response.status().is_success() {
        Ok(Revocation::Revoked)
    } else {
        Err(OAuthError::Protocol(format!(
            "the revocation endpoint answered {}",
            response.status()
        )))
    }
}

/// The RFC 7009 request revoking `value`, authenticated as the client's method says.
fn revocation_request(
    endpoint: &str,
    client: &RegisteredClient,
    value: &str,
    hint: &str,
) -> Result<http::Request<Vec<u8>>, OAuthError> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("token", value)
        .append_pair("token_type_hint", hint);
    let mut request = http::Request::post(endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json");
    match (client.auth_method, client.client_secret.as_deref()) {
        (TokenEndpointAuthMethod::ClientSecretBasic, Some(secret)) => {
            request = request.header(
                http::header::AUTHORIZATION,
                basic_authorization(&client.client_id, secret),
            );
        }
        (TokenEndpointAuthMethod::ClientSecretPost, Some(secret)) => {
            form.append_pair("client_id", &client.client_id)
                .append_pair("client_secret", secret);
        }
        _ => {
            form.append_pair("client_id", &client.client_id);
        }
    }
    request
        .body(form.finish().into_bytes())
        .map_err(|error| OAuthError::Protocol(error.to_string()))
}

/// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
fn basic_authorization(client_id: &str, secret: &str) -> String {
    use base64::Engine as _;
    let encode =
        |value: &str| url::form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(client_id), encode(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}
