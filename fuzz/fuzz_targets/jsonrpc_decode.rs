//! JSON-RPC messages as our transports decode them (client and server side): no panic, and
//! whatever decodes survives an encode/decode round trip unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    switchboard_mcp_client::fuzzing::jsonrpc_round_trip(data);
});
