//! How good a collective's result is: every rank's output against the exact reduction of the
//! inputs, computed in f64 (exact for sums of up to 2^29 values of any float dtype here; an
//! integer sum wraps as the engine's integer accumulator does).

use cce_format::SdmaDtype;
use cce_numerics::NumType;
use std::sync::atomic::{AtomicUsize, Ordering};

use cce_numerics::check::{BlockErrors, Combine, ErrorBound, ExactBlock, OutputScratch, measure_block};
use cce_numerics::sample::{SampleKind, sample_into, sample_par};

use crate::collective::{Collective, Compress, Config, RedOp};

/// Decodes element `i` of a raw little-endian array of `t` as f64 (integers exactly up to 2^53).
fn value_at(t: NumType, bytes: &[u8], i: usize) -> f64 {
    let size = t.size();
    let mut b = [0u8; 8];
    b[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
    let raw = u64::from_le_bytes(b);
    match (t.float_format(), t.int_info()) {
        (Some(f), _) => cce_numerics::float::decode(f, raw as u32),
        (None, Some((bits, true))) => ((raw << (64 - bits)) as i64 >> (64 - bits)) as f64,
        _ => raw as f64,
    }
}

/// The values of a raw little-endian array of `dtype`, as f64 (integers exactly up to 2^53).
pub fn values(dtype: SdmaDtype, bytes: &[u8]) -> Vec<f64> {
    let Ok(t) = NumType::from_sdma(dtype) else { return Vec::new() };
    (0..bytes.len() / t.size()).map(|i| value_at(t, bytes, i)).collect()
}

/// The unit in the last place of `dtype` at `x`: for a float dtype of p-bit precision (the
/// implicit bit included) `2^(floor(log2 |x|) − p + 1)`, floored at the dtype's smallest
/// subnormal spacing `2^(1 − bias − (p − 1))` (so at 0 and below the normal range it is that
/// spacing); for an integer dtype 1. `None` for a dtype without values (fp32r, invalid).
pub fn ulp(dtype: SdmaDtype, x: f64) -> Option<f64> {
    Some(cce_numerics::check::ulp_of(NumType::from_sdma(dtype).ok()?, x))
}

/// What [`measure`] found. Every error compares an output element with the exact reduction of
/// the inputs (computed in f64, see the module); for an all-reduce every rank's output is
/// measured, for reduce-scatter and all-gather alone only `ranks_identical` is (the other
/// fields are 0). Elements whose output is NaN or infinite while the exact value is finite are
/// left out of the error maxima and means and counted in `wrong`; elements with a NaN or an
/// infinity among their inputs are in no count and listed in `nonfinite`.
///
/// The keys of `cce allreduce --json` (a contract: extended, never renamed). From here, one per
/// field below: `ranks_identical`, `max_abs_err`, `max_rel_err`, `max_ulp_err`, `mean_ulp_err`,
/// `wrong`, `nonfinite` (`count`, `first`: as `cce identify` lists them). From the run ([`crate::collective::Outcome`]): `packets` and `descriptors` (tx + rx)
/// executed over all ranks; `bytes_moved`, bytes read + written over all ranks; `seconds`, wall
/// time of the run (loading excluded); `model_seconds`, the time model's estimate; `algbw_gbps` =
/// elems · size / seconds / 10⁹ and `busbw_gbps` = algbw · 2(R−1)/R (all-reduce) or · (R−1)/R
/// ([`bandwidths`]); `steps`, steps per rank; `memory_bytes`, what
/// [`crate::collective::check`] counted against the budget; `per_rank`, each rank's `packets`,
/// `descriptors`, `bytes_read`, `bytes_written`; `per_link`, `{from, to, bytes}` for every
/// pair of ranks that exchanged bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Every rank holds the same bytes (for reduce-scatter: trivially true).
    pub ranks_identical: bool,
    /// Largest |output − exact| over all ranks and elements, in the dtype's units.
    pub max_abs_err: f64,
    /// `max_abs_err` relative to the largest exact magnitude: max |output − exact| / max
    /// |exact|, both maxima over all ranks and elements (not a per-element ratio, which is
    /// meaningless where a sum cancels to near zero). 0 when every output is exact; infinite
    /// (JSON null) only if every exact value is 0 and some output is not.
    pub max_rel_err: f64,
    /// Largest |output − exact| / [`ulp`]`(dtype, scale)`: the error in units in the last place
    /// of the output dtype at the magnitude the reduction works at, `scale` = Σ|x| (for avg
    /// Σ|x| / R), never below |exact| (integers: the absolute error). Measured at Σ|x| rather
    /// than at the exact value, because a sum that cancels to near zero passes through partials
    /// of Σ|x|'s size and each of their roundings may add up to 0.5 of this unit: a correctly
    /// rounded result is within 0.5, a reduction over R ranks that rounds every partial within
    /// about R / 2 (the bound `wrong` counts against, in these units).
    pub max_ulp_err: f64,
    /// The mean of the same ulp error over every measured element of every rank.
    pub mean_ulp_err: f64,
    /// Elements (over all ranks) outside the bound of a sequential reduction that rounds at
    /// every step: |err| ≤ R · 2^-p · Σ|x| for a p-bit float dtype; for integers, any difference
    /// from the wrapping result. With GCE (`--compress gce`), the bound that adds Q = nodes + 1
    /// quantizations: |err| ≤ ((1 + 2^-3)^Q · (1 + 2^-p)^(R+Q) − 1) · Σ|x| + Q · 2^-31 · max Σ|x|.
    pub wrong: u64,
    /// The elements with a NaN or an infinity among their inputs (counted once per element,
    /// not per rank): every reduction order gives a NaN or an infinity there, so they are
    /// left out of `wrong` and of the error maxima and means, and listed here instead.
    pub nonfinite: Nonfinite,
}

