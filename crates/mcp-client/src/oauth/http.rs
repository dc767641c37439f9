//! [`PolicedOAuthHttp`]: the HTTP client every OAuth request goes through — discovery
//! (protected resource and authorization server metadata), registration, token, revocation,
//! and the authorization URL a headless client fetches.
//!
//! Metadata documents name URLs the client then calls, which makes them a classic SSRF path:
//! a resource could point its "authorization server" at `169.254.169.254`. So every URL, and
//! every redirect hop, passes the outbound [`UrlPolicy`] before anything is sent (literal
//! addresses and `localhost` names by [`UrlPolicy::check_url`], host names on their resolved
//! addresses by the policy's resolver), redirects are followed only when the request allows it
//! and only within the origin, bodies are capped and every request has a deadline.

use crate::url_policy::{UrlPolicy, UrlPolicyError};
use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::Url;

/// The largest OAuth answer read (metadata documents and token answers are a few KiB).
pub const MAX_OAUTH_BODY_BYTES: usize = 1024 * 1024;
/// The deadline of one OAuth request, redirects included.
pub const OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
const MAX_REDIRECTS: usize = 5;

/// Why an OAuth request was not made or not read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthHttpError {
    #[error("{url} was refused by the outbound URL policy: {reason}")]
    Refused { url: String, reason: UrlPolicyError },
    #[error("{from} redirected to another origin ({to}); OAuth requests never follow that")]
    CrossOriginRedirect { from: String, to: String },
    #[error("{url} redirected more than {MAX_REDIRECTS} times")]
    TooManyRedirects { url: String },
    #[error("the answer of {url} is larger than the {} KiB limit", MAX_OAUTH_BODY_BYTES / 1024)]
    TooLarge { url: String },
    #[error("{url} did not answer within {} s", OAUTH_REQUEST_TIMEOUT.as_secs())]
    Timeout { url: String },
    #[error("the request to {url} failed: {reason}")]
    Request { url: String, reason: String },
}

/// rmcp's [`OAuthHttpClient`] over reqwest, under the outbound URL policy (see the module doc).
///
/// Each flow operation takes a [`PolicedOAuthHttp::for_operation`] copy so that a refusal can
/// be read back ([`PolicedOAuthHttp::refusal`]) even where rmcp turns the error into text.
#[derive(Clone)]
pub struct PolicedOAuthHttp {
    client: reqwest::Client,
    policy: UrlPolicy,
    last_refusal: Arc<Mutex<Option<OAuthHttpError>>>,
}

impl std::fmt::Debug for PolicedOAuthHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicedOAuthHttp")
            .field("origin", &self.policy.origin())
            .finish_non_exhaustive()
    }
}

