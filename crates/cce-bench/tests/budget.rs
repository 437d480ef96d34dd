//! The benchmarks check their sizes and memory budget before anything is allocated.
//!
//! One test in its own file, so this process's peak resident memory is its own.

use std::time::{Duration, Instant};

use cce_bench::{allreduce, reduce};
use cce_collectives::collective::CollectiveError;

/// Peak resident memory of this process, in bytes (Linux; `None` elsewhere).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn the_benchmarks_check_their_budget_before_allocating() {
    let t = Instant::now();
    // 8 ranks x 64 MiB fits; 64 ranks x 1 GiB does not; a reduce of 4 x 8 GiB sources (32 GiB)
    // does not either.
    assert!(allreduce::check_allreduce(8, 64 << 20).is_ok());
    assert!(matches!(allreduce::check_allreduce(64, 1 << 30), Err(CollectiveError::Budget { .. })));
    assert!(reduce::check_reduce(8 << 30).unwrap_err().to_string().contains("budget"));
    assert!(t.elapsed() < Duration::from_secs(5), "checks only: {:?}", t.elapsed());
    if let Some(peak) = peak_rss() {
        assert!(peak < 100 << 20, "peak resident memory {peak} bytes: something was allocated");
    }
}
