//! The soak itself (issue 18, target 13), shared by the `soak` bench binary and its short CI
//! test: `chats` clients each ask question after question over `POST /chat/stream` against
//! the real stack (support module), every answer calling the `work` tool of one of `servers`
//! upstreams in turn, a tenth of which are faulty (see `upstreams`). After a warm-up the load
//! pauses and the process's resident memory, open descriptors and live tokio tasks are taken
//! as the baseline; after the soak the load stops and they are taken again. Panics anywhere in
//! the process are counted by a panic hook.

use super::support::sse::SseEvents;
use super::support::{Gate, open_fds, rss_kib, start_with};
use super::{model::RoundRobinModel, upstreams};
use futures::StreamExt;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use switchboard_core::TransportKind;
use switchboard_mcp_client::McpClientConfig;

static PANICS: AtomicUsize = AtomicUsize::new(0);
/// An answer that has not ended by then is counted as stuck.
const TURN_LIMIT: Duration = Duration::from_secs(60);
/// Time for the answers' last writes and the connections' hang-ups after the load stops: idle
/// pooled connections (the clients' here, the MCP client's to the upstreams) go after 4 s,
/// found by a sweep every 4 s, so both snapshots are taken once every idle one is closed and
/// a leak cannot hide in a pool.
const SETTLE: Duration = Duration::from_secs(10);

pub struct SoakOptions {
    pub chats: usize,
    pub servers: usize,
    pub warm_up: Duration,
    pub duration: Duration,
    pub sample_every: Duration,
}

/// The process at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    pub rss_kib: u64,
    pub fds: usize,
    pub tasks: usize,
}

impl Snapshot {
    fn now() -> Self {
        Self {
            rss_kib: rss_kib(),
            fds: open_fds(),
            tasks: tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks(),
        }
    }
}

/// What the clients saw.
#[derive(Debug, Default)]
pub struct Tally {
    pub turns: usize,
    /// Answers that ended with `done`.
    pub done: usize,
    /// Answers whose stream ended without `done`, or took over [`TURN_LIMIT`].
    pub stuck: usize,
    /// Why each stuck answer was: the request or stream error, or what the stream said last.
    pub stuck_reasons: Vec<String>,
    /// `error` events (the turn still ends with `done`).
    pub error_events: usize,
    /// Final `mcp_tool` statuses.
    pub tool_states: BTreeMap<String, usize>,
}

impl Tally {
    fn stuck_because(&mut self, reason: String) {
        self.stuck += 1;
        self.stuck_reasons.push(reason);
    }

    fn add(&mut self, other: Tally) {
        self.turns += other.turns;
        self.done += other.done;
        self.stuck += other.stuck;
        self.stuck_reasons.extend(other.stuck_reasons);
        self.error_events += other.error_events;
        for (state, count) in other.tool_states {
            *self.tool_states.entry(state).or_default() += count;
        }
    }
}

pub struct SoakFigures {
    #[allow(dead_code)] // the bench prints it
    pub warm_up: Tally,
    pub soak: Tally,
    pub baseline: Snapshot,
    pub end: Snapshot,
    pub samples: Vec<(Duration, Snapshot)>,
    pub panics: usize,
    pub faults: Arc<upstreams::Faults>,
}

impl SoakFigures {
    pub fn rss_growth(&self) -> f64 {
        (self.end.rss_kib as f64 - self.baseline.rss_kib as f64) / self.baseline.rss_kib as f64
    }
}

/// One question; what its answer's stream said.
async fn one_turn(client: &reqwest::Client, base: &str, token: &str, tally: &mut Tally) {
    tally.turns += 1;
    let request = client
        .post(format!("{base}/chat/stream"))
        .bearer_auth(token)
        .json(&json!({"message": "work, please"}))
        .send();
    let response = match request.await {
        Ok(response) => response,
        Err(error) => return tally.stuck_because(format!("the request failed: {error:?}")),
    };
    let mut last = format!("no event (HTTP {})", response.status());
    let mut stream = response.bytes_stream();
    let mut events = SseEvents::default();
    loop {
        let chunk = match stream.next().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(error)) => {
                return tally.stuck_because(format!("the stream failed after {last}: {error:?}"));
            }
            None => return tally.stuck_because(format!("the stream ended after {last}")),
        };
        for event in events.push(&chunk) {
            last = event.to_string();
            match (event["type"].as_str(), event["status"].as_str()) {
                (Some("done"), _) => {
                    tally.done += 1;
                    return;
                }
                (Some("error"), _) => tally.error_events += 1,
                (Some("mcp_tool"), Some(status)) if status != "started" => {
                    *tally.tool_states.entry(status.to_owned()).or_default() += 1;
                }
                _ => {}
            }
        }
    }
}

/// `chats` clients asking until `until`.
async fn run_load(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    chats: usize,
    until: Instant,
) -> Tally {
    let clients = (0..chats).map(|_| {
        let (client, base, token) = (client.clone(), base.to_owned(), token.to_owned());
        tokio::spawn(async move {
            let mut tally = Tally::default();
            while Instant::now() < until {
                let turn = one_turn(&client, &base, &token, &mut tally);
                if tokio::time::timeout(TURN_LIMIT, turn).await.is_err() {
                    tally.stuck_because(format!("no done within {TURN_LIMIT:?}"));
                }
            }
            tally
        })
    });
    let mut total = Tally::default();
    for tally in futures::future::join_all(clients).await {
        total.add(tally.unwrap());
    }
    total
}

pub async fn soak(options: SoakOptions) -> SoakFigures {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::Relaxed);
        default_hook(info);
    }));
    let (upstream_base, faults) = upstreams::start(options.servers).await;
    let model = Arc::new(RoundRobinModel {
        servers: options.servers,
        calls: AtomicUsize::new(0),
    });
    let mut mcp = McpClientConfig::default();
    mcp.url_policy.allow_loopback = true;
    let stack = start_with(Some(model), Gate::AllowEveryCall, mcp).await;
    for index in 0..options.servers {
        let url = format!("{upstream_base}/u/{index}/mcp");
        let name = format!("up{index}");
        stack
            .register_remote(&name, TransportKind::StreamableHttp, &url)
            .await;
    }
    // Many clients at once: keep their connections instead of opening new ones.
    // Idle ones go before the server closes them (`switchboard_test_support::http_client`).
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(options.chats)
        .pool_idle_timeout(switchboard_test_support::http_client::POOL_IDLE_TIMEOUT)
        .build()
        .unwrap();
    let (base, token) = (stack.base.clone(), stack.token.clone());

    let until = Instant::now() + options.warm_up;
    let warm_up = run_load(&client, &base, &token, options.chats, until).await;
    tokio::time::sleep(SETTLE).await;
    let baseline = Snapshot::now();

    let started = Instant::now();
    let until = started + options.duration;
    let sampler = tokio::spawn(async move {
        let mut samples = Vec::new();
        while Instant::now() + options.sample_every < until {
            tokio::time::sleep(options.sample_every).await;
            samples.push((started.elapsed(), Snapshot::now()));
        }
        samples
    });
    let soak = run_load(&client, &base, &token, options.chats, until).await;
    let samples = sampler.await.unwrap();
    tokio::time::sleep(SETTLE).await;
    let end = Snapshot::now();
    stack.shutdown.cancel();
    SoakFigures {
        warm_up,
        soak,
        baseline,
        end,
        samples,
        panics: PANICS.load(Ordering::Relaxed),
        faults,
    }
}
