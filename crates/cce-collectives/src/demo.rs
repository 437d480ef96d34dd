//! `cce demo`, the main job: the study's worked examples §9.1, §9.2 and §9.3 through the whole
//! path (host rings → engine), each checked against a computation written independently of the
//! numerics kernels (§9.3: of the GCE codec); then an all-reduce over 8 ranks with every
//! algorithm.

use cce_format::{KbinOp, SdmaDtype};
use cce_host::{ReduceDtypes, ReduceRequest, Rings, plan};

use crate::collective::{self, Algo, Checked, Config, RedOp};
use crate::metrics;
use cce_job::{PathError, ReduceJob, run_reduce};

/// One worked example.
#[derive(Clone, Debug)]
pub struct Example {
    /// Title.
    pub title: &'static str,
    /// The rings the host builds for it (for the listing).
    pub rings: Rings,
    /// Elements.
    pub elems: usize,
    /// Elements whose engine result differs from the independent computation.
    pub mismatches: usize,
}

/// One all-reduce row.
#[derive(Clone, Debug)]
pub struct Row {
    /// Algorithm.
    pub algo: Algo,
    /// Wall seconds.
    pub seconds: f64,
    /// Model seconds.
    pub model_seconds: f64,
    /// Descriptors.
    pub descriptors: u64,
    /// Bytes read + written.
    pub bytes: u64,
    /// Largest |error| against the exact sum ([`metrics::Metrics::max_abs_err`]).
    pub max_abs_err: f64,
    /// Largest error relative to the largest exact magnitude ([`metrics::Metrics::max_rel_err`]).
    pub max_rel_err: f64,
    /// Largest error in bf16 ulps at the exact value ([`metrics::Metrics::max_ulp_err`]).
    pub max_ulp_err: f64,
    /// Mean error in bf16 ulps ([`metrics::Metrics::mean_ulp_err`]).
    pub mean_ulp_err: f64,
    /// Every rank holds the same bytes.
    pub ranks_identical: bool,
    /// Elements outside the sequential-rounding error bound.
    pub wrong: u64,
}

/// bf16 bits → f32, exactly (independent of cce-numerics).
fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// f32 → bf16, round to nearest even (the classic bit trick; inputs here are finite).
fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

