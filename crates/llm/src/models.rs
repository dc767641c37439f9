//! What a provider's own API says it offers: `GET {base}/models` (OpenAI-compatible servers),
//! `GET {endpoint}/openai/v1/models` (Azure OpenAI's v1 endpoint), `GET {base}/v1/models`
//! (Anthropic). Azure's deployment endpoint has no listing of deployments (that is the
//! management API's), so it answers `None`, as does the offline planner, which has one model.
//! Only the ids (and Anthropic's display names) are read; context windows and capabilities
//! come from the configuration, since no API reports them the same way.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;

use crate::anthropic::{ANTHROPIC_VERSION, DEFAULT_ANTHROPIC_BASE_URL};
use crate::config::{LlmConfig, ProviderKind};
use crate::error::{LlmError, TimeoutPhase, body_excerpt};
use crate::http::{endpoint_url, error_chain, sensitive};
use crate::openai::DEFAULT_OPENAI_BASE_URL;

/// A model as the provider's API lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedModel {
    pub id: String,
    pub display_name: Option<String>,
}

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ListedEntry>,
}

#[derive(Deserialize)]
struct ListedEntry {
    id: String,
    #[serde(default)]
    display_name: Option<String>,
}

/// The provider's models from its own API; `Ok(None)` when its API has no listing.
pub async fn list_models(config: &LlmConfig) -> Result<Option<Vec<ListedModel>>, LlmError> {
    let Some((url, headers)) = listing_request(config)? else {
        return Ok(None);
    };
    let client = reqwest::Client::builder()
        .connect_timeout(config.connect_timeout())
        .timeout(config.response_timeout())
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| {
            LlmError::Configuration(format!("cannot build the HTTP client: {error}"))
        })?;
    let response = client
        .get(&url)
        .headers(headers)
        .send()
        .await
        .map_err(|error| request_error(&url, config, &error))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|error| request_error(&url, config, &error))?;
    if !status.is_success() {
        return Err(LlmError::UpstreamStatus {
            status: status.as_u16(),
            body_excerpt: body_excerpt(&text),
        });
    }
    let list: ModelList =
        serde_json::from_str(&text).map_err(|error| LlmError::MalformedStream {
            detail: format!(
                "GET {url} did not answer a model list ({{\"data\": [{{\"id\"}}]}}): {error}"
            ),
        })?;
    Ok(Some(
        list.data
            .into_iter()
            .map(|entry| ListedModel {
                id: entry.id,
                display_name: entry.display_name,
            })
            .collect(),
    ))
}

/// The URL and headers of the listing, or `None` when the provider has none.
fn listing_request(config: &LlmConfig) -> Result<Option<(String, HeaderMap)>, LlmError> {
    let key = config
        .api_key
        .as_ref()
        .map(|key| key.expose())
        .filter(|key| !key.trim().is_empty());
    let header_value = |text: String| {
        HeaderValue::from_str(&text).map(sensitive).map_err(|_| {
            LlmError::Configuration("the api_key is not a valid header value".to_owned())
        })
    };
    let mut headers = HeaderMap::new();
    let url = match config.provider {
        ProviderKind::Offline => return Ok(None),
        ProviderKind::AzureOpenai if !config.api_version.trim().is_empty() => return Ok(None),
        ProviderKind::Openai => {
            if let Some(key) = key {
                headers.insert(AUTHORIZATION, header_value(format!("Bearer {key}"))?);
            }
            endpoint_url(config.base_url_or(DEFAULT_OPENAI_BASE_URL), "/models")?
        }
        ProviderKind::AzureOpenai => {
            if let Some(key) = key {
                headers.insert(
                    HeaderName::from_static("api-key"),
                    header_value(key.to_owned())?,
                );
            }
            endpoint_url(&config.base_url, "/openai/v1/models")?
        }
        ProviderKind::Anthropic => {
            if let Some(key) = key {
                headers.insert(
                    HeaderName::from_static("x-api-key"),
                    header_value(key.to_owned())?,
                );
            }
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
            endpoint_url(config.base_url_or(DEFAULT_ANTHROPIC_BASE_URL), "/v1/models")?
        }
    };
    Ok(Some((url, headers)))
}

fn request_error(url: &str, config: &LlmConfig, error: &reqwest::Error) -> LlmError {
    if error.is_timeout() {
        LlmError::Timeout {
            phase: if error.is_connect() {
                TimeoutPhase::Connect
            } else {
                TimeoutPhase::ResponseHeaders
            },
            after: config.response_timeout(),
        }
    } else {
        LlmError::Connection {
            url: url.to_owned(),
            detail: error_chain(error),
        }
    }
}