/// Elements listed by index: how many, and the first [`Nonfinite::LISTED`] of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Nonfinite {
    /// How many.
    pub count: u64,
    /// The first ones, ascending.
    pub first: Vec<u64>,
}

impl Nonfinite {
    /// Elements listed in `first` at most (as `cce identify` lists them).
    pub const LISTED: usize = 20;

    /// Adds `other` (the elements after these) into `self`.
    pub fn merge(&mut self, other: &Nonfinite) {
        self.count += other.count;
        let room = Nonfinite::LISTED.saturating_sub(self.first.len());
        self.first.extend(other.first.iter().take(room));
    }
}

/// Whether a run's outputs are compared with the exact reduction of its inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Check {
    /// Every output element against the exact reduction ([`measure_parts`]).
    #[default]
    Exact,
    /// No comparison: the metrics are not computed.
    None,
}

impl Check {
    /// `exact` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            Check::Exact => "exact",
            Check::None => "none",
        }
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Check {
    type Err = String;
    fn from_str(s: &str) -> Result<Check, String> {
        match s {
            "exact" => Ok(Check::Exact),
            "none" => Ok(Check::None),
            _ => Err(format!("'{s}': expected exact or none")),
        }
    }
}

/// Where the check reads each rank's input, block by block.
pub trait InputSource: Sync {
    /// Rank `rank`'s elements `first .. first + count`: a slice of an input held in memory, or
    /// `buf` filled (by generation or from a file).
    ///
    /// # Errors
    /// The read's I/O error.
    fn block<'a>(&'a self, rank: usize, first: u64, count: usize, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]>;
}

/// Inputs held in memory, one buffer per rank.
pub struct Held<'a> {
    inputs: Vec<&'a [u8]>,
    size: usize,
}

impl<'a> Held<'a> {
    /// `inputs` (one buffer per rank) of `cfg`'s dtype.
    pub fn new<I: AsRef<[u8]>>(cfg: &Config, inputs: &'a [I]) -> Held<'a> {
        Held { inputs: inputs.iter().map(AsRef::as_ref).collect(), size: usize::from(cfg.dtype.bytes().max(1)) }
    }
}

impl InputSource for Held<'_> {
    fn block<'a>(&'a self, rank: usize, first: u64, count: usize, _: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        let (a, z) = (first as usize * self.size, (first as usize + count) * self.size);
        self.inputs.get(rank).and_then(|b| b.get(a..z)).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("rank {rank}'s input is shorter than the outputs"),
            )
        })
    }
}

