//! `cce demo`, the main job: the study's worked examples §9.1, §9.2 and §9.3 through the whole
//! path (host rings → engine), each checked against a computation written independently of the
//! numerics kernels (§9.3: of the GCE codec); then an all-reduce over 8 ranks with every
//! algorithm.

use cce_format::{KbinOp, SdmaDtype};
use cce_host::{ReduceDtypes, ReduceRequest, Rings, plan};

use crate::collective::{self, Algo, Checked, Config, Difference, RedOp, Story, StoryError};
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

/// The demo's forensics: the first element where two algorithms' outputs differ, the story of
/// each (rank 0's), and the parameters that split them.
#[derive(Clone, Debug)]
pub struct Forensics {
    /// The element.
    pub index: u64,
    /// Elements of rank 0's output where the two differ.
    pub differing: u64,
    /// The first algorithm's story of it.
    pub a: Story,
    /// The second's.
    pub b: Story,
    /// What differs between the two configurations (the algorithm).
    pub split: Vec<Difference>,
    /// The two configurations.
    pub configs: (Config, Config),
}

/// The demo's all-reduce: a row per algorithm, and the forensics of the first algorithm whose
/// output differs from the first's (`None` when all agree).
#[derive(Clone, Debug)]
pub struct DemoAllreduce {
    /// A row per algorithm.
    pub rows: Vec<Row>,
    /// The first disagreement, told.
    pub forensics: Option<Forensics>,
}

/// Why the demo's all-reduce failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A run.
    #[error(transparent)]
    Collective(#[from] collective::CollectiveError),
    /// A story.
    #[error(transparent)]
    Story(#[from] StoryError),
}

/// The first element (and how many) where two outputs of `size`-byte elements differ.
pub fn first_difference(a: &[u8], b: &[u8], size: usize) -> (Option<u64>, u64) {
    let size = size.max(1);
    let mut first = None;
    let mut count = 0u64;
    // Whole blocks that agree are skipped with one slice comparison.
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len()) / size;
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let (x, y) = (&a[start * size..end * size], &b[start * size..end * size]);
        if x == y {
            continue;
        }
        let pairs = || x.chunks_exact(size).zip(y.chunks_exact(size));
        if first.is_none() {
            first = pairs().position(|(p, q)| p != q).map(|i| (start + i) as u64);
        }
        count += pairs().filter(|(p, q)| p != q).count() as u64;
    }
    (first, count)
}

/// The demo's all-reduce ([`check_allreduce`]'s runs: `ranks` ranks of `elems` bf16 elements
/// each) with every algorithm, over one set of inputs; rank 0's output of the first algorithm
/// is kept and compared with each next one's until one differs, whose first differing element
/// is then told for both (two stories: a few milliseconds).
pub fn allreduce_rows(runs: &[Checked], mut progress: impl FnMut(Algo)) -> Result<DemoAllreduce, DemoError> {
    let Some(first) = runs.first() else { return Ok(DemoAllreduce { rows: Vec::new(), forensics: None }) };
    let inputs = metrics::generate(first.config(), 2026);
    let mut rows = Vec::new();
    let mut kept: Option<Vec<u8>> = None;
    let mut split: Option<(usize, u64, u64)> = None;
    for (k, checked) in runs.iter().enumerate() {
        let cfg = checked.config();
        progress(cfg.algo);
        let (mut o, _) =
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
        match (&kept, split) {
            (None, _) if !o.outputs.is_empty() => kept = Some(o.outputs.swap_remove(0)),
            (Some(a), None) => {
                let b = o.outputs.first().map_or(&[][..], Vec::as_slice);
                if let (Some(index), count) = first_difference(a, b, usize::from(cfg.dtype.bytes())) {
                    split = Some((k, index, count));
                    kept = None;
                }
            }
            _ => {}
        }
    }
    let forensics = match split {
        Some((k, index, differing)) => {
            let (ca, cb) = (first.config(), runs[k].config());
            let held = metrics::Held::new(ca, &inputs);
            Some(Forensics {
                index,
                differing,
                a: collective::story(ca, &held, index, Some(0))?,
                b: collective::story(cb, &held, index, Some(0))?,
                split: collective::differences(ca, cb),
                configs: (ca.clone(), cb.clone()),
            })
        }
        None => None,
    };
    Ok(DemoAllreduce { rows, forensics })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first difference and the count, against a plain element loop.
    #[test]
    fn first_difference_finds_the_first_and_counts_all() {
        let a: Vec<u8> = (0..20_000u32).flat_map(|i| (i as u16).to_le_bytes()).collect();
        let mut b = a.clone();
        for i in [9_000usize, 9_001, 15_000] {
            b[2 * i] ^= 1;
        }
        assert_eq!(first_difference(&a, &b, 2), (Some(9_000), 3));
        assert_eq!(first_difference(&a, &a, 2), (None, 0));
    }

    /// The demo's forensics: ring and kangaring split at the first element whose stories'
    /// outputs are the two runs' bits, and the split is the algorithm.
    #[test]
    fn the_demo_tells_the_first_disagreement() {
        let runs = check_allreduce(8, 4000).unwrap();
        let d = allreduce_rows(&runs, |_| {}).unwrap();
        let f = d.forensics.expect("two algorithms disagree somewhere");
        assert_ne!(f.a.output.bits, f.b.output.bits);
        assert_ne!(f.a.expr, f.b.expr);
        assert_eq!(f.split.len(), 1);
        assert_eq!(f.split[0].parameter, "algo");
        let inputs = metrics::generate(runs[0].config(), 2026);
        let idx = runs.iter().position(|c| c.config().algo.name() == f.split[0].b).unwrap();
        for (checked, story) in [(&runs[0], &f.a), (&runs[idx], &f.b)] {
            let (o, _) = collective::run(checked, collective::owned(inputs.clone())).unwrap();
            let i = f.index as usize * 2;
            assert_eq!(story.output.bits, u64::from(u16::from_le_bytes([o.outputs[0][i], o.outputs[0][i + 1]])));
        }
    }
}
