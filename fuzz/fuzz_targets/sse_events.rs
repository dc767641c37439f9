//! The legacy HTTP+SSE transport's bounded event reader: no panic, no event past its cap.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u16, &[u8])| {
    let (cap, data) = input;
    switchboard_mcp_client::fuzzing::sse_events(data, usize::from(cap % 2048) + 1);
});
