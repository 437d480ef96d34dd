//! Any bytes as the start of a `.npy` file (`cce_numerics::npy`): a header or a refusal, never
//! a panic; a header read says where its data starts inside what it was given.
#![no_main]

use cce_numerics::npy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let size = npy::header_size(data);
    if let Ok(h) = npy::header(data) {
        assert_eq!(size, Ok(h.data_offset as usize));
        assert!(h.data_offset as usize <= data.len());
        let _ = (h.elems(), h.item_size(), h.shape_text(), h.holds(2, &['f', 'V']));
    }
});
