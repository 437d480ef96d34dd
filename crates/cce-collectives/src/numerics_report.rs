//! `cce report numerics`: how the error of a bf16 all-reduce grows with the rank count, with
//! round-to-nearest-even against stochastic rounding, and an fp32 baseline.
//!
//! For each R in [`RANKS`] and each [`Series`] — bf16 RNE, bf16 SR, fp32 — one ring all-reduce
//! (op add, fp32 accumulate, arch 3) runs through the engine ([`collective::run`]), and
//! its output is measured against the exact sum of its inputs. 18 all-reduces in all.
//!
//! ## The inputs
//! A ring all-reduce rounds every element's partial sum to the buffer dtype once per
//! reduce-scatter step, R − 1 times. How those roundings add up depends on the data:
//! - [`Inputs::Correlated`] (the default): element i has one value shared by every rank,
//!   m_i ∈ [0.5, 1), and rank r holds m_i · (1 + [`SPREAD`] · u_ri) with u_ri ∈ [−1, 1) — ranks
//!   that hold nearly the same values, as replicated statistics or low-noise gradients do.
//!   An element's partial then grows by nearly the same step at each rounding, and once the
//!   ranks' differences are below the partial's bf16 spacing (R ≳ 8 at ±2 %) RNE drops nearly
//!   the same remainder every time: its errors add up in one direction and the error grows
//!   about linearly in R. SR rounds up or down with the probabilities that make each rounding
//!   exact on average: its errors cancel, and the error grows like √R. RNE's drift is per
//!   element — its direction is set by the element's value — so the signed mean over elements
//!   ([`Measured::bias`]) stays near 0 for both while the mean |error| separates.
//! - [`Inputs::Uniform`]: independent values uniform in [−1, 1) per rank and element
//!   ([`metrics::generate`], what `cce allreduce` runs). RNE's remainders are then unrelated
//!   from one rounding to the next, so RNE does not drift, and SR's error is the larger (an SR
//!   rounding has about twice the variance of an RNE one): measured, 1.2–1.4 times RNE's at
//!   every R. Both stay about flat against R, since partial sums of signed values grow like
//!   √k while Σ|x| grows like k. Kept so that the report shows when SR helps and when it
//!   does not.
//!
//! Both are drawn with [`cce_numerics::sample::sample`] (f32, seeded by `seed` and the rank)
//! and rounded to the dtype with RNE; the fp32 series reduces the same f32 values.
//!
//! ## The measure ([`MEASURE`])
//! Per element, |output − exact| / Σ_r |x_r|, where exact = Σ_r x_r over the inputs as held
//! in the dtype (in f64, exact for these sizes: what is measured is the reduction's rounding,
//! not the inputs' quantisation); [`Measured::mean_rel`] is its mean over the elements of
//! rank 0's output (every rank holds the same bytes: [`Measured::ranks_identical`]).
//! Normalising by Σ|x| rather than |exact| keeps elements whose sum cancels to near 0 from
//! dominating (uniform inputs); for the correlated inputs, all positive, the two are the same
//! and the measure is the mean relative error. The mean rather than the maximum: the maximum
//! of a few thousand elements is one tail sample, noisy from seed to seed, while the mean shows
//! how the errors grow ([`Measured::max_rel`] is kept too).
//!
//! ## Guarantees
//! - [`check`] refuses bad parameters (and every configuration's memory need) before any
//!   input is made; [`run`] calls it first.
//! - Deterministic: the same parameters give the same numbers on every machine.

use cce_format::SdmaDtype;
use cce_host::Rounding;
use cce_numerics::sample::{SampleKind, sample};
use cce_numerics::{NumType, NumericsError};

use crate::collective::{self, Algo, Checked, CollectiveError, Config, RedOp};
use crate::metrics;

/// The rank counts of the report.
pub const RANKS: [usize; 6] = [2, 4, 8, 16, 32, 64];
/// Elements per rank when none are given: 64 per rank of the largest R (the ring's chunk),
/// small enough that the 18 all-reduces take a few seconds in a debug build.
pub const DEFAULT_ELEMS: u64 = 4096;
/// Most elements per rank (1 Mi): 18 all-reduces of up to 64 ranks stay within minutes.
pub const MAX_ELEMS: u64 = 1 << 20;
/// The relative spread of the ranks' values around an element's shared value
/// ([`Inputs::Correlated`]): ±2 %, 2.5 to 5 bf16 spacings of the value itself, so the inputs
/// differ in bf16 while the partials of more than a few ranks no longer resolve the differences.
pub const SPREAD: f64 = 0.02;
/// What [`Measured::mean_rel`] is, in one line (the JSON's `measure`).
pub const MEASURE: &str = "mean over elements of |allreduce - exact sum| / sum of |inputs| \
                           (the mean relative error for inputs of one sign)";

