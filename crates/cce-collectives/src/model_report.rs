//! The time model held to measurements (`cce report model`): every public measured point of
//! [`crate::measured`] beside the model's figure for the same collective, ranks, nodes, bytes
//! and dtype, with the ratio model / measured.
//!
//! ## What is modelled for a point
//! - **Instance**: the point's (`trn1` → NeuronCore-v2's defaults); a point whose source does
//!   not state it is modelled as `trn2` (the tables that name an algorithm name KangaRing, which
//!   runs on Trn2's torus) and says so in its `note`.
//! - **Algorithm**: the one Neuron's output names for that point when it names one; else on
//!   Trn1 the one Neuron documents for it (the ring in one instance; over instances the flat
//!   ring with a ring cycle per EFA interface, the hierarchy beside it as the point's
//!   alternative); else what `--algo auto` chooses (the model's least time over every algorithm
//!   and hierarchy cce has; the JSON names it, as `auto: …`).
//! - **Size**: an all-reduce's buffer is the point's bytes per rank; an all-gather's output is
//!   the size nccom-test prints (each rank contributes its share). A collective cce does not
//!   model (permute, all-to-allv, all-gatherv) is listed with no model figure and the reason.
//! - **Held out**: the 64-rank, 2-instance all-reduce table, which no constant is fitted to.
//!
//! Nothing here is fitted: the figures are the model's with its parameters as `--explain`
//! lists them ([`Constant`], each with its tag and source).

use cce_format::SdmaDtype;

use crate::collective::{Algo, Collective, Config, Instance, RedOp, TimeModel, auto_channels, choose, model};
use crate::measured::{CLAIMS, Claim, MeasuredPoint, POINTS};

/// The table whose points no constant is fitted to.
pub const HELD_OUT_TABLE: &str = "allr-r64-n2-fp32";

/// One measured point beside the model's figure.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPoint {
    /// The measurement.
    pub point: &'static MeasuredPoint,
    /// The instance modelled.
    pub instance: Instance,
    /// The algorithm modelled (a hierarchy as `hier(intra/inter)`; `auto: …` when the source
    /// names none), or `None` when nothing was modelled.
    pub algorithm: Option<String>,
    /// The model's time, µs, or why there is none.
    pub model_us: Result<f64, String>,
    /// The other algorithm Neuron documents for the point, and its model time (µs) or why
    /// there is none: the hierarchy, where the flat ring is modelled over Trn1 instances.
    pub alternative: Option<(String, Result<f64, String>)>,
    /// Whether the point belongs to the held-out table.
    pub held_out: bool,
    /// What was assumed for this point.
    pub note: String,
}

impl ModelPoint {
    /// Model / measured, when modelled.
    pub fn ratio(&self) -> Option<f64> {
        self.model_us.as_ref().ok().map(|m| m / self.point.measured_us)
    }
}

/// One model constant as the report lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    /// Instance whose default it is.
    pub instance: Instance,
    /// The parameter.
    pub parameter: crate::collective::Parameter,
}

/// A release note's or page's quantified claim beside what the model says of the same
/// comparison, where the claim states enough to model it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimCheck {
    /// The claim.
    pub claim: &'static Claim,
    /// The model's change in percent for the comparison, when it can be modelled.
    pub model_change_percent: Option<f64>,
    /// What was modelled, or why nothing was.
    pub modelled: String,
}

/// The whole report: every point, every claim, and the constants of every instance modelled.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelReport {
    /// Every measured point, in the source's order.
    pub points: Vec<ModelPoint>,
    /// Every claim, in the source's order.
    pub claims: Vec<ClaimCheck>,
    /// Every instance's parameters.
    pub constants: Vec<Constant>,
}

impl ModelReport {
    /// The points with a model figure in the held-out table (or not): their ratios.
    pub fn ratios(&self, held_out: bool) -> Vec<f64> {
        self.points.iter().filter(|p| p.held_out == held_out).filter_map(ModelPoint::ratio).collect()
    }
}

/// Two notes as one.
fn join(a: String, b: String) -> String {
    if a.is_empty() { b } else { format!("{a}; {b}") }
}

