//! The entry points: [`reduce`], [`reduce_par`], [`reduce_with`], [`convert`], [`convert_par`].

use crate::any_dtype::Plan;
use crate::error::NumericsError;
use crate::fp32_tiles::{F32AccJob, F32AccOp, F32AccPlan};
use crate::rng::site_key;
use crate::simd::{Kernel, dispatch};
use crate::spec::{MAX_SOURCES, Op, ReduceSpec, Rounding};
use crate::types::{FloatFormat, NumType};

/// How a reduce is executed. The bits never depend on these settings (tested); they only
/// change speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exec {
    /// Worker threads (≥ 1). Above 1 needs the `std` feature; without it the work runs on the
    /// calling thread.
    pub threads: usize,
    /// Elements per chunk handed to a kernel at a time (0 = whole range).
    pub chunk_elements: usize,
    /// The highest code path allowed (`Isa::Portable` pins the portable copy; the default
    /// allows the best one the CPU has).
    pub max_isa: crate::simd::Isa,
}

impl Default for Exec {
    fn default() -> Self {
        Exec { threads: 1, chunk_elements: 1 << 16, max_isa: crate::simd::Isa::Avx512 }
    }
}

/// Reduces `sources` element-wise into every buffer of `outputs` (raw little-endian arrays),
/// on the calling thread. `first_element_index` is the global index of element 0: the
/// stochastic-rounding counter, so chunked calls give the same bits as one call.
///
/// # Errors
/// Any shape or dtype problem, see [`NumericsError`]. Nothing is written on error.
pub fn reduce(
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
    first_element_index: u64,
) -> Result<(), NumericsError> {
    reduce_with(spec, sources, outputs, first_element_index, &Exec::default())
}

/// [`reduce`] on `threads` threads; identical bits for any thread count.
///
/// # Errors
/// As [`reduce`], plus [`NumericsError::ZeroThreads`].
#[cfg(feature = "std")]
pub fn reduce_par(
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
    first_element_index: u64,
    threads: usize,
) -> Result<(), NumericsError> {
    reduce_with(spec, sources, outputs, first_element_index, &Exec { threads, ..Exec::default() })
}

/// What [`validate`] resolved.
pub(crate) struct Checked {
    elements: usize,
}

pub(crate) fn validate(
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &[&mut [u8]],
    first: u64,
) -> Result<Checked, NumericsError> {
    if sources.is_empty() || sources.len() > MAX_SOURCES {
        return Err(NumericsError::SourceCount(sources.len()));
    }
    if outputs.is_empty() {
        return Err(NumericsError::NoOutputs);
    }
    let isz = spec.in_type.size();
    let len0 = sources[0].len();
    if len0 % isz != 0 {
        return Err(NumericsError::NotElementMultiple {
            role: "source",
            index: 0,
            len: len0,
            dtype: spec.in_type,
            size: isz,
        });
    }
    for (index, s) in sources.iter().enumerate().skip(1) {
        if s.len() != len0 {
            return Err(NumericsError::SourceLengthMismatch { index, len: s.len(), expected: len0 });
        }
    }
    let elements = len0 / isz;
    let expected = elements * spec.out_type.size();
    for (index, o) in outputs.iter().enumerate() {
        if o.len() != expected {
            return Err(NumericsError::OutputLength { index, len: o.len(), expected });
        }
    }
    if let Op::Fma(ops) = &spec.op {
        if ops.len() != sources.len() {
            return Err(NumericsError::FmaSourceMismatch { operand_sets: ops.len(), sources: sources.len() });
        }
        if !spec.accum_type.num_type().is_float() {
            return Err(NumericsError::Unsupported("fma needs a floating-point accumulate dtype"));
        }
    }
    if first.checked_add(elements as u64).is_none() {
        return Err(NumericsError::IndexOverflow { first, count: elements as u64 });
    }
    Ok(Checked { elements })
}

/// Output bytes (per thread) from which a call writes with non-temporal stores where the
/// kernel has them: below it, the output is left in the cache for whoever reads it next.
pub(crate) const STREAM_MIN_BYTES: usize = 4 << 20;

/// The hot-path parameters, when the spec qualifies: fp32 (or fp32r) accumulate, float in
/// and out, and ADD, MIN, MAX or (with `std`) FMA. `out_bytes` is the output each thread
/// writes (it decides non-temporal stores).
fn fast_plan(spec: &ReduceSpec, n_sources: usize, out_bytes: usize) -> Option<F32AccPlan<'_>> {
    if spec.accum_type.num_type() != NumType::F32 {
        return None;
    }
    let in_fmt = spec.in_type.float_format()?;
    let out_fmt = spec.out_type.float_format()?;
    let sr_key = match spec.rounding {
        Rounding::Stochastic { seed, stream } if out_fmt != FloatFormat::F32 => Some(site_key(seed, stream, 0)),
        _ => None,
    };
    let clamp32 = |c: &Option<crate::spec::Scalar>| c.map(crate::any_dtype::scalar_to_f32);
    let (op, keep_sign) = match &spec.op {
        Op::Add => (F32AccOp::Add, n_sources == 1),
        Op::Min { clamp } => {
            (F32AccOp::MinMax { max: false, clamp: clamp32(clamp) }, n_sources == 1 && clamp.is_none())
        }
        Op::Max { clamp } => (F32AccOp::MinMax { max: true, clamp: clamp32(clamp) }, n_sources == 1 && clamp.is_none()),
        #[cfg(feature = "std")]
        Op::Fma(ops) => (F32AccOp::Fma(ops), false),
        #[cfg(not(feature = "std"))]
        Op::Fma(_) => return None,
    };
    let streaming = out_bytes >= STREAM_MIN_BYTES;
    Some(F32AccPlan { op, in_fmt, out_fmt, sr_key, saturate: spec.saturate, keep_sign, streaming })
}