/// Which inputs the all-reduces sum (see the module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inputs {
    /// One value per element shared by the ranks, each rank within ±[`SPREAD`] of it.
    #[default]
    Correlated,
    /// Independent values uniform in [−1, 1) ([`metrics::generate`]).
    Uniform,
}

impl Inputs {
    /// Every kind of inputs.
    pub const ALL: [Inputs; 2] = [Inputs::Correlated, Inputs::Uniform];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Inputs::Correlated => "correlated",
            Inputs::Uniform => "uniform",
        }
    }
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<Inputs> {
        Self::ALL.into_iter().find(|i| i.name() == s)
    }
}

impl std::fmt::Display for Inputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Inputs {
    type Err = String;
    /// [`Inputs::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<Inputs, String> {
        Inputs::from_name(s).ok_or_else(|| format!("'{s}': expected correlated or uniform"))
    }
}

/// One line of the report: a buffer dtype and rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// bf16 buffers, every rounding RNE.
    Bf16Rne,
    /// bf16 buffers, stochastic rounding seeded by the report's seed.
    Bf16Sr,
    /// fp32 buffers (fp32 rounds RNE; SR applies to narrower formats only).
    Fp32,
}

impl Series {
    /// Every series, in the order of [`Row::measured`].
    pub const ALL: [Series; 3] = [Series::Bf16Rne, Series::Bf16Sr, Series::Fp32];
    /// The JSON key: `bf16_rne`, `bf16_sr`, `fp32`.
    pub fn key(self) -> &'static str {
        match self {
            Series::Bf16Rne => "bf16_rne",
            Series::Bf16Sr => "bf16_sr",
            Series::Fp32 => "fp32",
        }
    }
    /// The legend's name.
    pub fn label(self) -> &'static str {
        match self {
            Series::Bf16Rne => "bf16, RNE",
            Series::Bf16Sr => "bf16, stochastic rounding",
            Series::Fp32 => "fp32 (baseline)",
        }
    }
    /// Buffer dtype.
    pub fn dtype(self) -> SdmaDtype {
        match self {
            Series::Bf16Rne | Series::Bf16Sr => SdmaDtype::Bf16,
            Series::Fp32 => SdmaDtype::Fp32,
        }
    }
    /// The all-reduce of `ranks` ranks × `elems` elements for this series.
    pub fn config(self, ranks: usize, elems: u64, seed: u64) -> Config {
        let mut cfg = Config::new(ranks, Algo::Ring, RedOp::Add, self.dtype(), elems);
        cfg.accum = SdmaDtype::Fp32;
        cfg.rounding = match self {
            Series::Bf16Sr => Rounding::Stochastic { seed: seed as u32 },
            _ => Rounding::Rne,
        };
        cfg
    }
}

/// What the report runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Elements per rank, 1..=[`MAX_ELEMS`].
    pub elems: u64,
    /// Seed of the inputs and of stochastic rounding (its low 32 bits).
    pub seed: u64,
    /// Which inputs.
    pub inputs: Inputs,
    /// The largest R: 64 (the ring's rows alone), or a power of two up to 4096, which adds the
    /// curves of several orders ([`crate::numerics_scale`]).
    pub max_ranks: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params { elems: DEFAULT_ELEMS, seed: 1, inputs: Inputs::Correlated, max_ranks: 64 }
    }
}

/// One series at one rank count, measured (see the module).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    /// Mean of |output − exact| / Σ|x| over the elements ([`MEASURE`]).
    pub mean_rel: f64,
    /// Mean of (output − exact) / Σ|x|: the signed drift.
    pub bias: f64,
    /// Largest |output − exact| / Σ|x|.
    pub max_rel: f64,
    /// Every rank's output is the same bytes.
    pub ranks_identical: bool,
    /// Elements outside the bound of a sequential reduction ([`metrics::Metrics::wrong`]).
    pub wrong: u64,
    /// The largest error in ULPs of the dtype ([`metrics::Metrics::max_ulp_err`]).
    pub max_ulp: f64,
    /// The mean error in ULPs ([`metrics::Metrics::mean_ulp_err`]).
    pub mean_ulp: f64,
}

