//! What a report says about the machine and the build that made it: cce's version, the git
//! commit it was built from, the CPU, the threads and the SIMD code path the kernels take.
//!
//! ## Guarantees
//! - `commit` is the one the build recorded (with `-dirty` when tracked files had changes),
//!   or `None` for a build outside a git checkout: never guessed at run time.
//! - `cpu` is the first `model name` of `/proc/cpuinfo`, or `None` where there is none.

use serde::Serialize;

/// The environment of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Environment {
    /// cce's version (the workspace's).
    pub version: &'static str,
    /// The git commit of the build, `-dirty` when tracked files had changes; `None` outside a
    /// git checkout.
    pub commit: Option<&'static str>,
    /// The CPU's model name.
    pub cpu: Option<String>,
    /// Threads this process may run on.
    pub threads: usize,
    /// The SIMD code path of the numerics kernels (`portable`, `avx2`, `avx512`).
    pub isa: &'static str,
}

/// This process's environment.
pub fn environment() -> Environment {
    Environment {
        version: env!("CARGO_PKG_VERSION"),
        commit: option_env!("CCE_GIT_COMMIT"),
        cpu: cpu_model(),
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        isa: match cce_numerics::detected_isa() {
            cce_numerics::Isa::Portable => "portable",
            cce_numerics::Isa::Avx2 => "avx2",
            cce_numerics::Isa::Avx512 => "avx512",
        },
    }
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}
