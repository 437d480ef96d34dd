//! The answer: candidates ranked by the elements they explain, the map of element ranges to the
//! candidate that explains them, the elements nothing explains, and how many elements tell the
//! best from the next ([`Report`]).
//!
//! A candidate *explains* an element when it matches it bit for bit (RNE), or, with stochastic
//! rounding, when it is consistent with it (a candidate whose order is not known yet counts its
//! bit-exact matches, which are always consistent).
//!
//! ## The map: the fewest ranges that explain the output
//! Orders come per chunk, so the map assigns every element to one candidate by a dynamic
//! programme over the elements: an element its candidate explains costs 0, one that
//! only other candidates explain (a **suspect**) costs 1, and every change of candidate from
//! one element to the next costs [`SWITCH`] (3). Elements no candidate explains, and
//! non-finite ones, cost 0 under every candidate. The cheapest assignment is taken; among
//! equal ones, each range runs as far as its candidate explains before the next begins, and a
//! new range goes to the better ranked candidate (a known order first). So a one-element detour to another order never pays (two switches cost 6, the
//! suspect 1), and the map changes order only where a run of elements needs it. A range is
//! then cut where its candidate's own order changes (a ring's chunks), so each range has one
//! order.
//!
//! ## The verdict
//! - `unexplained`: no candidate explains any element, or (not fragmented) some element is a
//!   suspect or unexplained: no candidate, nor one per range, made every element.
//! - `fragmented`: the map needs ranges (changes of candidate, not a candidate's own chunks)
//!   far shorter than any chunk: with `s` ranges over `t` compared elements, `4·t < s·⌊N/R⌋`
//!   (their mean length under a quarter of the shortest chunk of a ring over the R ranks).
//!   Real orders change per chunk; per-element switching between listed orders is an order on
//!   no list.
//! - `explained`: otherwise — every compared element is explained by its range's candidate.
//!
//! Only with `explained` is the best candidate the answer ([`Report::answer`]).

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
    /// Elements of the range that only other candidates explain.
    pub suspects: u64,
}

/// What the map says about the output ([`crate::report`] module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every compared element is explained by its range's candidate, in chunk-long ranges.
    Explained,
    /// The ranges are far shorter than any chunk: an order on no list.
    Fragmented,
    /// Some elements fit no range's candidate (or none fits any).
    Unexplained,
}

impl Verdict {
    /// `explained`, `fragmented` or `unexplained`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Explained => "explained",
            Verdict::Fragmented => "fragmented",
            Verdict::Unexplained => "unexplained",
        }
    }
}

/// The cost of a change of candidate between two elements, in suspects.
pub const SWITCH: u32 = 3;

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
    /// Changes of candidate along the map, plus one (a candidate's own chunks not counted).
    pub segments: u64,
    /// The elements nothing explains.
    pub unexplained: Listed,
    /// The elements that only a candidate other than their range's explains.
    pub suspects: Listed,
    /// Explained, fragmented or unexplained.
    pub verdict: Verdict,
    /// Why, in a sentence.
    pub verdict_reason: String,
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
    let (map, segments, suspect_bits) = map(&ev, &explained, &unexplained_bits, problem.elems);
    let unexplained = Listed::of(&unexplained_bits);
    let suspects = Listed::of(&suspect_bits);
    let shape = Shape { total, segments, elems: problem.elems as u64, ranks: problem.ranks() as u64 };
    let (verdict, verdict_reason) = verdict(&shape, &unexplained, &suspects, best.map(|b| &candidates[b]));
    Report {
        elements: problem.elems as u64,
        ranks: problem.ranks(),
        dtype: problem.dtype,
        rounding,
        observed_ranks: problem.observed_ranks(),
        total,
        best,
        map,
        segments,
        unexplained,
        suspects,
        verdict,
        verdict_reason,
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

impl Report {
    /// The answer: the best candidate when the verdict is `explained`, else `None` (the best
    /// is then only the top of the ranking).
    pub fn answer(&self) -> Option<usize> {
        if self.verdict == Verdict::Explained { self.best } else { None }
    }
}

/// What the verdict weighs.
struct Shape {
    total: u64,
    segments: u64,
    elems: u64,
    ranks: u64,
}

/// The verdict and its reason ([`crate::report`] module docs).
fn verdict(s: &Shape, unexplained: &Listed, suspects: &Listed, best: Option<&Ranked>) -> (Verdict, String) {
    const REVEAL: &str = "cce reveal recovers an order that is on no list";
    let Some(best) = best else {
        return (Verdict::Unexplained, alloc::format!("no candidate explains any element; {REVEAL}"));
    };
    let chunk = s.elems / s.ranks.max(1);
    let bad = unexplained.count + suspects.count;
    if s.segments >= 2 && 4 * s.total < s.segments * chunk {
        let mean = s.total as f64 / s.segments as f64;
        return (
            Verdict::Fragmented,
            alloc::format!(
                "the map switches candidate {} times: ranges of {mean:.1} elements on average, far shorter than a ring's {chunk}-element chunks at {} ranks ({} suspects, {} unexplained): no listed order made this output; {REVEAL}",
                s.segments - 1,
                s.ranks,
                suspects.count,
                unexplained.count
            ),
        );
    }
    if bad > 0 {
        return (
            Verdict::Unexplained,
            alloc::format!(
                "{} elements no candidate explains and {} suspects (only another order explains them inside their range): the closest, {}, is not the order (or those elements were changed); {REVEAL}",
                unexplained.count,
                suspects.count,
                best.name
            ),
        );
    }
    let how = if s.segments == 1 {
        alloc::format!("{} explains every compared element", best.name)
    } else {
        alloc::format!("{} ranges, each one candidate's, explain every compared element", s.segments)
    };
    (Verdict::Explained, how)
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

/// The map (module docs): its ranges, the number of candidate changes plus one, and the
/// suspects.
fn map(ev: &[Evidence], explained: &[u64], unexplained: &[u64], n: usize) -> (Vec<MapRange>, u64, Vec<u64>) {
    let mut suspects = alloc::vec![0u64; explained.len()];
    if next_set(explained, 0, n) >= n || ev.is_empty() {
        return (Vec::new(), 0, suspects);
    }
    let assigned = assign(ev, explained, n);
    let mut out = Vec::new();
    for &(first, last, k) in &assigned {
        let c = &ev[k].candidate;
        let mut cuts: Vec<usize> = alloc::vec![first];
        cuts.extend(c.order_breaks.iter().map(|&b| b as usize).filter(|&b| b > first && b <= last));
        cuts.push(last + 1);
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1] - 1);
            let mut range = MapRange {
                first: a as u64,
                last: b as u64,
                candidate: k,
                expr: c.order_of.as_ref().map(|o| o(a as u64)),
                explained: 0,
                unexplained: 0,
                suspects: 0,
            };
            for j in a..=b {
                if bit(ev[k].explains(), j) {
                    range.explained += 1;
                } else if bit(unexplained, j) {
                    range.unexplained += 1;
                } else if bit(explained, j) {
                    range.suspects += 1;
                    suspects[j / 64] |= 1 << (j % 64);
                }
            }
            out.push(range);
        }
    }
    (out, assigned.len() as u64, suspects)
}

