//! The baseline every benchmark is measured against: a single-thread memcpy of the same bytes,
//! timed in the same run (bytes read + written per second / 10⁹).

use std::time::Instant;

/// Same-run memcpy bandwidth for `bytes` bytes, best of `reps`.
pub fn memcpy_gbps(bytes: usize, reps: usize) -> f64 {
    let mut m = Memcpy::new(bytes);
    (0..reps.max(1)).map(|_| m.once()).fold(0.0, f64::max)
}

/// A single-thread memcpy of a fixed size, timed one repetition at a time (so that its
/// repetitions can alternate with a job's).
pub(crate) struct Memcpy {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl Memcpy {
    pub(crate) fn new(bytes: usize) -> Memcpy {
        Memcpy { src: vec![1u8; bytes], dst: vec![0u8; bytes] }
    }

    /// One copy; bytes read + written per second / 10⁹.
    pub(crate) fn once(&mut self) -> f64 {
        let t = Instant::now();
        self.dst.copy_from_slice(&self.src);
        std::hint::black_box(&mut self.dst);
        2.0 * self.src.len() as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e9
    }
}
