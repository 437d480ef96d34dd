//! Parse any bytes as a ring dump and walk every queue's packets: never a panic, and a file
//! that parses writes back to bytes that parse to the same file (the writer always adds the
//! checksum, so a checksum-less input is not reproduced byte for byte).
#![no_main]

use cce_format::packet::{self, RingGeometry};
use cce_format::ringfile::{RingFile, words_at};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = RingFile::parse(data) else { return };
    assert_eq!(RingFile::parse(&f.to_bytes()).as_ref(), Ok(&f));
    for q in &f.queues {
        let tx: Vec<[u32; 4]> = (0..q.tx_len()).filter_map(|i| words_at(q.tx, i)).collect();
        let rx: Vec<[u32; 4]> = (0..q.rx_len()).filter_map(|i| words_at(q.rx, i)).collect();
        let geo = RingGeometry { ring_size: q.ring_size, initial_phase: q.initial_phase };
        for step in packet::walk(&tx, &rx, geo, f.arch) {
            if let Ok(found) = step {
                let (mut t, mut r) = (Vec::new(), Vec::new());
                found.parsed.packet.emit(&mut t, &mut r);
                assert_eq!(t.len(), found.parsed.tx_kinds.len());
            }
        }
    }
});