/// The generated inputs of [`generate`], remade block by block (nothing held).
pub struct Generated {
    t: NumType,
    seed: u64,
}

impl Generated {
    /// The inputs of `cfg` from `seed`, as [`generate`] makes them.
    pub fn new(cfg: &Config, seed: u64) -> Generated {
        Generated { t: NumType::from_sdma(cfg.dtype).unwrap_or(NumType::F32), seed }
    }
}

impl InputSource for Generated {
    fn block<'a>(&'a self, rank: usize, first: u64, count: usize, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        buf.clear();
        buf.resize(count * self.t.size(), 0);
        sample_into(self.t, first, self.seed.wrapping_add(rank as u64), SampleKind::Uniform, buf)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(buf)
    }
}

/// Inputs in files, rank r's in `dir/rank{r}.bin` (what `--input-dir` names), read block by
/// block.
pub struct RankFiles {
    /// Each rank's file and the byte its elements start at.
    files: Vec<(AtFile, u64)>,
    size: usize,
}

/// A file read at offsets by several threads at once: a positional read on unix; elsewhere (the
/// page's wasm32, other hosts) a lock around each seek and read.
struct AtFile(#[cfg(unix)] std::fs::File, #[cfg(not(unix))] std::sync::Mutex<std::fs::File>);

impl AtFile {
    fn new(f: std::fs::File) -> AtFile {
        #[cfg(unix)]
        return AtFile(f);
        #[cfg(not(unix))]
        return AtFile(std::sync::Mutex::new(f));
    }

    /// Fills `buf` from `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.0.read_exact_at(buf, offset)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut f = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            f.seek(SeekFrom::Start(offset))?;
            f.read_exact(buf)
        }
    }
}

impl RankFiles {
    /// Opens every rank's file of `cfg` in `dir`.
    ///
    /// # Errors
    /// A file that cannot be opened.
    pub fn open(cfg: &Config, dir: &std::path::Path) -> std::io::Result<RankFiles> {
        let files: Vec<_> = (0..cfg.ranks).map(|q| (dir.join(format!("rank{q}.bin")), 0)).collect();
        RankFiles::at(cfg, &files)
    }

    /// Opens rank r's input at `files[r]`: a path and the byte its elements start at (a
    /// `.npy`'s data; 0 for a raw file).
    ///
    /// # Errors
    /// A file that cannot be opened.
    pub fn at(cfg: &Config, files: &[(std::path::PathBuf, u64)]) -> std::io::Result<RankFiles> {
        let files = files
            .iter()
            .map(|(p, offset)| {
                std::fs::File::open(p)
                    .map(|f| (AtFile::new(f), *offset))
                    .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(RankFiles { files, size: usize::from(cfg.dtype.bytes().max(1)) })
    }
}

impl InputSource for RankFiles {
    fn block<'a>(&'a self, rank: usize, first: u64, count: usize, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
        buf.clear();
        buf.resize(count * self.size, 0);
        let (f, offset) =
            self.files.get(rank).ok_or_else(|| std::io::Error::other(format!("no input file for rank {rank}")))?;
        f.read_exact_at(buf, offset + first * self.size as u64)?;
        Ok(buf)
    }
}

/// Elements per block of the check: each thread holds two f64 per element of a block and one
/// block of every rank at a time (a few hundred KiB), whatever the size of the run.
pub const CHECK_BLOCK: usize = 1 << 14;

/// Compares `outputs` with the exact reduction of `inputs` (held in memory).
pub fn measure<I: AsRef<[u8]>>(cfg: &Config, inputs: &[I], outputs: &[Vec<u8>]) -> Metrics {
    let outs: Vec<&[u8]> = outputs.iter().map(Vec::as_slice).collect();
    measure_parts(cfg, &Held::new(cfg, inputs), &outs, check_threads()).map(|p| p.metrics).unwrap_or_default()
}

/// The threads the check runs on: this host's.
pub fn check_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// [`measure`] with what combining the metrics of several processes needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricParts {
    /// The metrics of these outputs.
    pub metrics: Metrics,
    /// The ulp errors summed, and how many were counted (the mean's parts).
    pub ulp_sum: f64,
    /// Errors counted in `ulp_sum`.
    pub counted: u64,
    /// The largest finite |exact| (the relative error's denominator).
    pub max_exact: f64,
}

