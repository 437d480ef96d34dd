//! Any bytes as a black box's outputs handed to the reveal (`cce_forensics::reveal::Reveal`):
//! never a panic, outputs of the wrong shape refused and nothing else, and every sequence of
//! runs ends within `ranks + 2` runs (the property: reveal_outputs_property.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "reveal_outputs_property.rs"]
mod property;

fuzz_target!(|data: &[u8]| {
    let _ = property::property(data);
});