fn bf16_source(seed: u32, n: usize) -> Vec<u16> {
    (0..n as u32).map(|i| f32_to_bf16(((i.wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 250.0 - 4.0)).collect()
}

fn bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn rings(op: KbinOp, srcs: usize, scales: Option<&[f32]>) -> Result<Rings, PathError> {
    let addrs = (0..srcs as u64).map(|i| 0x1000_0000 * (i + 1)).collect();
    let req = ReduceRequest::new(
        op.value(),
        addrs,
        vec![0xD000_0000],
        1024,
        ReduceDtypes { in_dt: SdmaDtype::Bf16, accum_dt: SdmaDtype::Fp32, out_dt: SdmaDtype::Bf16 },
        3,
    );
    let req = match scales {
        Some(s) => req.with_fma_scales(s)?,
        None => req,
    };
    Ok(plan(&req)?.to_rings(None)?)
}

/// §9.1 (3-source bf16 ADD, fp32 accumulate) and §9.2 (dst = 0.5·s0 + 0.5·s1).
pub fn examples() -> Result<Vec<Example>, PathError> {
    let n = 1024;
    let s: Vec<Vec<u16>> = (0..3).map(|i| bf16_source(17 + i, n)).collect();
    let views: Vec<Vec<u8>> = s.iter().map(|v| bytes(v)).collect();
    // §9.1: acc = (fp32)s0 + (fp32)s1 + (fp32)s2; dst = bf16(acc).
    let want_add: Vec<u16> =
        (0..n).map(|i| f32_to_bf16(bf16_to_f32(s[0][i]) + bf16_to_f32(s[1][i]) + bf16_to_f32(s[2][i]))).collect();
    let job = ReduceJob::add(SdmaDtype::Bf16, SdmaDtype::Fp32, SdmaDtype::Bf16);
    let got = run_reduce(&job, &[&views[0], &views[1], &views[2]])?;
    let add_mis =
        got.outputs[0].chunks_exact(2).zip(&want_add).filter(|(g, w)| u16::from_le_bytes([g[0], g[1]]) != **w).count();
    // §9.2: acc = s0·0.5 + 0; acc = s1·0.5 + acc (halving is exact, so fused = two f32 ops).
    let want_fma: Vec<u16> =
        (0..n).map(|i| f32_to_bf16(bf16_to_f32(s[0][i]) * 0.5 + bf16_to_f32(s[1][i]) * 0.5)).collect();
    let job = ReduceJob { op: KbinOp::Fma, scales: vec![0.5, 0.5], ..job };
    let got = run_reduce(&job, &[&views[0], &views[1]])?;
    let fma_mis =
        got.outputs[0].chunks_exact(2).zip(&want_fma).filter(|(g, w)| u16::from_le_bytes([g[0], g[1]]) != **w).count();
    Ok(vec![
        Example {
            title: "study §9.1: 3-source bf16 ADD, fp32 accumulate",
            rings: rings(KbinOp::Add, 3, None)?,
            elems: n,
            mismatches: add_mis,
        },
        Example {
            title: "study §9.2: weighted average FMA, dst = 0.5·s0 + 0.5·s1",
            rings: rings(KbinOp::Fma, 2, Some(&[0.5, 0.5]))?,
            elems: n,
            mismatches: fma_mis,
        },
        gradient_example(&s)?,
    ])
}

/// §9.3: the EXT combo that reduces and compresses, and the peer's decompress
/// ([`crate::gradient_demo`]).
fn gradient_example(s: &[Vec<u16>]) -> Result<Example, PathError> {
    let g = crate::gradient_demo::example(&[s[0].clone(), s[1].clone(), s[2].clone()])?;
    Ok(Example {
        title: "study §9.3: gradient all-reduce leg, EXT combo (seed-init, 3-source ADD, GCE compress) then the peer's GCE decompress",
        rings: g.combo,
        elems: g.elems,
        mismatches: g.mismatches,
    })
}

/// The demo all-reduce's configuration for `algo`.
fn config(ranks: usize, elems: u64, algo: Algo) -> Config {
    Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, elems)
}

/// Checks the demo all-reduce's configuration for every algorithm ([`collective::check`], the
/// memory budget included) without allocating anything, so a caller can refuse bad sizes
/// before printing anything: the checked runs, in [`Algo::ALL`] order, that
/// [`allreduce_rows`] runs.
pub fn check_allreduce(ranks: usize, elems: u64) -> Result<Vec<Checked>, collective::CollectiveError> {
    Algo::ALL.into_iter().map(|algo| collective::check(&config(ranks, elems, algo))).collect()
}

/// The demo's all-reduce ([`check_allreduce`]'s runs: `ranks` ranks of `elems` bf16 elements
/// each) with every algorithm, over one set of inputs.
pub fn allreduce_rows(
    runs: &[Checked],
    mut progress: impl FnMut(Algo),
) -> Result<Vec<Row>, collective::CollectiveError> {
    let Some(first) = runs.first() else { return Ok(Vec::new()) };
    let inputs = metrics::generate(first.config(), 2026);
    let mut rows = Vec::new();
    for checked in runs {
        let cfg = checked.config();
        progress(cfg.algo);
        let (o, _) =
            collective::run(checked, collective::borrowed(&inputs.iter().map(Vec::as_slice).collect::<Vec<_>>()))?;
        let m = metrics::measure(cfg, &inputs, &o.outputs);
        rows.push(Row {
            algo: cfg.algo,
            seconds: o.seconds,
            model_seconds: o.model_seconds,
            descriptors: o.descriptors(),
            bytes: o.bytes_moved(),
            max_abs_err: m.max_abs_err,
            max_rel_err: m.max_rel_err,
            max_ulp_err: m.max_ulp_err,
            mean_ulp_err: m.mean_ulp_err,
            ranks_identical: m.ranks_identical,
            wrong: m.wrong,
        });
    }
    Ok(rows)
}
