//! Figures for the accept loop under a flood of connections that send nothing (issue 18: ~20,000
//! of them used to exhaust the descriptors and stop `/healthz` for over a minute).
//!
//! `cargo bench -p switchboard-server --bench connection_figures [-- ATTACKERS PER_ATTACKER]`
//! starts the real server (header-read timeout 2 s, 1,024 connections per peer) on
//! 127.0.0.1, opens PER_ATTACKER zero-byte connections from each of ATTACKERS loopback
//! addresses (127.0.0.2…), then, while they wait, times 200 `/healthz` requests from
//! 127.0.0.1 on fresh connections. It prints how many flood connections were closed at once by
//! the caps, how long the rest took to be reaped, the legitimate requests' outcome and
//! latency, and the process's open descriptors before, at the peak and after. When the flood
//! fills `max_connections` (more peers than it divided by the per-peer cap), legitimate
//! connections are refused too until the flood is reaped: the cap protects the process's
//! descriptors, not its availability to everyone.
//!
//! `… -- trickle PEERS PER_PEER INTERVAL_MS [MAX_CONNECTIONS]` (issue 18, target 8) opens
//! PER_PEER connections from each of PEERS addresses that send a request head one byte per
//! INTERVAL_MS, while a legitimate client on 127.0.0.1 asks `/healthz` on fresh connections every
//! 10 ms until the flood is gone. It prints how many were closed at once by the caps, when the
//! rest were closed after connecting (against the header timeout + 1 s), the legitimate
//! latencies and the server's descriptors and tokio tasks before, at the peak and after.
//! MAX_CONNECTIONS (default 8,192) must exceed PEERS × PER_PEER for the legitimate client to get
//! in. The flood runs in a child process (this binary, `trickle-flood`), so 10,000 connections
//! need 10,000 descriptors on each side rather than 20,000 in one process.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use switchboard_server::{AppState, ServerConfig, app, serve_router};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

const HEADER_TIMEOUT_SECS: u64 = 2;
const LEGITIMATE_REQUESTS: usize = 200;

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |entries| entries.count())
}

async fn connect_from(source: [u8; 4], server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((source, 0)))?;
    socket.connect(server).await
}

/// How long after `connected` the server closed `stream` (EOF or reset), at most `limit`.
async fn time_to_close(
    mut stream: TcpStream,
    connected: Instant,
    limit: Duration,
) -> Option<Duration> {
    let mut buffer = [0u8; 64];
    match tokio::time::timeout(limit, stream.read(&mut buffer)).await {
        Ok(_) => Some(connected.elapsed()),
        Err(_) => None,
    }
}

