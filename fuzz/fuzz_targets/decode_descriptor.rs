//! Decode any bytes as every descriptor kind, every meta-control word and the cce_info struct.
//! Invariants: nothing panics; an exact parse re-emits the same bytes; a reading of a word is
//! an exact encoding of it.
#![no_main]

use cce_format::cce_info::CceInfo;
use cce_format::codec;
use cce_format::descriptor::{
    Descriptor, FmaDescriptor, GradientDescriptor, M2sDataDescriptor, MinMaxDescriptor, ReplicationDescriptor,
    S2mDataDescriptor, SeedInitDescriptor,
};
use cce_format::meta_ctrl;
use libfuzzer_sys::fuzz_target;

fn check<D: Descriptor>(bytes: &[u8]) {
    if let Ok(d) = D::from_bytes(bytes) {
        assert_eq!(&d.to_bytes()[..], bytes);
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = CceInfo::from_bytes(data);
    for chunk in data.chunks(16) {
        check::<FmaDescriptor>(chunk);
        check::<MinMaxDescriptor>(chunk);
        check::<SeedInitDescriptor>(chunk);
        check::<ReplicationDescriptor>(chunk);
        check::<GradientDescriptor>(chunk);
        check::<M2sDataDescriptor>(chunk);
        check::<S2mDataDescriptor>(chunk);
        let words: Vec<u32> = chunk.chunks(4).map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(b)
        }).collect();
        for layout in codec::layouts() {
            let d = codec::decode(layout, &words);
            assert_eq!(d.fields.len(), layout.fields.len());
        }
        for w in &words {
            for r in meta_ctrl::readings(*w) {
                assert!(r.layout().fits(&[*w]));
            }
        }
    }
});