impl PolicedOAuthHttp {
    /// A client under `policy`: its resolver checks resolved addresses, it follows no redirect
    /// by itself (they are followed here, hop by hop) and uses no ambient proxy.
    pub fn new(policy: UrlPolicy) -> Result<Self, OAuthHttpError> {
        let client = reqwest::Client::builder()
            .dns_resolver(policy.resolver())
            .redirect(reqwest::redirect::Policy::none())
            .referer(false)
            .no_proxy()
            .connect_timeout(Duration::from_secs(10))
            .timeout(OAUTH_REQUEST_TIMEOUT)
            .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| OAuthHttpError::Request {
                url: "(client)".into(),
                reason: error.to_string(),
            })?;
        Ok(Self {
            client,
            policy,
            last_refusal: Arc::new(Mutex::new(None)),
        })
    }

    /// A copy sharing the connection pool, with its own refusal record.
    pub fn for_operation(&self) -> Self {
        Self {
            client: self.client.clone(),
            policy: self.policy.clone(),
            last_refusal: Arc::new(Mutex::new(None)),
        }
    }

    /// The last request this copy refused or could not read, if any.
    pub fn refusal(&self) -> Option<OAuthHttpError> {
        self.last_refusal.lock().ok().and_then(|slot| slot.clone())
    }

    /// Sends `request`, following same-origin redirects when `redirects` is `Follow`.
    pub async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        redirects: OAuthHttpRedirectPolicy,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpError> {
        let result = self.send_inner(request, redirects).await;
        if let Err(error) = &result
            && let Ok(mut slot) = self.last_refusal.lock()
        {
            *slot = Some(error.clone());
        }
        result
    }

    async fn send_inner(
        &self,
        request: http::Request<Vec<u8>>,
        redirects: OAuthHttpRedirectPolicy,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpError> {
        let (parts, body) = request.into_parts();
        let mut url =
            Url::parse(&parts.uri.to_string()).map_err(|error| OAuthHttpError::Request {
                url: parts.uri.to_string(),
                reason: format!("not a URL: {error}"),
            })?;
        let mut method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes())
            .unwrap_or(reqwest::Method::GET);
        let mut body = Some(body);
        let origin = url.origin();
        for _ in 0..=MAX_REDIRECTS {
            self.check(&url)?;
            let mut builder = self.client.request(method.clone(), url.clone());
            for (name, value) in &parts.headers {
                builder = builder.header(name.as_str(), value.as_bytes());
            }
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = builder
                .send()
                .await
                .map_err(|error| self.failed(&url, &error))?;
            let status = response.status();
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            let follow = redirects == OAuthHttpRedirectPolicy::Follow && status.is_redirection();
            let Some(location) = location.filter(|_| follow) else {
                return read_response(response, &url).await;
            };
            let next = url
                .join(&location)
                .map_err(|error| OAuthHttpError::Request {
                    url: display_url(&url),
                    reason: format!("its redirect Location is not a URL: {error}"),
                })?;
            if next.origin() != origin {
                return Err(OAuthHttpError::CrossOriginRedirect {
                    from: display_url(&url),
                    to: next.origin().ascii_serialization(),
                });
            }
            // 303, and 301/302 after a POST, continue as a GET without the body.
            if status == http::StatusCode::SEE_OTHER
                || (method == reqwest::Method::POST && status.as_u16() < 303)
            {
                method = reqwest::Method::GET;
                body = None;
            }
            url = next;
        }
        Err(OAuthHttpError::TooManyRedirects {
            url: display_url(&url),
        })
    }

    fn check(&self, url: &Url) -> Result<(), OAuthHttpError> {
        self.policy
            .check_url(url, &["http", "https"])
            .map_err(|reason| OAuthHttpError::Refused {
                url: display_url(url),
                reason,
            })
    }

    fn failed(&self, url: &Url, error: &reqwest::Error) -> OAuthHttpError {
        if let Some(reason) = policy_refusal(error) {
            return OAuthHttpError::Refused {
                url: display_url(url),
                reason,
            };
        }
        if error.is_timeout() {
            return OAuthHttpError::Timeout {
                url: display_url(url),
            };
        }
        let reason = match crate::error::causes::cause_of(error) {
            crate::error::causes::Cause::Reason(reason) => reason,
            _ => "the connection failed".to_owned(),
        };
        OAuthHttpError::Request {
            url: display_url(url),
            reason,
        }
    }
}

impl OAuthHttpClient for PolicedOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let redirects = request.redirect_policy;
            self.send(request.request, redirects)
                .await
                .map_err(|error| Box::new(error) as OAuthHttpClientError)
        })
    }
}

/// The policy refusal in a reqwest error's chain (raised by the policy resolver).
fn policy_refusal(error: &reqwest::Error) -> Option<UrlPolicyError> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = current {
        if let Some(refusal) = cause.downcast_ref::<UrlPolicyError>() {
            return Some(refusal.clone());
        }
        current = cause.source();
    }
    None
}

async fn read_response(
    response: reqwest::Response,
    url: &Url,
) -> Result<http::Response<Vec<u8>>, OAuthHttpError> {
    let mut builder = http::Response::builder().status(response.status().as_u16());
    for (name, value) in response.headers() {
        builder = builder.header(name.as_str(), value.as_bytes());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| OAuthHttpError::Request {
            url: display_url(url),
            reason: format!("reading the answer: {error}"),
        })?;
        if body.len() + chunk.len() > MAX_OAUTH_BODY_BYTES {
            return Err(OAuthHttpError::TooLarge {
                url: display_url(url),
            });
        }
        body.extend_from_slice(&chunk);
    }
    builder.body(body).map_err(|error| OAuthHttpError::Request {
        url: display_url(url),
        reason: error.to_string(),
    })
}

/// A URL as shown in errors: no credentials, query or fragment (an authorization URL's query
/// carries the state and the PKCE challenge).
pub(crate) fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}