async fn healthz(server: SocketAddr) -> Option<Duration> {
    let started = Instant::now();
    let mut stream = connect_from([127, 0, 0, 1], server).await.ok()?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut buffer = [0u8; 256];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .ok()?
        .ok()?;
    buffer[..read]
        .starts_with(b"HTTP/1.1 200")
        .then(|| started.elapsed())
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Starts the real accept loop with the bench's header timeout and `max_connections`.
async fn start_server(
    max_connections: usize,
    data_dir: &std::path::Path,
) -> (SocketAddr, ServerConfig, CancellationToken) {
    let store = Store::open(
        &DatabaseConfig::default(),
        data_dir,
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    let config = ServerConfig {
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        header_read_timeout_secs: HEADER_TIMEOUT_SECS,
        max_connections,
        ..ServerConfig::default()
    };
    let listener = TcpListener::bind(config.bind).await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let router = app(AppState::new(store, config.clone()));
    let stop = shutdown.clone();
    let serving_config = config.clone();
    tokio::spawn(async move {
        serve_router(
            listener,
            router,
            &serving_config,
            stop.clone(),
            async move { stop.cancelled().await },
        )
        .await
    });
    (address, config, shutdown)
}

/// Sends a never-finished request head one byte per `interval` until the server closes the
/// connection; how long after `connected` that was, or `None` after `limit`.
async fn trickle(
    stream: TcpStream,
    connected: Instant,
    interval: Duration,
    limit: Duration,
) -> Option<Duration> {
    let mut head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ".to_vec();
    head.extend(std::iter::repeat_n(b'a', 4096));
    let mut bytes = head.into_iter();
    let (mut reader, mut writer) = stream.into_split();
    let mut buffer = [0u8; 256];
    let mut next_byte = tokio::time::Instant::now();
    loop {
        tokio::select! {
            read = reader.read(&mut buffer) => if matches!(read, Ok(0) | Err(_)) {
                return Some(connected.elapsed());
            },
            () = tokio::time::sleep_until(next_byte) => {
                if let Some(byte) = bytes.next()
                    && writer.write_all(&[byte]).await.is_err()
                {
                    return Some(connected.elapsed());
                }
                next_byte += interval;
            }
            () = tokio::time::sleep_until((connected + limit).into()) => return None,
        }
    }
}

/// `/healthz` every 10 ms from 127.0.0.1 until `stop`; the latencies and the failures.
async fn legitimate_client(server: SocketAddr, stop: CancellationToken) -> (Vec<Duration>, usize) {
    let mut latencies = Vec::new();
    let mut failures = 0;
    while !stop.is_cancelled() {
        match healthz(server).await {
            Some(latency) => latencies.push(latency),
            None => failures += 1,
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    latencies.sort();
    (latencies, failures)
}

/// What the flood process reports: how long it took to open, how many could not connect, and
/// when the server closed each connection after its connect (`None`: never, within the limit).
struct FloodReport {
    opened_in: Duration,
    failed_to_connect: usize,
    closed_after: Vec<Option<Duration>>,
}

/// The flood's half of `trickle` (`trickle-flood ADDRESS PEERS PER_PEER INTERVAL_MS`), run in a
/// child process so the server's descriptors and the flood's do not share one process's limit:
/// prints `OPENED <ms> <failed>` once every connection is open, then `CLOSED` and, for each
/// connection, the microseconds after its connect at which the server closed it (`-` for never).
async fn trickle_flood(arguments: &[String]) {
    let address: SocketAddr = arguments[0].parse().expect("ADDRESS");
    let number = |at: usize| -> usize { arguments[at].parse().expect("a number") };
    let (peers, per_peer) = (number(1), number(2));
    let interval = Duration::from_millis(number(3) as u64);
    let limit = Duration::from_secs(HEADER_TIMEOUT_SECS * 10);
    let started = Instant::now();
    let mut waiting = Vec::new();
    let mut failed_to_connect = 0usize;
    for _ in 0..per_peer {
        for peer in 0..peers {
            let source = [127, 0, (peer / 250) as u8, 2 + (peer % 250) as u8];
            match connect_from(source, address).await {
                Ok(stream) => waiting.push(tokio::spawn(trickle(
                    stream,
                    Instant::now(),
                    interval,
                    limit,
                ))),
                Err(_) => failed_to_connect += 1,
            }
        }
    }
    println!(
        "OPENED {} {failed_to_connect}",
        started.elapsed().as_millis()
    );
    let mut closed = Vec::with_capacity(waiting.len());
    for waiter in waiting {
        closed.push(match waiter.await.unwrap() {
            Some(after) => after.as_micros().to_string(),
            None => "-".to_string(),
        });
    }
    println!("CLOSED {}", closed.join(" "));
}

/// Starts `trickle-flood` in a child process; returns its report once every connection ended,
/// calling `when_open` as soon as the flood is fully open.
async fn flood_from_child(
    address: SocketAddr,
    peers: usize,
    per_peer: usize,
    interval: Duration,
    when_open: impl FnOnce(),
) -> FloodReport {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "trickle-flood".to_string(),
            address.to_string(),
            peers.to_string(),
            per_peer.to_string(),
            interval.as_millis().to_string(),
        ])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the flood process starts");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let opened = lines.next_line().await.unwrap().expect("the flood reports");
    let opened: Vec<usize> = opened
        .split_whitespace()
        .skip(1)
        .map(|value| value.parse().unwrap())
        .collect();
    when_open();
    let closed = lines.next_line().await.unwrap().expect("the flood reports");
    let closed_after = closed
        .split_whitespace()
        .skip(1)
        .map(|value| value.parse().ok().map(Duration::from_micros))
        .collect();
    child.wait().await.unwrap();
    FloodReport {
        opened_in: Duration::from_millis(opened[0] as u64),
        failed_to_connect: opened[1],
        closed_after,
    }
}

async fn trickle_figures(arguments: &[usize]) {
    let peers = arguments.first().copied().unwrap_or(10).clamp(1, 200);
    let per_peer = arguments.get(1).copied().unwrap_or(1_000);
    let interval = Duration::from_millis(arguments.get(2).copied().unwrap_or(10_000) as u64);
    let max_connections = arguments.get(3).copied().unwrap_or(8_192);
    let data_dir = tempfile::tempdir().unwrap();
    let (address, config, shutdown) = start_server(max_connections, data_dir.path()).await;
    let header_timeout = Duration::from_secs(HEADER_TIMEOUT_SECS);
    // A first request, so the baseline holds what the server keeps for good.
    healthz(address).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (fds_before, tasks_before) = (open_descriptors(), alive_tasks());

    let stop_legitimate = CancellationToken::new();
    let legitimate = tokio::spawn(legitimate_client(address, stop_legitimate.clone()));
    let mut peak = (0, 0);
    let flood = flood_from_child(address, peers, per_peer, interval, || {
        peak = (open_descriptors(), alive_tasks());
    })
    .await;
    let (fds_peak, tasks_peak) = peak;
    let mut closed_at_once = 0usize;
    let mut reaped = Vec::new();
    let mut never_closed = 0usize;
    for closed in &flood.closed_after {
        match *closed {
            Some(after) if after < Duration::from_millis(500) => closed_at_once += 1,
            Some(after) => reaped.push(after),
            None => never_closed += 1,
        }
    }
    stop_legitimate.cancel();
    let (latencies, failures) = legitimate.await.unwrap();
    reaped.sort();
    let late = reaped
        .iter()
        .filter(|after| **after > header_timeout + Duration::from_secs(1))
        .count();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (open_descriptors() > fds_before || alive_tasks() > tasks_before)
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (fds_after, tasks_after) = (open_descriptors(), alive_tasks());
    shutdown.cancel();

    println!(
        "trickle: {peers} peers x {per_peer} connections sending 1 byte per {interval:?} from a child process (header-read timeout {HEADER_TIMEOUT_SECS} s, max_connections {}, max_connections_per_peer {})",
        config.max_connections, config.max_connections_per_peer
    );
    println!(
        "  opened in {:?}; {} could not connect",
        flood.opened_in, flood.failed_to_connect
    );
    println!("  closed at once by the caps: {closed_at_once}");
    println!(
        "  closed by the header timeout: {} (after their connect: first {:?}, p50 {:?}, last {:?}); later than the timeout + 1 s: {late}; never closed: {never_closed}",
        reaped.len(),
        reaped.first().copied().unwrap_or_default(),
        percentile(&reaped, 0.5),
        reaped.last().copied().unwrap_or_default()
    );
    println!(
        "  /healthz every 10 ms from 127.0.0.1 meanwhile: {} answered, {failures} failed; p50 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
    println!(
        "  the server process's open descriptors: before {fds_before}, peak {fds_peak}, after {fds_after}; its tokio tasks: before {tasks_before}, peak {tasks_peak}, after {tasks_after}"
    );
    assert_eq!(never_closed, 0, "trickling connections were never closed");
}

#[tokio::main]
async fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = raw.iter().position(|argument| argument == "trickle-flood") {
        return trickle_flood(&raw[at + 1..]).await;
    }
    let trickle_mode = std::env::args().any(|argument| argument == "trickle");
    let arguments: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|argument| argument.parse().ok())
        .collect();
    if trickle_mode {
        return trickle_figures(&arguments).await;
    }
    let attackers = arguments.first().copied().unwrap_or(4).clamp(1, 200);
    let per_attacker = arguments.get(1).copied().unwrap_or(2_000);

    let data_dir = tempfile::tempdir().unwrap();
    let max_connections = ServerConfig::default().max_connections;
    let (address, config, shutdown) = start_server(max_connections, data_dir.path()).await;
    let baseline = open_descriptors();

    let flood_started = Instant::now();
    let mut waiting = Vec::new();
    let mut failed_to_connect = 0usize;
    for attacker in 0..attackers {
        let source = [127, 0, (attacker / 250) as u8, 2 + (attacker % 250) as u8];
        for _ in 0..per_attacker {
            match connect_from(source, address).await {
                Ok(stream) => waiting.push(tokio::spawn(time_to_close(
                    stream,
                    Instant::now(),
                    Duration::from_secs(HEADER_TIMEOUT_SECS * 10),
                ))),
                Err(_) => failed_to_connect += 1,
            }
        }
    }
    let opened_in = flood_started.elapsed();
    let peak = open_descriptors();

    let mut latencies = Vec::new();
    let mut failures = 0usize;
    for _ in 0..LEGITIMATE_REQUESTS {
        match healthz(address).await {
            Some(latency) => latencies.push(latency),
            None => failures += 1,
        }
    }
    latencies.sort();

    let mut closed_at_once = 0usize;
    let mut reaped = Vec::new();
    let mut never_closed = 0usize;
    for waiter in waiting {
        match waiter.await.unwrap() {
            Some(after) if after < Duration::from_millis(500) => closed_at_once += 1,
            Some(after) => reaped.push(after),
            None => never_closed += 1,
        }
    }
    reaped.sort();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = open_descriptors();
    shutdown.cancel();

    println!(
        "connection flood: {attackers} peers x {per_attacker} zero-byte connections (header-read timeout {HEADER_TIMEOUT_SECS} s, max_connections {}, max_connections_per_peer {})",
        config.max_connections, config.max_connections_per_peer
    );
    println!("  opened in {opened_in:?}; {failed_to_connect} could not connect");
    println!("  closed at once by the caps: {closed_at_once}");
    println!(
        "  reaped by the first-request timeout: {} (after their connect: first {:?}, last {:?}); never closed: {never_closed}",
        reaped.len(),
        reaped.first().copied().unwrap_or_default(),
        reaped.last().copied().unwrap_or_default()
    );
    println!(
        "  /healthz from another address during the flood: {} of {LEGITIMATE_REQUESTS} answered ({failures} refused: the overall cap was full), p50 {:?}, p99 {:?}",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    println!(
        "  open descriptors (server and flood clients in one process): before {baseline}, peak {peak}, after {after}"
    );
    assert_eq!(never_closed, 0, "flood connections were never closed");
}