enum Path<'p> {
    Fast(F32AccPlan<'p>),
    Generic(alloc::boxed::Box<Plan<'p>>),
}

struct GenericJob<'a, 'b, 'c, 'p> {
    plan: &'a Plan<'p>,
    sources: &'a [&'b [u8]],
    outputs: &'a mut [&'c mut [u8]],
    first: u64,
}

impl Kernel for GenericJob<'_, '_, '_, '_> {
    #[inline(always)]
    fn run<C: crate::simd::Caps>(&mut self) {
        crate::any_dtype::run(self.plan, self.sources, self.outputs, self.first);
    }
}

/// Runs elements `[0, n)` of the given (sub)buffers, chunk by chunk.
fn run_range(
    path: &Path<'_>,
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
    first: u64,
    exec: &Exec,
) {
    let isz = spec.in_type.size();
    let osz = spec.out_type.size();
    let n = sources[0].len() / isz;
    let chunk = if exec.chunk_elements == 0 { n.max(1) } else { exec.chunk_elements };
    let mut srcs: [&[u8]; MAX_SOURCES] = [&[]; MAX_SOURCES];
    let srcs = &mut srcs[..sources.len()];
    let mut start = 0;
    while start < n {
        let len = chunk.min(n - start);
        for (d, s) in srcs.iter_mut().zip(sources) {
            *d = &s[start * isz..(start + len) * isz];
        }
        let mut outs: alloc::vec::Vec<&mut [u8]> =
            outputs.iter_mut().map(|o| &mut o[start * osz..(start + len) * osz]).collect();
        let f = first.wrapping_add(start as u64);
        match path {
            Path::Fast(plan) => {
                dispatch(&mut F32AccJob { plan: *plan, sources: srcs, outputs: &mut outs, first: f }, exec.max_isa)
            }
            Path::Generic(plan) => {
                dispatch(&mut GenericJob { plan, sources: srcs, outputs: &mut outs, first: f }, exec.max_isa)
            }
        }
        start += len;
    }
}

/// [`reduce`] with explicit execution settings.
///
/// # Errors
/// As [`reduce`], plus [`NumericsError::ZeroThreads`].
pub fn reduce_with(
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
    first_element_index: u64,
    exec: &Exec,
) -> Result<(), NumericsError> {
    if exec.threads == 0 {
        return Err(NumericsError::ZeroThreads(0));
    }
    let checked = validate(spec, sources, outputs, first_element_index)?;
    let out_bytes = per_thread_output(checked.elements, spec.out_type.size(), exec.threads);
    let path = match fast_plan(spec, sources.len(), out_bytes) {
        Some(f) => Path::Fast(f),
        None => Path::Generic(alloc::boxed::Box::new(Plan::new(
            &spec.op,
            spec.in_type,
            spec.accum_type.num_type(),
            spec.out_type,
            spec.rounding,
            spec.saturate,
        ))),
    };
    #[cfg(feature = "std")]
    if exec.threads > 1 && checked.elements > 1 {
        run_threads(&path, spec, sources, outputs, first_element_index, exec, checked.elements);
        return Ok(());
    }
    let _ = checked.elements;
    run_range(&path, spec, sources, outputs, first_element_index, exec);
    Ok(())
}

/// The output bytes each thread of [`run_threads`] writes (all of them on one thread).
fn per_thread_output(elements: usize, out_size: usize, threads: usize) -> usize {
    let t = if cfg!(feature = "std") { threads.clamp(1, elements.max(1)) } else { 1 };
    elements.div_ceil(t) * out_size
}

/// The kernel a [`reduce_with`] call of this shape runs, as `level:route` — the CPU level
/// (`portable`, `avx2`, `avx512`, `avx512-vbmi`) and the route at it (`bf16-add`, `bf16-fma`,
/// `bf16-min`, `bf16-max`, each with `-nt` for non-temporal stores, `f16-add[-nt]`,
/// `fp8-fused`, `tiles`, or `generic` for specs off
/// the fp32-accumulate hot path). Decided by the same dispatch and the same plan as the call;
/// `-nt` follows the output size alone (an output at an odd address is written through the
/// cache all the same).
pub fn kernel_name(spec: &ReduceSpec, n_sources: usize, elements: usize, exec: &Exec) -> alloc::string::String {
    struct Probe<'p> {
        plan: Option<F32AccPlan<'p>>,
        n_sources: usize,
        #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only the x86 dispatch asks
        fp8: bool,
        name: alloc::string::String,
    }
    impl Kernel for Probe<'_> {
        fn run<C: crate::simd::Caps>(&mut self) {
            let route = self.plan.as_ref().map_or("generic", |p| p.route::<C>(self.n_sources));
            self.name = alloc::format!("{}:{route}", C::LEVEL);
        }
        fn wants_vbmi(&self) -> bool {
            self.fp8
        }
    }
    let out_bytes = per_thread_output(elements, spec.out_type.size(), exec.threads);
    let plan = fast_plan(spec, n_sources, out_bytes);
    let fp8 = plan.as_ref().is_some_and(F32AccPlan::wants_vbmi);
    let mut probe = Probe { plan, n_sources, fp8, name: alloc::string::String::new() };
    dispatch(&mut probe, exec.max_isa);
    probe.name
}