/// One rank count: every series measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// R.
    pub ranks: usize,
    /// In the order of [`Series::ALL`].
    pub measured: [Measured; 3],
}

impl Row {
    /// The measurement of `s`.
    pub fn get(&self, s: Series) -> &Measured {
        &self.measured[Series::ALL.iter().position(|&x| x == s).unwrap_or(0)]
    }
}

/// The report: its parameters and one row per rank count of [`RANKS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// What ran.
    pub params: Params,
    /// Rows, R ascending.
    pub rows: Vec<Row>,
    /// With `max_ranks` above 64: every order's curve ([`crate::numerics_scale`]).
    pub curves: Vec<crate::numerics_scale::Curve>,
}

/// The report's all-reduces, every one checked: what [`run`] runs (see [`check`]).
#[derive(Clone, Debug)]
pub struct CheckedReport {
    params: Params,
    /// Per R of [`RANKS`]: one checked run per [`Series`], in [`Series::ALL`] order.
    runs: Vec<(usize, Vec<Checked>)>,
}

/// Refuses parameters the report cannot run: elements outside 1..=[`MAX_ELEMS`], or a
/// configuration [`collective::check`] refuses (the memory budget). Nothing is allocated;
/// accepted, the checked runs [`run`] runs.
pub fn check(params: &Params) -> Result<CheckedReport, CollectiveError> {
    if !(1..=MAX_ELEMS).contains(&params.elems) {
        return Err(CollectiveError::Config(format!(
            "`elems` {}: the numerics report takes 1..={MAX_ELEMS} elements per rank",
            params.elems
        )));
    }
    if params.max_ranks != 64 {
        crate::numerics_scale::check(params).map_err(CollectiveError::Config)?;
    }
    let runs = RANKS
        .into_iter()
        .map(|r| {
            let series = Series::ALL.into_iter().map(|s| collective::check(&s.config(r, params.elems, params.seed)));
            Ok((r, series.collect::<Result<Vec<_>, _>>()?))
        })
        .collect::<Result<Vec<_>, CollectiveError>>()?;
    Ok(CheckedReport { params: *params, runs })
}

/// f32 values → raw bytes of `dtype` (RNE for bf16).
fn encode(values: &[f32], dtype: SdmaDtype) -> Result<Vec<u8>, NumericsError> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = NumType::from_sdma(dtype)?;
    if t == NumType::F32 {
        Ok(bytes)
    } else {
        cce_numerics::convert_to_vec(NumType::F32, t, &bytes, cce_numerics::Rounding::Rne, false)
    }
}