/// One block's measures: rank 0's errors, and when the ranks' blocks differ, every rank's
/// errors combined.
#[derive(Clone, Default)]
struct BlockResult {
    identical: bool,
    first: BlockErrors,
    every: BlockErrors,
    nonfinite: Nonfinite,
}

/// One output block measured with the elements at `masked` (those with a NaN or an infinity
/// among their inputs) left out: each is set to NaN in a copy of the block, which the check
/// counts as one wrong element and nothing else, and that count is taken back off. `nan` is a
/// NaN of the dtype (`None`: the dtype has none, and then no input can be NaN or infinite).
fn measure_masked(
    exact: &ExactBlock,
    out: &[u8],
    bound: &ErrorBound,
    scratch: &mut OutputScratch,
    (masked, nan): (&[usize], Option<&[u8]>),
    copy: &mut Vec<u8>,
) -> std::io::Result<BlockErrors> {
    let Some(nan) = nan.filter(|_| !masked.is_empty()) else {
        return measure_block(exact, out, bound, scratch).map_err(std::io::Error::other);
    };
    copy.clear();
    copy.extend_from_slice(out);
    for &i in masked {
        copy[i * nan.len()..(i + 1) * nan.len()].copy_from_slice(nan);
    }
    let mut e = measure_block(exact, copy, bound, scratch).map_err(std::io::Error::other)?;
    e.wrong -= masked.len() as u64;
    Ok(e)
}

/// A NaN's bytes in `t` (`None` for an integer dtype, or a float dtype without NaN).
fn nan_bytes(t: NumType) -> Option<Vec<u8>> {
    let f = t.float_format()?;
    let enc = cce_numerics::float::round_f64(f64::NAN, f, None, false);
    cce_numerics::float::decode(f, enc).is_nan().then(|| enc.to_le_bytes()[..t.size()].to_vec())
}