/// What Neuron documents for a Trn1 point whose output names no algorithm (docs/MODEL.md C28,
/// C29): the ring inside one instance (Trn1's chips form a ring; mesh, RDH and KangaRing are
/// documented for Trn2's torus); over instances the flat ring Neuron keeps for Trn1, as one
/// ring cycle per EFA interface ([`auto_channels`]; one where a chunk has fewer elements than
/// interfaces). The other documented algorithm over instances — the hierarchy runtime 2.12.14.0
/// made the default, `hier(ring/ring)` — is the point's [`ModelPoint::alternative`]. `None` off
/// Trn1.
fn trn1_rule(p: &MeasuredPoint, instance: Instance) -> Option<(Config, Option<Config>)> {
    let mut cfg = point_config(p, instance).ok()?;
    if instance != Instance::Trn1 {
        return None;
    }
    if p.nodes < 2 {
        return Some((cfg, None));
    }
    let hier = (cfg.elems >= p.ranks as u64).then(|| Config { algo: Algo::Hier, ..cfg.clone() });
    cfg.channels = auto_channels(&cfg).unwrap_or(1);
    Some((cfg, hier))
}

/// The configuration a point measures on `instance` (the flat ring until an algorithm is
/// chosen): an all-reduce's buffer is its bytes per rank, an all-gather's output the size
/// nccom-test prints; its nodes are the model's (one node holds them all when it states one).
/// Refused, with the reason, for a collective or dtype cce does not model.
fn point_config(p: &MeasuredPoint, instance: Instance) -> Result<Config, String> {
    let collective = Collective::from_name(p.collective).ok_or_else(|| format!("cce models no {}", p.collective))?;
    let dtype = SdmaDtype::from_name(p.dtype).ok_or_else(|| format!("no dtype {}", p.dtype))?;
    let buffer = if collective == Collective::AllGather { p.size_column } else { p.bytes };
    let mut cfg = Config::new(p.ranks, Algo::Ring, RedOp::Add, dtype, buffer / dtype.bytes() as u64);
    cfg.collective = collective;
    cfg.arch = match instance {
        Instance::Trn1 => 2,
        Instance::Trn2 => 3,
        Instance::Trn3 => 4,
    };
    cfg.model = TimeModel::for_instance(instance);
    cfg.model.ranks_per_node = if p.nodes > 1 { p.ranks / p.nodes } else { cfg.model.ranks_per_node.max(p.ranks) };
    Ok(cfg)
}

/// Models one point.
fn model_point(p: &'static MeasuredPoint) -> ModelPoint {
    let (instance, mut note) = match Instance::from_name(p.instance) {
        Some(i) => (i, String::new()),
        None => (Instance::Trn2, format!("instance {}: modelled as trn2", p.instance)),
    };
    let held_out = p.table == HELD_OUT_TABLE;
    let none = |why: String, note: String| ModelPoint {
        point: p,
        instance,
        algorithm: None,
        model_us: Err(why),
        alternative: None,
        held_out,
        note,
    };
    let cfg = match point_config(p, instance) {
        Ok(cfg) => cfg,
        Err(why) => return none(why, note),
    };
    let rule = if p.algorithm.is_some() { None } else { trn1_rule(p, instance) };
    let alternative = rule.as_ref().and_then(|(_, alt)| alt.as_ref()).map(|alt| (alt.label(), micros(alt)));
    let named = p.algorithm.and_then(Algo::from_name).map(|algo| Config { algo, ..cfg.clone() });
    let (label, timed): (String, Result<f64, String>) = match named.or(rule.map(|(cfg, _)| cfg)) {
        Some(cfg) => {
            if p.algorithm.is_none() {
                note = join(note, "no algorithm in Neuron's output: Trn1's documented one (MODEL C28, C29)".into());
            }
            (cfg.label(), micros(&cfg).map(|us| us * 1e-6))
        }
        None => match choose(&cfg) {
            Ok((chosen, candidates)) => {
                let t =
                    candidates.iter().find(|c| c.is(&chosen)).and_then(|c| c.model.as_ref().ok()).map(|t| t.seconds);
                (format!("auto: {}", chosen.algo.label(chosen.hier)), t.ok_or_else(|| "no model".to_string()))
            }
            Err(e) => (String::new(), Err(e.to_string())),
        },
    };
    match timed {
        Ok(s) => ModelPoint {
            point: p,
            instance,
            algorithm: Some(label),
            model_us: Ok(s * 1e6),
            alternative,
            held_out,
            note,
        },
        Err(e) => {
            note = join(note, format!("refused: {e}"));
            none(e, note)
        }
    }
}

