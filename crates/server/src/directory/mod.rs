//! An MCP registry — the official one or a company's own — read through the official registry
//! API (`GET {url}/servers?search=&cursor=&limit=`, `GET {url}/servers/{name}/versions/{v}`):
//! the catalogue of published `server.json` documents people browse and add servers from.
//! Not to be confused with the `ServerRegistry` (the servers a workspace has registered).
//! This module only reads the registry; turning a `server.json` into a registered server is
//! `routes::mcp_servers::directory`. The URL is an admin's (`[registry]`), like `[llm]`'s,
//! so it is not under the URL policy for servers people register.

pub mod document;

use document::{ServerList, ServerResponse};
use serde::Deserialize;
use std::time::Duration;
use switchboard_core::InvalidSetting;

/// `[registry]`: the MCP registry to browse; absent, the registry routes answer 404.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectoryConfig {
    /// The registry API's base, version included:
    /// `https://registry.modelcontextprotocol.io/v0.1` (or a self-hosted registry's).
    pub url: String,
    /// How long one request to it may take. Default 10 s.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
}

fn default_timeout_secs() -> u64 {
    10
}

impl DirectoryConfig {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        self.base_url()?;
        if self.timeout_secs == 0 || self.timeout_secs > 120 {
            return Err(InvalidSetting::new("timeout_secs", "must be 1 to 120"));
        }
        Ok(())
    }

    fn base_url(&self) -> Result<url::Url, InvalidSetting> {
        let url = url::Url::parse(&self.url)
            .map_err(|error| InvalidSetting::new("url", format!("not a URL: {error}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
            return Err(InvalidSetting::new("url", "must be an http(s) URL"));
        }
        Ok(url)
    }
}

/// Why the registry could not answer (502 through the API, except [`Self::NotFound`]).
#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("the MCP registry at {url} did not answer: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the MCP registry at {url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error(
        "the MCP registry at {url} answered something that is not the registry API's {what}: {reason}"
    )]
    Malformed {
        url: String,
        what: &'static str,
        reason: String,
    },
    #[error("the MCP registry has no server '{name}' at version '{version}'")]
    NotFound { name: String, version: String },
}

/// What a search asks for.
#[derive(Debug, Default)]
pub struct SearchQuery<'a> {
    pub search: Option<&'a str>,
    pub cursor: Option<&'a str>,
    pub limit: Option<u32>,
}

/// The largest answer read from the registry.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// A client of one registry.
#[derive(Debug, Clone)]
pub struct McpDirectory {
    base: url::Url,
    http: reqwest::Client,
}

impl McpDirectory {
    pub fn new(config: &DirectoryConfig) -> Result<Self, InvalidSetting> {
        config.validate()?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_secs))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|error| InvalidSetting::new("url", error.to_string()))?;
        Ok(Self {
            base: config.base_url()?,
            http,
        })
    }

    /// The registry's base URL, as configured.
    pub fn url(&self) -> &str {
        self.base.as_str()
    }

    /// One page of servers matching `query`.
    pub async fn search(&self, query: &SearchQuery<'_>) -> Result<ServerList, DirectoryError> {
        let mut url = self.endpoint(&["servers"]);
        {
            let mut pairs = url.query_pairs_mut();
            if let Some(search) = query.search.filter(|text| !text.is_empty()) {
                pairs.append_pair("search", search);
            }
            if let Some(cursor) = query.cursor.filter(|text| !text.is_empty()) {
                pairs.append_pair("cursor", cursor);
            }
            if let Some(limit) = query.limit {
                pairs.append_pair("limit", &limit.to_string());
            }
            pairs.append_pair("version", "latest");
        }
        let bytes = self.get(url, None).await?;
        self.decode(&bytes, "server list")
    }

    /// One version of a server (`latest` for the newest).
    pub async fn server(
        &self,
        name: &str,
        version: &str,
    ) -> Result<ServerResponse, DirectoryError> {
        let url = self.endpoint(&["servers", name, "versions", version]);
        let not_found = DirectoryError::NotFound {
            name: name.to_owned(),
            version: version.to_owned(),
        };
        let bytes = self.get(url, Some(not_found)).await?;
        let answer: ServerResponse = self.decode(&bytes, "server detail")?;
        if answer.server.name != name {
            return Err(DirectoryError::Malformed {
                url: self.url().to_owned(),
                what: "server detail",
                reason: format!("asked for '{name}', got '{}'", answer.server.name),
            });
        }
        Ok(answer)
    }

    /// `base/segment/…`, each segment percent-encoded (a name's `/` included).
    fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked to be a base URL")
            .pop_if_empty()
            .extend(segments);
        url
    }

    async fn get(
        &self,
        url: url::Url,
        on_404: Option<DirectoryError>,
    ) -> Result<Vec<u8>, DirectoryError> {
        let unreachable = |reason: String| DirectoryError::Unreachable {
            url: self.url().to_owned(),
            reason,
        };
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|error| unreachable(error_chain(&error)))?;
        let status = response.status().as_u16();
        if status == 404
            && let Some(not_found) = on_404
        {
            return Err(not_found);
        }
        if !response.status().is_success() {
            return Err(DirectoryError::Status {
                url: self.url().to_owned(),
                status,
            });
        }
        read_capped(response).await.map_err(unreachable)
    }

    fn decode<T: serde::de::DeserializeOwned>(
        &self,
        bytes: &[u8],
        what: &'static str,
    ) -> Result<T, DirectoryError> {
        serde_json::from_slice(bytes).map_err(|error| DirectoryError::Malformed {
            url: self.url().to_owned(),
            what,
            reason: error.to_string(),
        })
    }
}

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| error_chain(&error))?
    {
        if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "its answer is larger than {MAX_ANSWER_BYTES} bytes"
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The error and its causes, so "connection refused" is not hidden behind "error sending
/// request".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(url: &str) -> McpDirectory {
        McpDirectory::new(&DirectoryConfig {
            url: url.into(),
            timeout_secs: 5,
        })
        .unwrap()
    }

    #[test]
    fn a_server_name_is_one_encoded_path_segment() {
        let directory = directory("https://registry.example.com/v0.1/");
        let url = directory.endpoint(&["servers", "io.github.acme/weather", "versions", "1.0.0+b"]);
        assert_eq!(
            url.as_str(),
            "https://registry.example.com/v0.1/servers/io.github.acme%2Fweather/versions/1.0.0+b"
        );
    }

    #[test]
    fn only_http_urls_with_a_path_are_accepted() {
        for url in ["ftp://x.example", "mailto:a@b", "not a url"] {
            let config = DirectoryConfig {
                url: url.into(),
                timeout_secs: 5,
            };
            assert!(config.validate().is_err(), "{url}");
        }
    }
}
