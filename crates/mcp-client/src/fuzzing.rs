//! Entry points for the fuzz targets (`fuzz/`), compiled only under `cfg(fuzzing)` (set by
//! `cargo fuzz`): the wire decoders stay private to the crate in every real build, yet the
//! fuzzer drives exactly the code the transports run. Each function checks the decoder's own
//! invariants and panics when one breaks, which the fuzzer reports as a crash.

use crate::transport::framing::{BoundedLineReader, Frame};
use crate::transport::sse_events::{SseEventReader, SseItem};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
        .block_on(future)
}

/// Frames `data` as the stdio transport does, with a line cap of `max_line_bytes`.
/// Invariants: no frame is longer than the cap; a complete line holds no newline.
pub fn stdio_frames(data: &[u8], max_line_bytes: usize) -> usize {
    block_on(async {
        let mut reader = BoundedLineReader::new(data, max_line_bytes);
        let mut frames = 0;
        while let Ok(Some(frame)) = reader.next_frame().await {
            match frame {
                Frame::Line(line) => {
                    assert!(line.len() <= max_line_bytes, "a line past the cap");
                    assert!(!line.contains(&b'\n'), "a newline inside a frame");
                }
                Frame::Oversized { prefix } => {
                    assert!(
                        prefix.len() <= max_line_bytes.max(4096) + 1,
                        "kept too much"
                    );
                }
            }
            frames += 1;
        }
        frames
    })
}

/// Reads `data` as the legacy SSE transport does, with an event cap of `max_event_bytes`.
/// Invariant: no dispatched event's data exceeds the cap.
pub fn sse_events(data: &[u8], max_event_bytes: usize) -> usize {
    block_on(async {
        let mut reader = SseEventReader::new(data, max_event_bytes);
        let mut events = 0;
        while let Ok(Some(item)) = reader.next_event().await {
            if let SseItem::Event { data, .. } = item {
                assert!(data.len() <= max_event_bytes + 16, "an event past the cap");
            }
            events += 1;
        }
        events
    })
}

/// Decodes `data` as a JSON-RPC message from a client and from a server, as the SDK does on
/// both sides of our transports. Whatever decodes must encode, and its encoding must be stable:
/// one more decode and encode gives the same bytes. (Not the very first encoding: input with
/// duplicate keys decodes as a raw value, and its clean re-encoding then decodes as the typed
/// message, which drops unknown members — the SDK's untagged unions, harmless to us.)
pub fn jsonrpc_round_trip(data: &[u8]) {
    stable_encoding::<rmcp::model::ClientJsonRpcMessage>(data);
    stable_encoding::<rmcp::model::ServerJsonRpcMessage>(data);
}

fn stable_encoding<M: serde::Serialize + serde::de::DeserializeOwned>(data: &[u8]) {
    let Ok(message) = serde_json::from_slice::<M>(data) else {
        return;
    };
    let once = reencode::<M>(&serde_json::to_vec(&message).expect("a decoded message encodes"));
    let twice = reencode::<M>(&once);
    assert_eq!(
        String::from_utf8_lossy(&once),
        String::from_utf8_lossy(&twice)
    );
}

fn reencode<M: serde::Serialize + serde::de::DeserializeOwned>(encoded: &[u8]) -> Vec<u8> {
    let message: M = serde_json::from_slice(encoded).expect("an encoded message decodes");
    serde_json::to_vec(&message).expect("a decoded message encodes")
}