/// `count` values uniform in [−1, 1) from `seed`, as f32.
fn unit(count: usize, seed: u64) -> Result<Vec<f32>, NumericsError> {
    let b = sample(NumType::F32, count, seed, SampleKind::Uniform)?;
    Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The inputs of `cfg` (one buffer per rank) for `params` (see the module).
pub fn inputs(cfg: &Config, params: &Params) -> Result<Vec<Vec<u8>>, NumericsError> {
    let n = cfg.elems as usize;
    match params.inputs {
        Inputs::Uniform => Ok(metrics::generate(cfg, params.seed)),
        Inputs::Correlated => {
            let shared: Vec<f64> = unit(n, params.seed)?.into_iter().map(|u| 0.75 + 0.25 * f64::from(u)).collect();
            (0..cfg.ranks)
                .map(|r| {
                    let own = unit(n, params.seed.wrapping_add(1 + r as u64))?;
                    let v: Vec<f32> =
                        shared.iter().zip(&own).map(|(&m, &u)| (m * (1.0 + SPREAD * f64::from(u))) as f32).collect();
                    encode(&v, cfg.dtype)
                })
                .collect()
        }
    }
}

/// The all-reduce output of rank 0 against the exact sum of `inputs` (one rank decoded at a
/// time: the exact sums and magnitudes are the only per-element state).
fn measure(cfg: &Config, inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Measured {
    let m = metrics::measure(cfg, inputs, outputs);
    let out = outputs.first().map(|b| metrics::values(cfg.dtype, b)).unwrap_or_default();
    let (mut exact, mut mag) = (vec![0f64; out.len()], vec![0f64; out.len()]);
    for b in inputs {
        for ((e, a), x) in exact.iter_mut().zip(mag.iter_mut()).zip(metrics::values(cfg.dtype, b)) {
            *e += x;
            *a += x.abs();
        }
    }
    let (mut sum, mut signed, mut max, mut count) = (0f64, 0f64, 0f64, 0u64);
    for ((&y, &e), &a) in out.iter().zip(&exact).zip(&mag) {
        let err = (y - e) / a;
        // An element whose inputs are all 0 (a = 0) has no relative error; a non-finite
        // output is counted in `wrong`.
        if a > 0.0 && err.is_finite() {
            sum += err.abs();
            signed += err;
            max = max.max(err.abs());
            count += 1;
        }
    }
    let mean = |s: f64| if count == 0 { 0.0 } else { s / count as f64 };
    Measured {
        mean_rel: mean(sum),
        bias: mean(signed),
        max_rel: max,
        ranks_identical: m.ranks_identical,
        wrong: m.wrong,
        max_ulp: m.max_ulp_err,
        mean_ulp: m.mean_ulp_err,
    }
}

/// Runs one checked all-reduce of the report over its inputs and measures it.
pub fn measure_run(checked: &Checked, params: &Params) -> Result<Measured, CollectiveError> {
    let cfg = checked.config();
    let ins = inputs(cfg, params).map_err(|e| CollectiveError::Config(e.to_string()))?;
    let (outcome, ins) = collective::run(checked, collective::owned(ins))?;
    let ins: Vec<Vec<u8>> = ins.into_iter().map(std::borrow::Cow::into_owned).collect();
    Ok(measure(cfg, &ins, &outcome.outputs))
}

impl CheckedReport {
    /// How many all-reduces [`run`] runs: its `progress` calls (a progress bar's total).
    pub fn all_reduces(&self) -> usize {
        let scale = match self.params.max_ranks {
            64 => 0,
            _ => crate::numerics_scale::all_reduces(&self.params),
        };
        self.runs.iter().map(|(_, runs)| runs.len()).sum::<usize>() + scale
    }
}

/// Runs the report [`check`] accepted: for each R of [`RANKS`] and each [`Series`], its
/// inputs, the all-reduce on the engine and the measurement. `progress(R, series)` is called
/// before each all-reduce.
pub fn run(checked: &CheckedReport, progress: &mut dyn FnMut(usize, Series)) -> Result<Report, CollectiveError> {
    let params = &checked.params;
    let mut rows = Vec::with_capacity(checked.runs.len());
    for (ranks, runs) in &checked.runs {
        let mut measured = [Measured::default(); 3];
        for ((slot, s), run) in measured.iter_mut().zip(Series::ALL).zip(runs) {
            progress(*ranks, s);
            *slot = measure_run(run, params)?;
        }
        rows.push(Row { ranks: *ranks, measured });
    }
    let curves = match params.max_ranks {
        64 => Vec::new(),
        _ => crate::numerics_scale::run(params, &mut |_, r, s| progress(r, s))?,
    };
    Ok(Report { params: *params, rows, curves })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_of_all_reduces_is_the_count_of_progress_calls() {
        for max_ranks in [64, 128] {
            let p = Params { elems: 128, max_ranks, ..Params::default() };
            let checked = check(&p).unwrap();
            let mut calls = 0;
            run(&checked, &mut |_, _| calls += 1).unwrap();
            assert_eq!(checked.all_reduces(), calls, "max_ranks {max_ranks}");
            assert!(calls > 0);
        }
    }

    #[test]
    fn correlated_inputs_are_positive_and_near_their_shared_value() {
        let p = Params { elems: 64, ..Params::default() };
        let cfg = Series::Fp32.config(4, p.elems, p.seed);
        let ins = inputs(&cfg, &p).unwrap();
        let xs: Vec<Vec<f64>> = ins.iter().map(|b| metrics::values(SdmaDtype::Fp32, b)).collect();
        for i in 0..64 {
            let (lo, hi) = xs.iter().fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(x[i]), hi.max(x[i])));
            // Within m · (1 ± SPREAD) of one m ∈ [0.5, 1): positive, and hi / lo ≤ 1.05 / 0.95.
            assert!(lo >= 0.5 * (1.0 - SPREAD) && hi < 1.0 + SPREAD, "{lo} {hi}");
            assert!(hi / lo <= (1.0 + SPREAD) / (1.0 - SPREAD) + 1e-6, "{lo} {hi}");
        }
    }

    #[test]
    fn bad_sizes_are_refused_before_running() {
        for elems in [0, MAX_ELEMS + 1] {
            let e = check(&Params { elems, ..Params::default() }).unwrap_err();
            assert!(e.to_string().contains("elements per rank"), "{e}");
        }
    }
}
