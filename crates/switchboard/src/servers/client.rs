//! The HTTP client of `switchboard servers`: JSON in and out, the API's error document turned
//! into a readable error, and server references resolved by name or id.

use anyhow::{Context, bail};
use serde_json::Value;

pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    token: String,
}

/// Percent-encodes one path segment.
pub fn segment(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

impl ApiClient {
    pub fn new(base: &str, token: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .context("building the HTTP client")?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
        })
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach {url}"))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let value: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if status.is_success() {
            return Ok(value);
        }
        let code = value["error"]["code"].as_str().unwrap_or("error");
        let message = value["error"]["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| value.to_string());
        let details = value["error"]["details"]
            .as_array()
            .map(|details| {
                details
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|detail| format!("\n  - {detail}"))
                    .collect::<String>()
            })
            .unwrap_or_default();
        bail!("HTTP {status} {code}: {message}{details}")
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> anyhow::Result<Value> {
        self.send(reqwest::Method::DELETE, path, None).await
    }

    /// The id of the server named (or identified by) `reference`.
    pub async fn resolve(&self, reference: &str) -> anyhow::Result<String> {
        let listed = self.get("/api/mcp/servers").await?;
        let servers = listed["servers"].as_array().cloned().unwrap_or_default();
        servers
            .iter()
            .find(|server| server["name"] == reference || server["id"] == reference)
            .and_then(|server| server["id"].as_str())
            .map(segment)
            .with_context(|| format!("no server named '{reference}' in this workspace"))
    }
}
