//! The memory budget is checked before anything is allocated: a configuration over it is refused
//! by `collective::check` (a run takes only what the check accepted) with one line naming the
//! ranks, elements and bytes, and the peak memory of this process stays small.
//!
//! One test in its own file, so this process's peak resident memory is its own.

use std::time::{Duration, Instant};

use cce_collectives::collective::{self, Algo, CollectiveError, Config, RedOp};
use cce_format::SdmaDtype;

/// Peak resident memory of this process, in bytes (Linux; `None` elsewhere).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn over_the_budget_is_refused_before_allocating() {
    let t = Instant::now();
    // A 16 GiB budget, whatever this host has (the default follows its memory).
    let cfg = Config { budget: 16 << 30, ..Config::new(16, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 256 << 20) };
    // By hand: 16 ranks × 2^28 bf16 elements = 512 MiB per rank: the input (the rank's IN
    // buffer), W, two steps of 32 MiB scratch chunks per rank, and one rank's output being
    // assembled: 17.5 GiB before the rings.
    let buffers = 16 * (512u64 << 20) * 2 + 16 * (64u64 << 20) + (512u64 << 20);
    let err = collective::check(&cfg).unwrap_err();
    let CollectiveError::Budget { ranks, elems, dtype, need, budget } = err.clone() else {
        panic!("not a budget refusal: {err}")
    };
    assert_eq!((ranks, elems, dtype), (16, 1 << 28, "bf16"));
    assert_eq!(budget.bytes, 16 << 30);
    assert!(!need.at_least, "the rings are counted");
    // The rings (16 bytes a descriptor) add well under 1 % to the buffers.
    assert!(need.bytes > buffers && need.bytes < buffers + buffers / 100, "{}", need.bytes);
    let msg = err.to_string();
    assert!(msg.starts_with("16 ranks x 268435456 bf16 elements need "), "{msg}");
    assert!(msg.contains("over the budget of 17179869184 bytes (16.0 GiB)"), "{msg}");
    assert_eq!(msg.lines().count(), 1);
    // A run takes a checked configuration only: the check refuses it, with this error, before
    // any input is looked at (and a second check refuses it alike).
    assert_eq!(collective::check(&cfg).unwrap_err(), err);
    // Every algorithm, ring-2r2w with a sixth buffer set (RECV).
    for algo in Algo::ALL {
        let e = collective::check(&Config { algo, ..cfg.clone() }).unwrap_err();
        assert!(matches!(e, CollectiveError::Budget { .. }), "{}: {e}", algo.name());
    }
    assert!(t.elapsed() < Duration::from_secs(5), "checks only: {:?}", t.elapsed());
    if let Some(peak) = peak_rss() {
        assert!(peak < 100 << 20, "peak resident memory {peak} bytes: something was allocated");
    }
}

/// The default budget is 3/4 of the host's memory (MemTotal), read here on its own.
#[test]
fn the_default_budget_follows_the_host() {
    let cfg = Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 64);
    assert_eq!(cfg.budget, collective::default_budget());
    match std::fs::read_to_string("/proc/meminfo") {
        Ok(info) => {
            let kib: u64 = info
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .expect("MemTotal in /proc/meminfo");
            assert_eq!(cfg.budget, kib * 1024 / 4 * 3);
        }
        Err(_) => assert_eq!(cfg.budget, collective::FALLBACK_BUDGET),
    }
}
