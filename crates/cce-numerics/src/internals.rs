//! Not API: the crate-private functions its own tests check (`tests/internals/`), reachable from
//! outside only so that the test build compiles this crate once instead of twice (a
//! `#[cfg(test)]` module would compile the whole crate again with `cfg(test)`; this crate is
//! among the slowest units of the workspace's build). Hidden from the docs; no stability, no
//! guarantees beyond those of the functions themselves, which are documented where they live.

/// The generic (any-dtype, exact) element path.
pub mod any_dtype {
    pub use crate::any_dtype::{f2i, fminmax, wrap};
    use crate::{NumType, ReduceSpec};

    /// `spec` over whole, equal-length `sources` into `outputs` by the generic path with the
    /// accumulator `acc`, whatever route [`crate::reduce()`] would take; element `j` has global
    /// index `first + j`. The caller validates the shapes (as `reduce` does before it runs).
    pub fn reduce_generic(spec: &ReduceSpec, acc: NumType, sources: &[&[u8]], outputs: &mut [&mut [u8]], first: u64) {
        let plan =
            crate::any_dtype::Plan::new(&spec.op, spec.in_type, acc, spec.out_type, spec.rounding, spec.saturate);
        crate::any_dtype::run(&plan, sources, outputs, first);
    }
}

/// The memory-floor loop of the bench, at each copy the CPU runs.
#[cfg(feature = "std")]
pub mod floor {
    pub use crate::bench::floor::{Level, levels, pass_at};
    pub use crate::bench::{PREFETCHES, Prefetch, floor_pass};
}
