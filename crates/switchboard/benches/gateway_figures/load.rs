//! Timing `tools/call` through one endpoint: sequential calls of one client (latency), and
//! calls of many clients at once, each its own MCP session (throughput).

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::time::{Duration, Instant};

pub type Client = RunningService<RoleClient, ClientConfig>;

/// Where the clients call: the MCP endpoint's URL, the token it takes and the tool's name
/// there.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub label: &'static str,
    pub url: String,
    pub token: String,
    pub tool: String,
}

/// An MCP session (Streamable HTTP, the endpoint's token) to `endpoint`.
pub async fn connect(endpoint: &Endpoint) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone())
        .auth_header(endpoint.token.clone());
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gateway-figures", "1.0.0"),
    )
    .serve(StreamableHttpClientTransport::from_config(config))
    .await
    .unwrap()
}

/// `calls` sequential calls of `tool`, in microseconds each.
pub async fn time_calls(client: &Client, tool: &str, calls: usize) -> Vec<u128> {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new(tool.to_owned()))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
        samples.push(started.elapsed().as_micros());
    }
    samples
}

/// `clients` sessions calling at once, `calls_each` calls each (after their sessions are
/// open): calls per second over the whole run.
pub async fn calls_per_second(endpoint: &Endpoint, clients: usize, calls_each: usize) -> f64 {
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(connect(endpoint).await);
    }
    let started = Instant::now();
    let runs = sessions
        .iter()
        .map(|client| time_calls(client, &endpoint.tool, calls_each));
    futures::future::join_all(runs).await;
    let elapsed = started.elapsed().max(Duration::from_micros(1));
    for client in sessions {
        client.cancel().await.unwrap();
    }
    (clients * calls_each) as f64 / elapsed.as_secs_f64()
}