/// The model's time of `cfg` in µs, or why it has none.
fn micros(cfg: &Config) -> Result<f64, String> {
    model(cfg, false).map(|t| t.seconds * 1e6).map_err(|e| e.to_string())
}

/// The fit's measurements: (table, collective, ranks, size column in bytes).
const FIT_SMALL_AR: (&str, u64) = ("allr-r2-fp32", 1024);
const FIT_SMALL_AG: (&str, u64) = ("allg-r32-2023", 1024);
const FIT_LARGE_AR: (&str, u64) = ("allr-r2-fp32", 1 << 30);

/// The measured point of `table` at size `size`.
fn measured(table: &str, size: u64) -> &'static MeasuredPoint {
    POINTS.iter().find(|p| p.table == table && p.size_column == size).expect("a fit point of the measured tables")
}

/// The model's seconds for a fit point under `m` (Trn1's ring: the algorithm assumed for the
/// 2023 Trn1 runs, whose output names none).
fn fit_seconds(p: &MeasuredPoint, m: TimeModel) -> f64 {
    let cfg = point_config(p, Instance::Trn1).expect("a modelled collective and dtype");
    model(&Config { model: TimeModel { ranks_per_node: cfg.model.ranks_per_node, ..m }, ..cfg }, false)
        .expect("the fit points model")
        .seconds
}

/// Fits the model's three measured terms to Neuron's Trn1 tables (docs/MODEL.md C28): with the
/// engines' share fixed, `launch` and `step_cost` solve the two 1 KiB points exactly (each
/// point's time is linear in both: the steps on its path, found by a difference); with those
/// fixed, `dma_share` is found by bisection so the 2-rank 1 GiB point is met; five rounds.
pub fn fit() -> crate::collective::Fitted {
    let (a, b, c) = (
        measured(FIT_SMALL_AR.0, FIT_SMALL_AR.1),
        measured(FIT_SMALL_AG.0, FIT_SMALL_AG.1),
        measured(FIT_LARGE_AR.0, FIT_LARGE_AR.1),
    );
    let base = TimeModel::for_instance(Instance::Trn1).unfitted();
    let mut f = crate::collective::Fitted { launch: 0.0, step_cost: 0.0, dma_share: 1.0 };
    for _ in 0..5 {
        let with = |launch: f64, step_cost: f64| TimeModel { launch, step_cost, dma_share: f.dma_share, ..base };
        // Time = t0 + launch + k·step_cost at each small point.
        let lin = |p: &MeasuredPoint| {
            let t0 = fit_seconds(p, with(0.0, 0.0));
            let k = (fit_seconds(p, with(0.0, 1e-6)) - t0) / 1e-6;
            (t0, k, p.measured_us * 1e-6)
        };
        let ((ta, ka, ma), (tb, kb, mb)) = (lin(a), lin(b));
        f.step_cost = ((mb - tb) - (ma - ta)) / (kb - ka);
        f.launch = (ma - ta) - ka * f.step_cost;
        let (mut lo, mut hi) = (1e-3, 1.0);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            let m = TimeModel { launch: f.launch, step_cost: f.step_cost, dma_share: mid, ..base };
            if fit_seconds(c, m) > c.measured_us * 1e-6 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        f.dma_share = (lo + hi) / 2.0;
    }
    f
}

/// Every public measured point beside the model's figure, and the constants.
pub fn model_report() -> ModelReport {
    let points = POINTS.iter().map(model_point).collect();
    let constants = Instance::ALL
        .into_iter()
        .flat_map(|i| {
            TimeModel::for_instance(i)
                .parameters()
                .into_iter()
                .map(move |parameter| Constant { instance: i, parameter })
        })
        .collect();
    ModelReport { points, claims: CLAIMS.iter().map(check_claim).collect(), constants }
}

