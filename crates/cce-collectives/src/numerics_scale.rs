//! `cce report numerics --max-ranks N` (N up to 4096): the error against the rank count for
//! several reduction orders — the flat ring, flat RDH, and hierarchies — each with a law fitted
//! to it (MODEL, docs/MODEL.md H6).
//!
//! Every point is one all-reduce of the report's inputs ([`crate::numerics_report::inputs`]) run
//! through the engine and measured as the report measures ([`crate::numerics_report::Measured`], with
//! the error in ULPs and `wrong` besides). R runs over the powers of two from 4 to N:
//! - `ring` and `rdh` over all R ranks, up to [`FLAT_MAX_RANKS`]: a flat schedule has 2(R − 1)
//!   steps or work items per rank, 8 million in all at 2048 ranks — past it the points are
//!   listed as skipped, with the reason;
//! - `hier(ring/ring)` and `hier(kangaring/rdh)` over nodes of Y = min(32, R/2) ranks (a Trn1
//!   node's 32 NeuronCores once R reaches 64), X = R/Y nodes.
//!
//! A point whose memory the closed-form estimate ([`collective::estimate`]) puts over the
//! budget is skipped too, with the reason. Each configuration is checked, run and dropped in
//! turn, so the report holds one all-reduce at a time.
//!
//! ## The fitted law
//! Per algorithm and series, a least-squares line through (ln R, ln error) over the points with
//! R ≥ 8: error ≈ a · R^b ([`Fit`]). The bound each order implies is its number of roundings
//! per element on the way to the result: R − 1 for the ring, log2 R for RDH, (Y − 1) + (X − 1)
//! for hier(ring/ring), about Y/2 + log2 X for hier(kangaring/rdh) ([`Curve::roundings`]).

use crate::collective::{self, Algo, Config, Hier, Inter};
use crate::numerics_report::{self as nr, Measured, Params, Series};

/// The largest R a flat order runs at in the report.
pub const FLAT_MAX_RANKS: usize = 1024;
/// The largest `--max-ranks`.
pub const MAX_RANKS: usize = 4096;
/// Ranks per node of the report's hierarchies, once R reaches twice it (a Trn1 node).
pub const NODE_RANKS: usize = 32;

/// A reduction order of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The flat ring.
    Ring,
    /// Flat recursive halving and doubling.
    Rdh,
    /// A hierarchy.
    Hier(Hier),
}

impl Order {
    /// The report's orders.
    pub const ALL: [Order; 4] = [
        Order::Ring,
        Order::Rdh,
        Order::Hier(Hier { intra: Algo::Ring, inter: Inter::Ring }),
        Order::Hier(Hier { intra: Algo::KangaRing, inter: Inter::Rdh }),
    ];

    /// Its name: `ring`, `rdh`, `hier(intra/inter)`.
    pub fn label(self) -> String {
        match self {
            Order::Ring => "ring".into(),
            Order::Rdh => "rdh".into(),
            Order::Hier(h) => h.label(),
        }
    }

    /// Nodes of how many ranks it runs R ranks in (1: flat).
    pub fn per_node(self, ranks: usize) -> usize {
        match self {
            Order::Hier(_) => NODE_RANKS.min(ranks / 2).max(1),
            _ => ranks,
        }
    }

    /// Roundings per element on the way to the result at R ranks (see the module).
    pub fn roundings(self, ranks: usize) -> f64 {
        let log2 = |n: usize| n.trailing_zeros() as f64;
        let y = self.per_node(ranks);
        let x = ranks / y;
        match self {
            Order::Ring => (ranks - 1) as f64,
            Order::Rdh => log2(ranks),
            Order::Hier(h) => {
                let intra = if h.intra == Algo::KangaRing { (y / 2) as f64 } else { (y - 1) as f64 };
                let inter = if h.inter == Inter::Rdh { log2(x) } else { (x - 1) as f64 };
                intra + inter
            }
        }
    }

    /// The all-reduce of `series` at `ranks` ranks, or why the report skips it.
    fn config(self, series: Series, ranks: usize, params: &Params) -> Result<Config, String> {
        let mut cfg = series.config(ranks, params.elems, params.seed);
        match self {
            Order::Ring | Order::Rdh if ranks > FLAT_MAX_RANKS => {
                return Err(format!(
                    "a flat schedule of {ranks} ranks: 2(R - 1) steps per rank; the report runs flat orders up to {FLAT_MAX_RANKS}"
                ));
            }
            Order::Ring => {}
            Order::Rdh => cfg.algo = Algo::Rdh,
            Order::Hier(h) => {
                cfg.algo = Algo::Hier;
                cfg.hier = h;
                cfg.model.ranks_per_node = self.per_node(ranks);
            }
        }
        let need = collective::estimate(&cfg).map_err(|e| e.to_string())?;
        if need.total() > cfg.budget {
            return Err(format!("needs at least {} bytes, over the budget of {}", need.total(), cfg.budget));
        }
        Ok(cfg)
    }
}

/// error ≈ `coefficient` · R^`exponent`, fitted by least squares in log-log.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fit {
    /// b.
    pub exponent: f64,
    /// a.
    pub coefficient: f64,
    /// Points it was fitted to.
    pub points: usize,
}

