//! The stdio transport's bounded line framer: no panic, no frame past its cap.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u16, &[u8])| {
    let (cap, data) = input;
    switchboard_mcp_client::fuzzing::stdio_frames(data, usize::from(cap % 2048) + 1);
});