/// The model's figure for a claim: the hierarchical all-reduce's "up to 75 %" at 2 MB over 256
/// ranks (Trn1, the era's instance: 8 nodes of 32, fp32) as `hier(ring/ring)` against the flat
/// ring; a claim without the sizes, ranks or algorithms to model is listed with the reason.
fn check_claim(c: &'static Claim) -> ClaimCheck {
    let unmodelled = |why: &str| ClaimCheck { claim: c, model_change_percent: None, modelled: why.to_string() };
    if c.change_percent != Some(-75.0) || c.ranks != Some(256) {
        return unmodelled("not modelled: the claim states no size, rank count or algorithm pair the model can take");
    }
    let mut flat = Config::new(256, Algo::Ring, RedOp::Add, SdmaDtype::Fp32, (2 << 20) / 4);
    flat.arch = 2;
    flat.model = TimeModel::for_instance(Instance::Trn1);
    let hier = Config { algo: Algo::Hier, ..flat.clone() };
    // The flat ring Trn1 ran before the hierarchy: a ring cycle per EFA interface (C29).
    flat.channels = auto_channels(&flat).unwrap_or(1);
    match (model(&flat, false), model(&hier, false)) {
        (Ok(f), Ok(h)) => ClaimCheck {
            claim: c,
            model_change_percent: Some((h.seconds - f.seconds) / f.seconds * 100.0),
            modelled: format!(
                "trn1, 256 ranks as 8 nodes of 32, 2 MiB fp32 per rank: hier(ring/ring) {:.1} us against the flat {} {:.1} us",
                h.seconds * 1e6,
                flat.label(),
                f.seconds * 1e6
            ),
        },
        (Err(e), _) | (_, Err(e)) => unmodelled(&format!("refused: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults are the fit, to the digits they are written with.
    #[test]
    fn the_defaults_are_the_fit() {
        let f = fit();
        let d = crate::collective::FITTED;
        for (got, want, what) in [
            (d.launch, f.launch, "launch"),
            (d.step_cost, f.step_cost, "step_cost"),
            (d.dma_share, f.dma_share, "dma_share"),
        ] {
            assert!((got / want - 1.0).abs() < 1e-3, "{what}: the default {got:e}, the fit {want:e}");
        }
        // The fit meets its three points.
        let m = TimeModel::for_instance(Instance::Trn1);
        for (t, size) in [FIT_SMALL_AR, FIT_SMALL_AG, FIT_LARGE_AR] {
            let p = measured(t, size);
            let r = fit_seconds(p, m) / (p.measured_us * 1e-6);
            assert!((r - 1.0).abs() < 0.01, "{t} {size}: ratio {r}");
        }
    }

    /// The bar for the held-out table (its points fitted to nothing): every point within
    /// 1.5x of the measurement and the median ratio within 25 % — figures of the model, not of
    /// this machine.
    #[test]
    fn the_held_out_table_is_met() {
        let r = model_report();
        let mut ratios = r.ratios(true);
        assert_eq!(ratios.len(), 28);
        for p in r.points.iter().filter(|p| p.held_out) {
            let x = p.ratio().unwrap();
            assert!((1.0 / 1.5..=1.5).contains(&x), "{} B: ratio {x} ({:?})", p.point.bytes, p.algorithm);
        }
        ratios.sort_by(f64::total_cmp);
        let median = (ratios[13] + ratios[14]) / 2.0;
        assert!((0.75..=1.25).contains(&median), "median ratio {median}");
        // Over instances the flat ring is modelled with the hierarchy beside it.
        assert!(r.points.iter().filter(|p| p.held_out && p.point.bytes >= 256).all(|p| p.alternative.is_some()));
    }

    #[test]
    fn the_hierarchy_claim_is_modelled_and_the_others_say_why_not() {
        let r = model_report();
        assert_eq!(r.claims.len(), CLAIMS.len());
        let modelled: Vec<&ClaimCheck> = r.claims.iter().filter(|c| c.model_change_percent.is_some()).collect();
        assert_eq!(modelled.len(), 1);
        let x = modelled[0].model_change_percent.unwrap();
        assert!((-100.0..0.0).contains(&x), "the hierarchy is faster in the model too: {x}");
        assert!(r.claims.iter().all(|c| !c.modelled.is_empty()));
    }

    #[test]
    fn every_point_is_listed_and_every_modelled_collective_has_a_figure() {
        let r = model_report();
        assert_eq!(r.points.len(), POINTS.len());
        for p in &r.points {
            let modelled = Collective::from_name(p.point.collective).is_some();
            assert_eq!(p.model_us.is_ok(), modelled, "{:?}: {:?}", p.point, p.model_us);
            if let Ok(us) = p.model_us {
                assert!(us.is_finite() && us > 0.0, "{:?}", p.point);
            }
        }
        assert_eq!(r.points.iter().filter(|p| p.held_out).count(), 28);
        // The documented algorithm is the one modelled.
        let named = r.points.iter().find(|p| p.point.algorithm == Some("kangaring")).unwrap();
        assert_eq!(named.algorithm.as_deref(), Some("kangaring"));
    }
}
