//! Classes too short to measure every pair: the order found among listed candidates instead.
//!
//! When run 1's elements cannot be cut into classes of R(R−1)/2 elements (an all-reduce of few
//! elements over many ranks), every element keeps the set of listed orders its outputs allow:
//! the families ([`Family::all`], accumulated in fp32 or the buffer dtype, merged) and the
//! orders the caller adds (cce's algorithms' chunk orders). Each further run gives every
//! element the mask that splits its set most evenly (the largest part smallest), and the sets
//! shrink to what the outputs allow. Run 1 and at most ⌈log₂R⌉ + 1 such runs leave every
//! element one order (or orders no mask tells apart), which the check run then decides.
//!
//! ## Guarantees
//! - An element's set only loses orders whose predicted bits (cce-numerics' reduce of the
//!   order over the very mask) differ from the observed bits; an element whose set empties is
//!   named, and the reveal fails: its order is on no list and its class is too short.
//! - An order is called revealed for an element only after the check run's random inputs
//!   leave it alone in the set.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use cce_numerics::NumType;

use super::mask::{Query, Regime, Scales};
use crate::eval::{check_rule, rne_block};
use crate::problem::element;
use crate::rule::{Family, Rounding, Rule, evaluated, merge_key};

/// The listed orders and what every mask of the pool gives for each.
pub(super) struct Hypotheses {
    /// The candidates: a name and a rule.
    pub(super) rules: Vec<(String, Rule)>,
    /// The masks a run may give an element: every pair, absorbed; and where the dtype has one,
    /// every pair at the buffer scale.
    pub(super) pool: Vec<Query>,
    /// `pred[k][q]`: the bits rule `k` gives for mask `q`.
    pred: Vec<Vec<u32>>,
    /// Per element: the candidates its outputs allow so far.
    pub(super) alive: Vec<Vec<u16>>,
    /// Per element: the mask of the pending run (an index into `pool`), if it asks one.
    pub(super) asked: Vec<Option<usize>>,
}

/// The families at `ranks` ranks accumulated in fp32 or `dtype`, merged, then `extra` (each
/// checked evaluable and not already listed).
fn candidates(ranks: u32, dtype: NumType, extra: &[(String, Rule)]) -> Vec<(String, Rule)> {
    let mut out: Vec<(String, Rule)> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let families = Family::all(ranks)
        .into_iter()
        .flat_map(|f| [NumType::F32, dtype].map(|accum| (f.name(ranks), Rule { order: f.order(ranks), accum })));
    for (name, rule) in families.chain(extra.iter().cloned()) {
        if check_rule(&rule, ranks as usize, dtype).is_err() {
            continue;
        }
        let key = merge_key(&rule, dtype, Rounding::Rne);
        if !keys.contains(&key) {
            keys.push(key);
            out.push((name, rule));
        }
    }
    out
}

impl Hypotheses {
    /// The candidates, the pool and the predictions; `run1` is run 1's observed output
    /// (element e asked pool mask `e mod R(R−1)/2`), which makes every element's first set.
    pub(super) fn new(
        scales: &Scales,
        ranks: u32,
        dtype: NumType,
        extra: &[(String, Rule)],
        run1: &[u8],
    ) -> Result<Hypotheses, String> {
        let rules = candidates(ranks, dtype, extra);
        let pairs = super::tree::pairs(ranks);
        let mut pool: Vec<Query> = pairs.iter().map(|&(i, j)| Query::pair(i, j, ranks, Regime::Absorbed)).collect();
        if scales.has_buffer_regime() {
            pool.extend(pairs.iter().map(|&(i, j)| Query::pair(i, j, ranks, Regime::Buffer)));
        }
        let size = scales.size();
        let mut inputs = alloc::vec![alloc::vec![0u8; pool.len() * size]; ranks as usize];
        for (q, query) in pool.iter().enumerate() {
            scales.write(query, q, &mut inputs);
        }
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let mut pred = Vec::with_capacity(rules.len());
        for (_, rule) in &rules {
            let out = rne_block(&evaluated(rule, dtype, Rounding::Rne), dtype, &slices, 0, pool.len())
                .map_err(|e| alloc::format!("{e}"))?;
            pred.push((0..pool.len()).map(|q| element(&out, size, q)).collect::<Vec<u32>>());
        }
        let elems = run1.len() / size;
        let p = pairs.len();
        let alive = (0..elems)
            .map(|e| {
                let got = element(run1, size, e);
                (0..rules.len() as u16).filter(|&k| pred[k as usize][e % p] == got).collect()
            })
            .collect();
        Ok(Hypotheses { rules, pool, pred, alive, asked: Vec::new() })
    }

    /// The first element whose set is empty.
    pub(super) fn empty(&self) -> Option<usize> {
        self.alive.iter().position(Vec::is_empty)
    }

    /// Plans the next run: every element whose set some mask splits gets the mask whose
    /// largest part is smallest. `false` when no element's set can be split.
    pub(super) fn plan(&mut self) -> bool {
        let mut best_of: BTreeMap<&[u16], Option<usize>> = BTreeMap::new();
        let mut asked = alloc::vec![None; self.alive.len()];
        for (e, set) in self.alive.iter().enumerate() {
            if set.len() < 2 {
                continue;
            }
            let q = *best_of.entry(set.as_slice()).or_insert_with(|| self.split(set));
            asked[e] = q;
        }
        let any = asked.iter().any(Option::is_some);
        self.asked = asked;
        any
    }

    /// The mask that splits `set` with the smallest largest part (if any splits it).
    fn split(&self, set: &[u16]) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for q in 0..self.pool.len() {
            let mut parts: BTreeMap<u32, usize> = BTreeMap::new();
            for &k in set {
                *parts.entry(self.pred[k as usize][q]).or_default() += 1;
            }
            let largest = parts.values().copied().max().unwrap_or(0);
            if largest < set.len() && best.is_none_or(|(l, _)| largest < l) {
                best = Some((largest, q));
            }
        }
        best.map(|(_, q)| q)
    }

    /// Keeps, at every element that asked a mask, the candidates that predict its output.
    pub(super) fn observe(&mut self, out: &[u8], size: usize) {
        for (e, q) in self.asked.iter().enumerate() {
            if let Some(q) = q {
                let got = element(out, size, e);
                self.alive[e].retain(|&k| self.pred[k as usize][*q] == got);
            }
        }
        self.asked.clear();
    }
}