/// Measures `outputs` (every rank's whole output this process holds) against the exact
/// reduction of the inputs `source` gives, streaming over blocks of [`CHECK_BLOCK`] elements
/// on `threads` threads: the exact values of a block are made from every rank's block of input
/// and dropped after the block, so the check's memory does not grow with the run. The result
/// is the same for every thread count (blocks are combined in order).
///
/// # Errors
/// An input the source cannot read.
pub fn measure_parts(
    cfg: &Config,
    source: &dyn InputSource,
    outputs: &[&[u8]],
    threads: usize,
) -> std::io::Result<MetricParts> {
    let all_reduce = cfg.collective == Collective::AllReduce;
    let Some(t) = NumType::from_sdma(cfg.dtype).ok().filter(|_| all_reduce) else {
        // No values (fp32r), or a partial buffer whose exact value is the caller's to check.
        let ranks_identical = outputs.windows(2).all(|w| w[0] == w[1]) || cfg.collective == Collective::ReduceScatter;
        return Ok(MetricParts {
            metrics: Metrics { ranks_identical, ..Metrics::default() },
            ..MetricParts::default()
        });
    };
    let n = outputs.iter().map(|o| o.len() / t.size()).min().unwrap_or(0);
    let r = cfg.ranks as f64;
    let combine = match cfg.op {
        RedOp::Add | RedOp::Avg => Combine::Sum,
        RedOp::Min => Combine::Min,
        RedOp::Max => Combine::Max,
    };
    let divisor = if cfg.op == RedOp::Avg { r } else { 1.0 };
    let int = !cfg.dtype.is_float();
    let prec = t.float_format().map_or(24, |f| f.precision());
    let u = 2f64.powi(-(prec as i32));
    let bound = if int {
        ErrorBound { rel: 0.0, abs: 0.0, scale_divisor: divisor }
    } else if cfg.compress == Compress::Gce {
        // Each GCE quantization (one per node boundary a chunk crosses, and the owner's) errs
        // by at most 2^-3 of its value (e5m2's half ulp) plus an e5m2-subnormal step below
        // 2^-31 of its block's largest magnitude, and its expansion rounds once more to the
        // dtype (docs/MODEL.md G8).
        let q = cfg.nodes() as i32 + 1;
        let rel = (1.0 + 0.125f64).powi(q) * (1.0 + u).powi(cfg.ranks as i32 + q) - 1.0;
        let largest = blocks(
            n,
            threads,
            |first, len, exact: &mut ExactBlock, _, buf| {
                exact_block(cfg, source, first, len, exact, buf, divisor)?;
                Ok(exact.magnitudes().iter().copied().filter(|m| m.is_finite()).fold(0.0, f64::max))
            },
            t,
            combine,
        )?
        .into_iter()
        .fold(0.0, f64::max);
        ErrorBound { rel, abs: f64::from(q) * 2f64.powi(-31) * largest, scale_divisor: divisor }
    } else {
        ErrorBound { rel: r * u, abs: 0.0, scale_divisor: divisor }
    };
    let nan = nan_bytes(t);
    let results = blocks(
        n,
        threads,
        |first, len, exact: &mut ExactBlock, scratch, buf| {
            exact_block(cfg, source, first, len, exact, buf, divisor)?;
            let size = t.size();
            let range = first * size..(first + len) * size;
            let identical = outputs.windows(2).all(|w| w[0][range.clone()] == w[1][range.clone()]);
            // Σ|x| is a NaN or an infinity exactly where an input is.
            let masked: Vec<usize> = (0..len).filter(|&i| !exact.magnitudes()[i].is_finite()).collect();
            let nonfinite = Nonfinite {
                count: masked.len() as u64,
                first: masked.iter().take(Nonfinite::LISTED).map(|&i| (first + i) as u64).collect(),
            };
            let mut copy = Vec::new();
            let mask = (masked.as_slice(), nan.as_deref());
            let first_errors = match outputs.first() {
                Some(o) => measure_masked(exact, &o[range.clone()], &bound, scratch, mask, &mut copy)?,
                None => BlockErrors::default(),
            };
            let mut every = first_errors;
            if !identical {
                for o in &outputs[1..] {
                    every.merge(&measure_masked(exact, &o[range.clone()], &bound, scratch, mask, &mut copy)?);
                }
            }
            Ok(BlockResult { identical, first: first_errors, every, nonfinite })
        },
        t,
        combine,
    )?;
    // The ranks hold the same bytes when every block does (and their lengths agree).
    let mut m = Metrics {
        ranks_identical: results.iter().all(|b| b.identical) && outputs.windows(2).all(|w| w[0].len() == w[1].len()),
        ..Metrics::default()
    };
    let ranks = outputs.len() as u64;
    let mut total = BlockErrors::default();
    for b in &results {
        m.nonfinite.merge(&b.nonfinite);
        if m.ranks_identical {
            // Every rank holds these bytes: one rank's errors are every rank's.
            total.merge(&BlockErrors { wrong: b.first.wrong * ranks, ..b.first });
        } else if b.identical {
            let f = b.first;
            total.merge(&BlockErrors {
                wrong: f.wrong * ranks,
                ulp_sum: f.ulp_sum * ranks as f64,
                counted: f.counted * ranks,
                ..f
            });
        } else {
            total.merge(&b.every);
        }
    }
    m.max_abs_err = total.max_abs_err;
    m.max_ulp_err = total.max_ulp_err;
    m.wrong = total.wrong;
    m.max_rel_err = if m.max_abs_err == 0.0 {
        0.0
    } else if total.max_exact == 0.0 {
        f64::INFINITY
    } else {
        m.max_abs_err / total.max_exact
    };
    m.mean_ulp_err = if total.counted == 0 { 0.0 } else { total.ulp_sum / total.counted as f64 };
    Ok(MetricParts { metrics: m, ulp_sum: total.ulp_sum, counted: total.counted, max_exact: total.max_exact })
}

