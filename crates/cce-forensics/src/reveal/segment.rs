//! Which elements share a tree: the first run's pair measurements cut into classes.
//!
//! Run 1 gives element `e` the pair `pairs[e mod P]` (P = R(R−1)/2), so any P consecutive
//! elements measure every pair once. A window of P elements that lies inside one class
//! rebuilds that class's tree ([`AddTree::from_pairs`]); windows are tried on a grid (every
//! P/8 elements) and, where no tree found so far explains a window's length from an element,
//! every window that holds the element. An element is *compatible* with a
//! tree when its measurement is that tree's `d` for its pair. The classes are the fewest runs
//! of elements that one tree explains each ([`Cover`]: from each element on, the tree whose
//! compatible run reaches furthest — the greedy cover, which is optimal); where two classes
//! meet, the elements that both trees explain are the *zone* whose owner run 2 decides with a
//! pair that tells the two trees apart.
//!
//! ## Guarantees
//! - Every element of a [`Segment`] is compatible with its tree; an element no tree explains
//!   ends the cover with [`Cover::Unexplained`].
//! - A zone holds exactly the elements before a boundary that the next class's tree explains
//!   too, back to the first that it does not: the true boundary lies in the zone or at its end.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::tree::{AddTree, pairs};

/// A tree found in a window, with its `d` for every pair.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The tree.
    pub tree: AddTree,
    /// Its `d` for `pairs(R)[k]`.
    pub d: Vec<u8>,
}

/// A run of elements one candidate explains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First element.
    pub first: usize,
    /// Last element (inclusive).
    pub last: usize,
    /// The candidate (index).
    pub cand: usize,
    /// Elements `zone.0..=zone.1` at its end that the next segment's tree explains too.
    pub zone: Option<(usize, usize)>,
}

/// The cover of the elements, or the first element nothing explains.
#[derive(Clone, Debug)]
pub enum Cover {
    /// Every element in a segment.
    Covered(Vec<Segment>),
    /// No window's tree explains this element.
    Unexplained(usize),
}

/// The candidates and the cover of one output's measurements `d` (`None`: an element whose
/// output was no count).
pub struct Classes {
    /// The trees found.
    pub cands: Vec<Candidate>,
    /// The cover.
    pub cover: Cover,
}

/// The candidates of the windows and the cover of `d` (module docs).
pub fn classes(ranks: u32, d: &[Option<u8>]) -> Classes {
    let p = pairs(ranks).len();
    let n = d.len();
    let mut seen: BTreeMap<Vec<u8>, Option<usize>> = BTreeMap::new();
    let mut cands: Vec<Candidate> = Vec::new();
    let mut try_window = |s: usize, cands: &mut Vec<Candidate>| -> Option<usize> {
        if s + p > n {
            return None;
        }
        let mut m = alloc::vec![0u8; p];
        for e in s..s + p {
            m[e % p] = d[e]?;
        }
        if let Some(&k) = seen.get(&m) {
            return k;
        }
        let k = AddTree::from_pairs(ranks, &m).map(|tree| {
            cands.push(Candidate { tree, d: m.clone() });
            cands.len() - 1
        });
        seen.insert(m, k);
        k
    };
    let step = (p / 8).max(1);
    let mut s = 0;
    while s + p <= n {
        try_window(s, &mut cands);
        s += step;
    }
    if n >= p {
        try_window(n - p, &mut cands);
    }
    let compatible = |cands: &[Candidate], e: usize, k: usize| d[e] == Some(cands[k].d[e % p]);
    let mut segs: Vec<Segment> = Vec::new();
    let mut at = 0;
    while at < n {
        let reach = |cands: &[Candidate], k: usize| (at..n).find(|&e| !compatible(cands, e, k)).unwrap_or(n);
        let best_of = |cands: &[Candidate]| {
            (0..cands.len()).filter(|&k| compatible(cands, at, k)).map(|k| (reach(cands, k), k)).max()
        };
        let mut best = best_of(&cands);
        if best.is_none_or(|(end, _)| end - at < p) {
            // Nothing here reaches a window's length: a class the grid did not meet. The windows
            // that hold `at` are tried, the one starting at `at` first, until a tree reaches a
            // window's length past `at`.
            for s in (at.saturating_sub(p - 1)..=at).rev() {
                let Some(k) = try_window(s, &mut cands) else { continue };
                if compatible(&cands, at, k) {
                    let r = reach(&cands, k);
                    if best.is_none_or(|(end, _)| r > end) {
                        best = Some((r, k));
                    }
                    if r - at >= p {
                        break;
                    }
                }
            }
        }
        let Some((end, k)) = best else { return Classes { cands, cover: Cover::Unexplained(at) } };
        segs.push(Segment { first: at, last: end - 1, cand: k, zone: None });
        at = end;
    }
    for x in 1..segs.len() {
        let (prev, next) = (&segs[x - 1], &segs[x]);
        let mut z = prev.last + 1;
        while z > prev.first && compatible(&cands, z - 1, next.cand) {
            z -= 1;
        }
        if z <= prev.last {
            segs[x - 1].zone = Some((z, prev.last));
        }
    }
    Classes { cands, cover: Cover::Covered(segs) }
}

/// A pair index at which the two candidates' trees differ.
pub fn separating_pair(a: &Candidate, b: &Candidate) -> Option<usize> {
    a.d.iter().zip(&b.d).position(|(x, y)| x != y)
}
