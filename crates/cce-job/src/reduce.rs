//! One reduce through the whole path: request → `cce-host` rings → `cce-engine` → memory.

use std::time::Instant;

use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, EngineError, Fault, HostMemory, MemError, PagedMemory, QueueState};
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{HostError, MinMaxConstant, ReduceDtypes, ReduceRequest, Rounding, plan};

/// Where the path places buffers (MODEL): source `i` at `SRC_BASE + i · STRIDE`, destination
/// `j` at `DST_BASE + j · STRIDE`, each its own region.
pub const SRC_BASE: u64 = 0x0001_0000_0000;
/// See [`SRC_BASE`].
pub const DST_BASE: u64 = 0x0100_0000_0000;
/// See [`SRC_BASE`]: 1 TiB apart, so any buffer the budget allows fits.
pub const STRIDE: u64 = 0x0100_0000_0000 / 64;

/// One reduce.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceJob {
    /// ADD, FMA, MIN or MAX (COPY / TRANSPOSE are refused by the dispatcher).
    pub op: KbinOp,
    /// Source dtype.
    pub in_dt: SdmaDtype,
    /// Accumulate dtype.
    pub accum_dt: SdmaDtype,
    /// Output dtype.
    pub out_dt: SdmaDtype,
    /// FMA scales: one per source (or empty for 1.0).
    pub scales: Vec<f32>,
    /// MIN/MAX clamp.
    pub constant: Option<MinMaxConstant>,
    /// Rounding.
    pub rounding: Rounding,
    /// NeuronCore arch.
    pub arch: u32,
    /// Destinations (more than one replicates; arch ≥ 3).
    pub dests: usize,
    /// Engine threads.
    pub threads: usize,
    /// Memory budget of the model, in bytes.
    pub budget: u64,
}

impl ReduceJob {
    /// An ADD job with the defaults (RNE, arch 3, one destination, one thread, 16 GiB budget).
    pub fn add(in_dt: SdmaDtype, accum_dt: SdmaDtype, out_dt: SdmaDtype) -> Self {
        ReduceJob {
            op: KbinOp::Add,
            in_dt,
            accum_dt,
            out_dt,
            scales: Vec::new(),
            constant: None,
            rounding: Rounding::Rne,
            arch: 3,
            dests: 1,
            threads: 1,
            budget: PagedMemory::DEFAULT_BUDGET,
        }
    }
}

/// What a reduce produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceOutcome {
    /// Each destination's bytes.
    pub outputs: Vec<Vec<u8>>,
    /// Elements per source.
    pub elements: u64,
    /// Packets executed.
    pub packets: u64,
    /// Descriptors executed (tx + rx).
    pub descriptors: u64,
    /// Bytes read from sources.
    pub bytes_read: u64,
    /// Bytes written to destinations.
    pub bytes_written: u64,
    /// Build + execute, seconds (loading inputs and reading outputs excluded).
    pub seconds: f64,
    /// Of which building the rings.
    pub build_seconds: f64,
    /// Of which the engine reading and checking descriptors.
    pub decode_seconds: f64,
}

