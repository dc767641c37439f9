//! The canonical-JSON hasher behind definition and pin hashes: no panic on any JSON, the
//! canonical form is a fixed point, and its hash is the hash of the original.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard_core::canonical::{canonical_json, canonical_sha256};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let canonical = canonical_json(&value);
    assert_eq!(canonical_json(&canonical), canonical);
    assert_eq!(canonical_sha256(&canonical), canonical_sha256(&value));
});
