//! What the digests and pairs of a pass say: which parameter separates two classes, and
//! whether each algorithm is invariant over each swept axis.

use cce_collectives::repro::Difference;

use super::run::{Class, Digests, FirstDifference, RunConfig};
use super::{Axis, ReproConfig};

/// Two classes compared: their first configurations, how their outputs differ over the
/// elements both have, and what separates them.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// The first class's first configuration.
    pub a: usize,
    /// The second class's first configuration.
    pub b: usize,
    /// The first class.
    pub class_a: usize,
    /// The second class.
    pub class_b: usize,
    /// The comparison over the first min(N, M) elements of every rank.
    pub diff: Difference,
    /// The first differing element (`None` when none differs: then the classes differ only
    /// beyond the shorter one's size).
    pub first: Option<FirstDifference>,
    /// The parameters that separate the classes: each a pair of configurations, one of each
    /// class, that differ in this parameter alone; when there is none, every parameter in
    /// which the two first configurations differ.
    pub separated_by: Vec<Separation>,
}

/// A parameter whose value differs between two configurations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Separation {
    /// The parameter.
    pub axis: Axis,
    /// Its value on the first class's side.
    pub a: String,
    /// Its value on the second class's side.
    pub b: String,
    /// Whether it is the only parameter in which those two configurations differ.
    pub alone: bool,
}

/// Whether an algorithm's outputs stay the same over one swept axis: every pair of its
/// configurations that differ in that axis alone (the rounding with its seed) is compared on
/// the elements both have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The algorithm, as asked for (`auto` is judged as itself: its choice may change).
    pub algo: String,
    /// The axis.
    pub axis: Axis,
    /// Pairs of configurations compared.
    pub pairs: u64,
    /// The first pair whose outputs differ (configuration indices), if any.
    pub witness: Option<(usize, usize)>,
}

impl Verdict {
    /// Whether no compared pair differs.
    pub fn invariant(&self) -> bool {
        self.witness.is_none()
    }
}

/// The axes two configurations differ in, a rounding's seed counted with the rounding when
/// the roundings differ.
fn differing(a: &ReproConfig, b: &ReproConfig) -> Vec<Axis> {
    let mut d = a.differing(b);
    if d.contains(&Axis::Rounding) {
        d.retain(|&x| x != Axis::Seed);
    }
    d
}

/// Every algorithm's verdict over every judged axis of `swept` that has a pair to compare.
pub(super) fn verdicts(configs: &[RunConfig], digests: &[Digests], swept: &[Axis]) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    for &axis in swept.iter().filter(|a| a.judged()) {
        for (i, x) in configs.iter().enumerate() {
            for (j, y) in configs.iter().enumerate().skip(i + 1) {
                if differing(&x.config, &y.config) != [axis] {
                    continue;
                }
                let n = x.config.elems.min(y.config.elems);
                let same = digests[i].at(n).is_some() && digests[i].at(n) == digests[j].at(n);
                let algo = x.config.value(Axis::Algo);
                let v = match out.iter_mut().position(|v| v.algo == algo && v.axis == axis) {
                    Some(k) => &mut out[k],
                    None => {
                        out.push(Verdict { algo, axis, pairs: 0, witness: None });
                        let last = out.len() - 1;
                        &mut out[last]
                    }
                };
                v.pairs += 1;
                if !same && v.witness.is_none() {
                    v.witness = Some((i, j));
                }
            }
        }
    }
    out
}

/// What separates the classes of `pair`: the parameters in which a configuration of one
/// differs from one of the other alone, or, without such a pair, every parameter in which
/// their first configurations differ.
pub(super) fn separations(configs: &[RunConfig], classes: &[Class], pair: &Pair) -> Vec<Separation> {
    let mut alone: Vec<Separation> = Vec::new();
    let members = |k: usize| classes.get(k).map_or(&[][..], |c| c.members.as_slice());
    for &x in members(pair.class_a) {
        for &y in members(pair.class_b) {
            let (cx, cy) = (&configs[x].config, &configs[y].config);
            if let [axis] = differing(cx, cy)[..] {
                let s = Separation { axis, a: cx.value(axis), b: cy.value(axis), alone: true };
                if !alone.contains(&s) {
                    alone.push(s);
                }
            }
        }
    }
    if !alone.is_empty() {
        return alone;
    }
    let (ca, cb) = (&configs[pair.a].config, &configs[pair.b].config);
    differing(ca, cb)
        .into_iter()
        .map(|axis| Separation { axis, a: ca.value(axis), b: cb.value(axis), alone: false })
        .collect()
}

/// The separation in words: `elems: 4096 vs 4104`; several that each separate alone joined
/// by `or`; parameters that differ together joined by `and`.
pub fn separation_words(s: &[Separation]) -> String {
    let one = |s: &Separation| format!("{}: {} vs {}", s.axis.name(), s.a, s.b);
    let joiner = if s.iter().all(|s| s.alone) { " or " } else { " and " };
    s.iter().map(one).collect::<Vec<_>>().join(joiner)
}

/// The first difference of `pair` told in words from its two stories: what changed between
/// the configurations, where the element moved and how its reduction changed — "from 4096 to
/// 4104 elements, element 513 moves from chunk 1 to chunk 0: its sum starts at rank 0 instead
/// of rank 1". `None` when no element differs.
pub fn story_words(pair: &Pair) -> Option<String> {
    let f = pair.first.as_ref()?;
    let (a, b) = (&f.story_a.story, &f.story_b.story);
    let change = match &pair.separated_by[..] {
        [s] if s.axis == Axis::Elems => format!("from {} to {} elements", s.a, s.b),
        [s] => format!("from {} {} to {}", s.axis.name(), s.a, s.b),
        [] => "between the two configurations".to_string(),
        many => format!("with {}", separation_words(many)),
    };
    let place = if a.chunk == b.chunk {
        format!("element {} stays in chunk {}", f.element, a.chunk)
    } else {
        format!("element {} moves from chunk {} to chunk {}", f.element, a.chunk, b.chunk)
    };
    let ranks = |l: &[u32]| l.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let how = if a.expr == b.expr {
        format!("the same order {}, rounded otherwise", a.expr)
    } else if a.leaves.first() != b.leaves.first() {
        let start = |l: &[u32]| l.first().map_or("no rank".to_string(), |r| format!("rank {r}"));
        format!("its sum starts at {} instead of {}", start(&b.leaves), start(&a.leaves))
    } else if a.leaves != b.leaves {
        format!("its ranks enter as {} instead of {}", ranks(&b.leaves), ranks(&a.leaves))
    } else {
        format!("it is reduced as {} instead of {}", b.expr, a.expr)
    };
    Some(format!("{change}, {place}: {how}"))
}