/// The exact reduction of elements `first .. first + len` into `exact`.
fn exact_block(
    cfg: &Config,
    source: &dyn InputSource,
    first: usize,
    len: usize,
    exact: &mut ExactBlock,
    bufs: &mut Vec<Vec<u8>>,
    divisor: f64,
) -> std::io::Result<()> {
    exact.start(len);
    bufs.resize_with(cfg.ranks, Vec::new);
    let srcs = bufs
        .iter_mut()
        .enumerate()
        .map(|(rank, buf)| source.block(rank, first as u64, len, buf))
        .collect::<std::io::Result<Vec<&[u8]>>>()?;
    exact.add_ranks(&srcs).map_err(std::io::Error::other)?;
    exact.finish(divisor);
    Ok(())
}

/// Runs `job` over every block of `n` elements on `threads` threads (each with its own
/// scratch), and returns the results in block order.
fn blocks<R: Send + Default + Clone>(
    n: usize,
    threads: usize,
    job: impl Fn(usize, usize, &mut ExactBlock, &mut OutputScratch, &mut Vec<Vec<u8>>) -> std::io::Result<R> + Sync,
    t: NumType,
    combine: Combine,
) -> std::io::Result<Vec<R>> {
    let count = n.div_ceil(CHECK_BLOCK);
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, count.max(1));
    let per_thread: Vec<std::io::Result<Vec<(usize, R)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let (mut exact, mut scratch, mut buf) =
                        (ExactBlock::new(t, combine), OutputScratch::default(), Vec::new());
                    let mut done = Vec::new();
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= count {
                            return Ok(done);
                        }
                        let first = b * CHECK_BLOCK;
                        let len = CHECK_BLOCK.min(n - first);
                        done.push((b, job(first, len, &mut exact, &mut scratch, &mut buf)?));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(std::io::Error::other("a check thread panicked"))))
            .collect()
    });
    let mut out = vec![R::default(); count];
    for part in per_thread {
        for (b, r) in part? {
            out[b] = r;
        }
    }
    Ok(out)
}

/// nccl-tests' bandwidths: algbw = bytes per rank / seconds; busbw = algbw · 2(R−1)/R for an
/// all-reduce, · (R−1)/R for reduce-scatter and all-gather. In GB/s.
pub fn bandwidths(cfg: &Config, seconds: f64) -> (f64, f64) {
    let bytes = cfg.elems as f64 * cfg.dtype.bytes() as f64;
    let algbw = bytes / seconds.max(1e-12) / 1e9;
    let r = cfg.ranks as f64;
    let factor = match cfg.collective {
        Collective::AllReduce => 2.0 * (r - 1.0) / r,
        _ => (r - 1.0) / r,
    };
    (algbw, algbw * factor)
}

/// Deterministic inputs for `cfg` from `seed`: rank r holds
/// [`cce_numerics::sample::sample`]`(dtype, elems, seed + r, Uniform)` — floats uniform in
/// [−1, 1) rounded to the dtype, integers in (−1000, 1000) — the bytes `cce gen --seed <seed + r>`
/// writes.
pub fn generate(cfg: &Config, seed: u64) -> Vec<Vec<u8>> {
    (0..cfg.ranks).map(|r| generate_rank(cfg, seed, r)).collect()
}

/// Rank `r`'s input of [`generate`], alone (a process that holds only some ranks makes only
/// theirs).
pub fn generate_rank(cfg: &Config, seed: u64, r: usize) -> Vec<u8> {
    let t = NumType::from_sdma(cfg.dtype).unwrap_or(NumType::F32);
    sample_par(t, cfg.elems as usize, seed.wrapping_add(r as u64), SampleKind::Uniform, check_threads())
        .unwrap_or_default()
}
