//! The answer: candidates ranked by the elements they explain, the map of element ranges to the
//! candidate that explains them, the elements nothing explains, and how many elements tell the
//! best from the next ([`Report`]).
//!
//! A candidate *explains* an element when it matches it bit for bit (RNE), or, with stochastic
//! rounding, when it is consistent with it (a candidate whose order is not known yet counts its
//! bit-exact matches, which are always consistent).
//!
//! ## The map
//! From the first explained element on, each range takes the candidate that explains the
//! longest run of explained elements from its first (unexplained and non-finite elements inside
//! a run neither end nor count for it); ties go to a candidate whose order is known, then to
//! the better ranked. A range ends at its candidate's last explained element before the first
//! explained element it does not explain.

use alloc::string::String;
use alloc::vec::Vec;

use cce_numerics::NumType;
use cce_numerics::order::Order;

use crate::identify::Candidate;
use crate::problem::{Listed, Problem, bit};
use crate::rule::Rounding;

/// One candidate's evidence, as [`crate::identify::Identification`] scored it.
pub(crate) struct Evidence {
    pub(crate) candidate: Candidate,
    pub(crate) matched: Vec<u64>,
    pub(crate) consistent: Option<Vec<u64>>,
    pub(crate) undecided: u64,
}

impl Evidence {
    /// The elements it explains.
    fn explains(&self) -> &[u64] {
        self.consistent.as_deref().unwrap_or(&self.matched)
    }
}

/// A candidate in the ranking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked {
    /// Its name.
    pub name: String,
    /// cce's `algo` name, for one of cce's algorithms.
    pub algo: Option<String>,
    /// A user's schedule file.
    pub file: Option<String>,
    /// The accumulate dtypes it stands for.
    pub accum: Vec<NumType>,
    /// Candidates merged into it.
    pub aliases: Vec<String>,
    /// The order of element 0 (chunk 0's); `None` until the element story gives cce's
    /// algorithms theirs.
    pub expr: Option<Order>,
    /// Elements matched bit for bit.
    pub matched: u64,
    /// Elements compared (those with finite inputs).
    pub total: u64,
    /// With stochastic rounding, elements it is consistent with (`None`: RNE, or an order not
    /// known yet).
    pub consistent: Option<u64>,
    /// With stochastic rounding, elements whose reachable set grew past the bound.
    pub undecided: Option<u64>,
}

/// One range of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapRange {
    /// First element.
    pub first: u64,
    /// Last element (inclusive).
    pub last: u64,
    /// The candidate (an index into [`Report::candidates`]).
    pub candidate: usize,
    /// Its order at `first`, when known.
    pub expr: Option<Order>,
    /// Elements of the range it explains.
    pub explained: u64,
    /// Elements of the range nothing explains.
    pub unexplained: u64,
}

/// The answer to "which order made this output?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Elements per rank.
    pub elements: u64,
    /// Ranks.
    pub ranks: usize,
    /// The buffer dtype.
    pub dtype: NumType,
    /// RNE (bit for bit) or stochastic rounding (consistency).
    pub rounding: Rounding,
    /// The observed ranks.
    pub observed_ranks: Vec<usize>,
    /// Elements compared (finite inputs).
    pub total: u64,
    /// Every candidate, best first.
    pub candidates: Vec<Ranked>,
    /// The best candidate (index 0), when it explains anything.
    pub best: Option<usize>,
    /// Element ranges → the candidate that explains them.
    pub map: Vec<MapRange>,
    /// The elements nothing explains.
    pub unexplained: Listed,
    /// Elements that exactly one of the best and the next explains; `None` with one candidate.
    pub separating: Option<u64>,
    /// Elements with a NaN or an infinity among their inputs (in no count).
    pub nonfinite: Listed,
    /// Elements where the observed ranks disagree with each other.
    pub ranks_disagree: Listed,
    /// Element-candidate pairs checked (elements × candidates).
    pub element_candidates: u64,
}