/// The least-squares fit of `points` (R, error) with R ≥ 8 and error > 0; `None` below two.
pub fn fit(points: &[(usize, f64)]) -> Option<Fit> {
    let xy: Vec<(f64, f64)> =
        points.iter().filter(|&&(r, e)| r >= 8 && e > 0.0).map(|&(r, e)| ((r as f64).ln(), e.ln())).collect();
    let n = xy.len() as f64;
    if xy.len() < 2 {
        return None;
    }
    let (sx, sy) = xy.iter().fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = xy.iter().map(|&(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = xy.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    let b = sxy / sxx;
    Some(Fit { exponent: b, coefficient: (my - b * mx).exp(), points: xy.len() })
}

/// One order's curve: its points, the points it skipped and why, and each series' fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The order.
    pub order: Order,
    /// (R, measured per series in [`Series::ALL`] order), R ascending.
    pub points: Vec<(usize, [Measured; 3])>,
    /// (R, why not run).
    pub skipped: Vec<(usize, String)>,
    /// Per series in [`Series::ALL`] order: the fitted law of the mean error.
    pub fits: [Option<Fit>; 3],
}

impl Curve {
    /// Roundings per element at each point's R ([`Order::roundings`]).
    pub fn roundings(&self) -> Vec<(usize, f64)> {
        self.points.iter().map(|&(r, _)| (r, self.order.roundings(r))).collect()
    }
}

/// The rank counts of a report up to `max_ranks`: the powers of two from 4.
pub fn rank_counts(max_ranks: usize) -> Vec<usize> {
    (2..=max_ranks.trailing_zeros()).map(|k| 1usize << k).collect()
}

/// Refuses a `max_ranks` the report cannot run: a power of two, 64..=[`MAX_RANKS`], and (for
/// the hierarchies, which cut every rank's elements into R chunks) no more than the elements
/// per rank.
pub fn check(params: &Params) -> Result<(), String> {
    let n = params.max_ranks;
    if !(64..=MAX_RANKS).contains(&n) || !n.is_power_of_two() {
        return Err(format!("`max-ranks` {n}: a power of two from 64 to {MAX_RANKS}"));
    }
    if params.elems < n as u64 {
        return Err(format!(
            "`max-ranks` {n}: the hierarchies cut every rank's elements into R chunks, so `elems` must be at least {n}, not {}",
            params.elems
        ));
    }
    Ok(())
}

/// How many all-reduces [`run`] runs: its `progress` calls (a configuration an order cannot
/// make ends that R's series, as in [`run`]).
pub fn all_reduces(params: &Params) -> usize {
    let mut n = 0;
    for order in Order::ALL {
        'ranks: for ranks in rank_counts(params.max_ranks) {
            for s in Series::ALL {
                if order.config(s, ranks, params).is_err() {
                    continue 'ranks;
                }
                n += 1;
            }
        }
    }
    n
}

/// Every order's curve; `progress(order, R, series)` before each all-reduce.
pub fn run(
    params: &Params,
    progress: &mut dyn FnMut(&str, usize, Series),
) -> Result<Vec<Curve>, collective::CollectiveError> {
    let mut curves = Vec::new();
    for order in Order::ALL {
        let mut curve = Curve { order, points: Vec::new(), skipped: Vec::new(), fits: [None; 3] };
        'ranks: for ranks in rank_counts(params.max_ranks) {
            let mut measured = [Measured::default(); 3];
            for (slot, s) in measured.iter_mut().zip(Series::ALL) {
                let cfg = match order.config(s, ranks, params) {
                    Ok(cfg) => cfg,
                    Err(why) => {
                        curve.skipped.push((ranks, why));
                        continue 'ranks;
                    }
                };
                progress(&order.label(), ranks, s);
                let checked = collective::check(&cfg)?;
                *slot = nr::measure_run(&checked, params)?;
            }
            curve.points.push((ranks, measured));
        }
        for (i, f) in curve.fits.iter_mut().enumerate() {
            let pts: Vec<(usize, f64)> = curve.points.iter().map(|(r, m)| (*r, m[i].mean_rel)).collect();
            *f = fit(&pts);
        }
        curves.push(curve);
    }
    Ok(curves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_power_law() {
        let pts: Vec<(usize, f64)> = [8usize, 16, 32, 64].iter().map(|&r| (r, 3e-4 * (r as f64).powf(0.5))).collect();
        let f = fit(&pts).unwrap();
        assert!((f.exponent - 0.5).abs() < 1e-9 && (f.coefficient - 3e-4).abs() < 1e-12, "{f:?}");
        assert_eq!(fit(&pts[..1]), None);
    }

    #[test]
    fn the_orders_count_their_roundings() {
        assert_eq!(Order::Ring.roundings(64), 63.0);
        assert_eq!(Order::Rdh.roundings(64), 6.0);
        // 4096 ranks: 128 nodes of 32.
        assert_eq!(Order::ALL[2].roundings(4096), 31.0 + 127.0);
        assert_eq!(Order::ALL[3].roundings(4096), 16.0 + 7.0);
        assert_eq!(rank_counts(64), vec![4, 8, 16, 32, 64]);
    }
}