/// The dynamic programme of the module docs: `(first, last, candidate)` ranges covering
/// `0..n`, the fewest switches and suspects. An element whose cost is the same under every
/// candidate (nothing explains it, or everything does) is skipped: a switch there costs what
/// it costs at the next element that tells candidates apart.
fn assign(ev: &[Evidence], explained: &[u64], n: usize) -> Vec<(usize, usize, usize)> {
    let k = ev.len();
    let words = k.div_ceil(64);
    // Per element: which candidates switched in there; and the best candidate before it.
    let mut switched = alloc::vec![0u64; n * words];
    let mut best_before = alloc::vec![0u32; n];
    let mut f = alloc::vec![0u32; k];
    let mut ew = alloc::vec![0u64; k];
    let mut all = 0u64;
    for (w, &live) in explained.iter().enumerate() {
        if live == 0 {
            continue;
        }
        let mut everyone = u64::MAX;
        for (c, e) in ev.iter().enumerate() {
            ew[c] = e.explains()[w];
            everyone &= ew[c];
        }
        let mut todo = live & !everyone;
        while todo != 0 {
            let b = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let j = w * 64 + b;
            if all > 0 {
                let (bc, best) = argmin(&f);
                best_before[j] = bc as u32;
                let sw = best.saturating_add(SWITCH);
                for (c, fc) in f.iter_mut().enumerate() {
                    // A tie switches here, not earlier: the earlier range runs as far as it can.
                    if sw <= *fc {
                        *fc = sw;
                        switched[j * words + c / 64] |= 1 << (c % 64);
                    }
                }
            }
            for (fc, e) in f.iter_mut().zip(&ew) {
                *fc += (((e >> b) & 1) ^ 1) as u32;
            }
            all += 1;
        }
    }
    let mut c = argmin(&f).0;
    let mut last = n - 1;
    let mut out = Vec::new();
    for j in (1..n).rev() {
        if switched[j * words + c / 64] >> (c % 64) & 1 == 1 {
            out.push((j, last, c));
            last = j - 1;
            c = best_before[j] as usize;
        }
    }
    out.push((0, last, c));
    out.reverse();
    out
}

/// The first index of the least value, and the value.
fn argmin(f: &[u32]) -> (usize, u32) {
    let mut best = (0, u32::MAX);
    for (i, &x) in f.iter().enumerate() {
        if x < best.1 {
            best = (i, x);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(name: &str) -> Ranked {
        Ranked {
            name: name.into(),
            algo: None,
            file: None,
            accum: Vec::new(),
            aliases: Vec::new(),
            expr: None,
            matched: 1,
            total: 1,
            consistent: None,
            undecided: None,
        }
    }

    #[test]
    fn far_shorter_means_under_a_quarter_of_a_chunk_on_average() {
        // 1000 elements over 4 ranks: chunks of 250; ranges average under 62.5 from s = 17.
        let none = Listed::default();
        let shape = |segments| Shape { total: 1000, segments, elems: 1000, ranks: 4 };
        let b = ranked("x");
        assert_eq!(verdict(&shape(16), &none, &none, Some(&b)).0, Verdict::Explained);
        assert_eq!(verdict(&shape(17), &none, &none, Some(&b)).0, Verdict::Fragmented);
        let (v, why) = verdict(&shape(17), &none, &none, Some(&b));
        assert!(v == Verdict::Fragmented && why.contains("cce reveal"), "{why}");
        // One bad element and chunk-long ranges: unexplained, the closest named.
        let one = Listed { count: 1, first: alloc::vec![7] };
        let (v, why) = verdict(&shape(1), &none, &one, Some(&b));
        assert!(v == Verdict::Unexplained && why.contains("the closest, x,"), "{why}");
        assert_eq!(verdict(&shape(0), &none, &none, None).0, Verdict::Unexplained);
    }
}