fn count(bits: &[u64]) -> u64 {
    bits.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// The report of scored candidates.
pub(crate) fn build(problem: &Problem<'_>, rounding: Rounding, mut ev: Vec<Evidence>) -> Report {
    let total = count(&problem.finite);
    // Best first: explained, then matched, then a known order, then as given.
    let mut idx: Vec<usize> = (0..ev.len()).collect();
    idx.sort_by_key(|&k| {
        let e = &ev[k];
        (
            core::cmp::Reverse(count(e.explains())),
            core::cmp::Reverse(count(&e.matched)),
            e.candidate.order_of.is_none(),
            k,
        )
    });
    let mut slots: Vec<Option<Evidence>> = ev.drain(..).map(Some).collect();
    let ev: Vec<Evidence> = idx.iter().filter_map(|&k| slots[k].take()).collect();
    let candidates: Vec<Ranked> = ev.iter().map(|e| ranked(e, total, rounding)).collect();
    let mut explained = alloc::vec![0u64; problem.finite.len()];
    for e in &ev {
        for (w, x) in explained.iter_mut().zip(e.explains()) {
            *w |= x;
        }
    }
    let unexplained_bits: Vec<u64> = problem.finite.iter().zip(&explained).map(|(f, x)| f & !x).collect();
    let separating = (ev.len() >= 2).then(|| {
        let (a, b) = (ev[0].explains(), ev[1].explains());
        a.iter().zip(b).map(|(x, y)| u64::from((x ^ y).count_ones())).sum()
    });
    let best = candidates.first().and_then(|c| (c.consistent.unwrap_or(c.matched) > 0).then_some(0));
    let map = map(&ev, &explained, &unexplained_bits, problem.elems);
    Report {
        elements: problem.elems as u64,
        ranks: problem.ranks(),
        dtype: problem.dtype,
        rounding,
        observed_ranks: problem.observed_ranks(),
        total,
        best,
        map,
        unexplained: Listed::of(&unexplained_bits),
        separating,
        nonfinite: problem.nonfinite(),
        ranks_disagree: problem.ranks_disagree(),
        element_candidates: problem.elems as u64 * candidates.len() as u64,
        candidates,
    }
}

fn ranked(e: &Evidence, total: u64, rounding: Rounding) -> Ranked {
    let c = &e.candidate;
    let sr = rounding == Rounding::Sr;
    Ranked {
        name: c.name.clone(),
        algo: c.algo.clone(),
        file: c.file.clone(),
        accum: c.accum.clone(),
        aliases: c.aliases.clone(),
        expr: c.order_of.as_ref().map(|o| o(0)),
        matched: count(&e.matched),
        total,
        consistent: e.consistent.as_deref().map(count),
        undecided: (sr && e.consistent.is_some()).then_some(e.undecided),
    }
}

/// The first element at or after `from` set in `bits`, or `n`.
fn next_set(bits: &[u64], from: usize, n: usize) -> usize {
    let mut k = from / 64;
    if k >= bits.len() {
        return n;
    }
    let mut w = bits[k] & (u64::MAX << (from % 64));
    loop {
        if w != 0 {
            return (k * 64 + w.trailing_zeros() as usize).min(n);
        }
        k += 1;
        if k >= bits.len() {
            return n;
        }
        w = bits[k];
    }
}

/// The map (module docs).
fn map(ev: &[Evidence], explained: &[u64], unexplained: &[u64], n: usize) -> Vec<MapRange> {
    let mut out = Vec::new();
    let mut i = next_set(explained, 0, n);
    // Per candidate: explained elements it does not explain.
    let misses: Vec<Vec<u64>> =
        ev.iter().map(|e| explained.iter().zip(e.explains()).map(|(x, m)| x & !m).collect()).collect();
    while i < n {
        let mut pick: Option<(usize, usize)> = None;
        for (k, e) in ev.iter().enumerate() {
            if !bit(e.explains(), i) {
                continue;
            }
            let end = next_set(&misses[k], i, n);
            let better = match pick {
                None => true,
                Some((best_end, b)) => {
                    end > best_end
                        || (end == best_end && ev[b].candidate.order_of.is_none() && e.candidate.order_of.is_some())
                }
            };
            if better {
                pick = Some((end, k));
            }
        }
        let Some((end, k)) = pick else { break };
        let mut last = last_set(ev[k].explains(), i, end);
        // One order per range: stop before the candidate's order changes.
        let c = &ev[k].candidate;
        if let Some(&b) = c.order_breaks.iter().find(|&&b| b as usize > i && b as usize <= last) {
            last = last_set(ev[k].explains(), i, b as usize);
        }
        let range_count = |bits: &[u64]| (i..=last).filter(|&j| bit(bits, j)).count() as u64;
        out.push(MapRange {
            first: i as u64,
            last: last as u64,
            candidate: k,
            expr: c.order_of.as_ref().map(|o| o(i as u64)),
            explained: range_count(ev[k].explains()),
            unexplained: range_count(unexplained),
        });
        i = next_set(explained, last + 1, n);
    }
    out
}

/// The last element in `from..to` set in `bits` (`from` is set).
fn last_set(bits: &[u64], from: usize, to: usize) -> usize {
    (from..to).rev().find(|&j| bit(bits, j)).unwrap_or(from)
}