#[cfg(feature = "std")]
fn run_threads(
    path: &Path<'_>,
    spec: &ReduceSpec,
    sources: &[&[u8]],
    outputs: &mut [&mut [u8]],
    first: u64,
    exec: &Exec,
    n: usize,
) {
    use alloc::vec::Vec;
    let t = exec.threads.min(n);
    // Contiguous parts of whole 4096-element runs (whole tiles, whole cache lines).
    let per = n.div_ceil(t).next_multiple_of(4096);
    let (isz, osz) = (spec.in_type.size(), spec.out_type.size());
    let mut ranges = Vec::new();
    let mut s = 0;
    while s < n {
        let e = (s + per).min(n);
        ranges.push((s, e));
        s = e;
    }
    let mut out_parts: Vec<Vec<&mut [u8]>> = ranges.iter().map(|_| Vec::with_capacity(outputs.len())).collect();
    for o in outputs.iter_mut() {
        let mut rest: &mut [u8] = o;
        for (part, &(a, b)) in out_parts.iter_mut().zip(&ranges) {
            let (head, tail) = core::mem::take(&mut rest).split_at_mut((b - a) * osz);
            part.push(head);
            rest = tail;
        }
    }
    std::thread::scope(|scope| {
        for (mut outs, &(a, b)) in out_parts.into_iter().zip(&ranges) {
            let srcs: Vec<&[u8]> = sources.iter().map(|s| &s[a * isz..b * isz]).collect();
            scope.spawn(move || {
                run_range(path, spec, &srcs, &mut outs, first.wrapping_add(a as u64), exec);
            });
        }
    });
}

/// The spec [`convert`] runs: a one-source ADD whose accumulator holds the input exactly
/// (fp32 for float inputs, the input type for integers), so the only rounding is the final one.
pub fn convert_spec(from: NumType, to: NumType, rounding: Rounding, saturate: bool) -> ReduceSpec {
    let accum = if from.is_float() { NumType::F32 } else { from };
    ReduceSpec { saturate, ..ReduceSpec::add(from, accum, to).with_rounding(rounding) }
}

fn check_convert(from: NumType, to: NumType, input: &[u8], output: &[u8]) -> Result<(), NumericsError> {
    if input.len() % from.size() != 0 {
        return Err(NumericsError::NotElementMultiple {
            role: "input",
            index: 0,
            len: input.len(),
            dtype: from,
            size: from.size(),
        });
    }
    let expected = input.len() / from.size() * to.size();
    if output.len() != expected {
        return Err(NumericsError::OutputLength { index: 0, len: output.len(), expected });
    }
    Ok(())
}

/// Converts a raw little-endian array of `from` into `to` (one rounding; element `i` uses SR
/// counter `i`).
///
/// # Errors
/// [`NumericsError::NotElementMultiple`] if `input` is not whole elements,
/// [`NumericsError::OutputLength`] if `output` is not `elements × to.size()` bytes.
pub fn convert(
    from: NumType,
    to: NumType,
    input: &[u8],
    output: &mut [u8],
    rounding: Rounding,
    saturate: bool,
) -> Result<(), NumericsError> {
    check_convert(from, to, input, output)?;
    reduce(&convert_spec(from, to, rounding, saturate), &[input], &mut [output], 0)
}

/// [`convert`] on `threads` threads (same bits).
///
/// # Errors
/// As [`convert`], plus [`NumericsError::ZeroThreads`].
#[cfg(feature = "std")]
pub fn convert_par(
    from: NumType,
    to: NumType,
    input: &[u8],
    output: &mut [u8],
    rounding: Rounding,
    saturate: bool,
    threads: usize,
) -> Result<(), NumericsError> {
    check_convert(from, to, input, output)?;
    reduce_par(&convert_spec(from, to, rounding, saturate), &[input], &mut [output], 0, threads)
}

/// [`convert`] into a new vector.
///
/// # Errors
/// As [`convert`].
pub fn convert_to_vec(
    from: NumType,
    to: NumType,
    input: &[u8],
    rounding: Rounding,
    saturate: bool,
) -> Result<alloc::vec::Vec<u8>, NumericsError> {
    let n = input.len() / from.size();
    let mut out = alloc::vec![0u8; n * to.size()];
    convert(from, to, input, &mut out, rounding, saturate)?;
    Ok(out)
}
