//! `GET /oauth/callback`: the redirect URI of every authorization. Public — the `state` is the
//! credential: it names who started the flow and for which server, and it works once, for 10
//! minutes. The registry's OAuth service finishes the flow (state taken, issuer checked, code
//! exchanged, tokens stored). A new connection is then synced as the person who made it, so the
//! servers page they come back to lists the tools and their next question can use them (a
//! failed sync leaves the connection in place and shows on the page as the server's state).
//! The browser goes back to the servers page with the outcome in its hash query:
//! `#/servers?oauth=connected&server=NAME`, or `#/servers?oauth=error&reason=…` (the reason a
//! sentence that never carries a token).

use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use switchboard_mcp_client::oauth::CallbackParams;

pub(super) async fn callback(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let params = parse(query.as_deref().unwrap_or_default());
    let outcome = match state.oauth.as_ref() {
        Some(service) => service.complete(params).await,
        None => {
            return back_to_ui(
                &state,
                &[
                    ("oauth", "error"),
                    ("reason", "OAuth is not running in this process"),
                ],
            );
        }
    };
    let server = outcome.server_name.unwrap_or_default();
    match outcome.result {
        Ok(connected) => {
            if let Some(registry) = state.mcp.as_ref() {
                registry
                    .sync_record_as(&connected.record, None, Some(&connected.user_id))
                    .await;
            }
            back_to_ui(&state, &[("oauth", "connected"), ("server", &server)])
        }
        Err(error) => {
            tracing::info!(code = error.code(), error = %switchboard_core::log_text(&error.to_string()), "an OAuth callback was refused");
            let reason = error.to_string();
            back_to_ui(
                &state,
                &[("oauth", "error"), ("server", &server), ("reason", &reason)],
            )
        }
    }
}

/// The callback's parameters (`code`, `state`, `iss`, `error`, `error_description`).
fn parse(query: &str) -> CallbackParams {
    let mut url = url::Url::parse("http://callback.invalid/").expect("a valid literal URL");
    url.set_query(Some(query));
    CallbackParams::from_url(&url)
}

/// 303 to the servers page of the UI with `pairs` in its hash query.
fn back_to_ui(state: &AppState, pairs: &[(&str, &str)]) -> Response {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().filter(|(_, value)| !value.is_empty()))
        .finish();
    let location = format!("{}/#/servers?{query}", state.config.public_url.join(""));
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