/// Why a reduce failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PathError {
    /// Bad inputs (shape).
    #[error("{0}")]
    Input(String),
    /// Source `index` has another length than source 0 (a front end names the files).
    #[error("sources differ in length: source 0 has {first} bytes, source {index} has {len} bytes")]
    SourceLengths {
        /// The first source whose length differs.
        index: usize,
        /// Source 0's length.
        first: u64,
        /// Source `index`'s length.
        len: u64,
    },
    /// The host refused the request (the study's dispatcher rules).
    #[error(transparent)]
    Host(#[from] HostError),
    /// The engine's API refused something.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Memory (budget, regions).
    #[error(transparent)]
    Memory(#[from] MemError),
    /// A queue faulted.
    #[error(transparent)]
    Fault(#[from] Fault),
}

/// Checks the shape of `sources` for `job` and returns the element count.
pub fn check_inputs(job: &ReduceJob, lens: &[u64]) -> Result<u64, PathError> {
    let size = job.in_dt.bytes() as u64;
    let first = *lens.first().ok_or_else(|| PathError::Input("a reduce needs at least one source".into()))?;
    if let Some(index) = lens.iter().position(|l| *l != first) {
        return Err(PathError::SourceLengths { index, first, len: lens[index] });
    }
    if size == 0 {
        return Err(PathError::Host(HostError::Format(cce_format::FormatError::ZeroSizeDtype(job.in_dt.name()))));
    }
    if first == 0 || first % size != 0 {
        return Err(PathError::Input(format!(
            "source length {first} bytes is not a positive multiple of the {} element size ({size})",
            job.in_dt.name()
        )));
    }
    let elems = first / size;
    let out = elems * job.out_dt.bytes().max(1) as u64;
    let want = first.saturating_mul(lens.len() as u64).saturating_add(out.saturating_mul(job.dests as u64));
    if want > job.budget {
        return Err(PathError::Memory(MemError::Budget { want, budget: job.budget }));
    }
    if first > STRIDE || out > STRIDE {
        return Err(PathError::Input(format!(
            "a buffer of {} bytes exceeds the model's {STRIDE}-byte slot",
            first.max(out)
        )));
    }
    Ok(elems)
}

/// The request for `job` over `n` sources of `elems` elements.
pub fn request(job: &ReduceJob, n: usize, elems: u64) -> Result<ReduceRequest, PathError> {
    let srcs = (0..n as u64).map(|i| SRC_BASE + i * STRIDE).collect();
    let dsts = (0..job.dests as u64).map(|j| DST_BASE + j * STRIDE).collect();
    let mut req = ReduceRequest::new(
        job.op.value(),
        srcs,
        dsts,
        elems,
        ReduceDtypes { in_dt: job.in_dt, accum_dt: job.accum_dt, out_dt: job.out_dt },
        job.arch,
    );
    req.rounding = job.rounding;
    Ok(req.with_options(&job.scales, job.constant)?)
}

/// Runs `job` over `sources` (raw little-endian arrays of the in dtype, equal lengths).
/// Nothing is returned unless every packet ran.
pub fn run_reduce(job: &ReduceJob, sources: &[&[u8]]) -> Result<ReduceOutcome, PathError> {
    run_with(job, sources, None)
}

/// [`run_reduce`] writing each destination into the caller's `outputs` (one per destination,
/// `elements × out size` bytes each) in place; the outcome's `outputs` is empty. A refused
/// request leaves `outputs` untouched; a run that faults has written the packets before the
/// faulted one (which wrote nothing), so a caller that must lose nothing passes fresh buffers.
pub fn run_reduce_into(
    job: &ReduceJob,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
) -> Result<ReduceOutcome, PathError> {
    run_with(job, sources, Some(outputs))
}

fn run_with(job: &ReduceJob, sources: &[&[u8]], into: Option<&mut [&mut [u8]]>) -> Result<ReduceOutcome, PathError> {
    let lens: Vec<u64> = sources.iter().map(|s| s.len() as u64).collect();
    let elems = check_inputs(job, &lens)?;
    let req = request(job, sources.len(), elems)?;
    let out_len = elems * job.out_dt.bytes() as u64;
    if let Some(outs) = &into {
        if outs.len() != req.dsts.len() {
            return Err(PathError::Input(format!("{} outputs for {} destinations", outs.len(), req.dsts.len())));
        }
        if let Some((k, o)) = outs.iter().enumerate().find(|(_, o)| o.len() as u64 != out_len) {
            return Err(PathError::Input(format!(
                "output {k} has {} bytes, expected {out_len} ({elems} elements of {})",
                o.len(),
                job.out_dt.name()
            )));
        }
    }
    // Plan first: a refused request allocates nothing.
    let t_build = Instant::now();
    let program = plan(&req)?;
    let plan_seconds = t_build.elapsed().as_secs_f64();
    // The sources are read in place (the caller's slices, never written); the destinations
    // are the caller's buffers, or the model's own memory moved out at the end without a copy.
    let mut mem = HostMemory::new(job.budget.saturating_add(1 << 30));
    for (i, s) in sources.iter().enumerate() {
        mem.add_borrowed(req.srcs[i], s)?;
    }
    let owned = into.is_none();
    match into {
        Some(outs) => {
            for (&d, o) in req.dsts.iter().zip(outs.iter_mut()) {
                mem.add_borrowed_mut(d, o)?;
            }
        }
        None => {
            for &d in &req.dsts {
                mem.add_resident_region(d, out_len)?;
            }
        }
    }
    let t = Instant::now();
    let rings = program.to_rings(None)?;
    let build_seconds = plan_seconds + t.elapsed().as_secs_f64();
    let mut engine =
        Engine::new(mem, EngineConfig { arch: job.arch, threads: job.threads.max(1), ..EngineConfig::default() });
    let report = run_programs(&mut engine, &[rings.queue(0)], &mut |m: &mut HostMemory<'_>, a, l| m.add_region(a, l))?;
    let seconds = plan_seconds + t.elapsed().as_secs_f64();
    let st = engine.status(0).ok_or(EngineError::Queue(0))?;
    if let Some(f) = st.fault {
        return Err(PathError::Fault(f));
    }
    debug_assert_eq!(st.state, QueueState::Idle);
    let mut mem = engine.into_memory();
    let outputs = if owned {
        req.dsts
            .iter()
            .map(|&d| mem.take(d).ok_or(MemError::OutOfBounds { addr: d, len: out_len }))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    Ok(ReduceOutcome {
        outputs,
        elements: elems,
        packets: report.packets,
        descriptors: report.descriptors,
        bytes_read: report.bytes_read,
        bytes_written: report.bytes_written,
        seconds,
        build_seconds,
        decode_seconds: report.decode_seconds,
    })
}
