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
/// both sides of our transports; whatever decodes must encode and decode to the same value.
pub fn jsonrpc_round_trip(data: &[u8]) {
    if let Ok(message) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(data) {
        let encoded = serde_json::to_vec(&message).expect("a decoded message encodes");
        let again: rmcp::model::ClientJsonRpcMessage =
            serde_json::from_slice(&encoded).expect("an encoded message decodes");
        assert_eq!(
            serde_json::to_value(&again).ok(),
            serde_json::to_value(&message).ok()
        );
    }
    if let Ok(message) = serde_json::from_slice::<rmcp::model::ServerJsonRpcMessage>(data) {
        let encoded = serde_json::to_vec(&message).expect("a decoded message encodes");
        let again: rmcp::model::ServerJsonRpcMessage =
            serde_json::from_slice(&encoded).expect("an encoded message decodes");
        assert_eq!(
            serde_json::to_value(&again).ok(),
            serde_json::to_value(&message).ok()
        );
    }
}
