//! Repro's analysis: given the configurations of a space and what each one's outputs were,
//! which are bit-identical, what separates two that are not, and whether each algorithm is
//! invariant over each swept parameter — without knowing what a configuration runs.
//!
//! A configuration is keyed values ([`Configuration`]): one text value per [`Axis`] (the
//! caller's type: its name, whether configurations that differ there share their inputs, whether
//! invariance over it is judged, and the axis it goes with, as a stochastic-rounding seed goes
//! with the rounding), and the number of elements its outputs hold per rank. Outputs are bytes
//! ([`bits`]): their digests at every size of the inputs they share ([`Digests`]), and the exact
//! comparison of two of them ([`bits::compare`]).
//!
//! - [`Classes`]: configurations whose outputs are bit-identical — every rank, every element:
//!   the same inputs, the same size, the same digests; placed one run at a time, in the order
//!   they ran.
//! - [`separations`]: what separates two classes — each parameter in which a configuration
//!   of one differs from a configuration of the other *alone* (the one change that flips the
//!   bits); when no such pair exists, every parameter in which the classes' first
//!   configurations differ, all together.
//! - [`verdicts`]: for every algorithm and every judged swept axis, every pair of its
//!   configurations that differ in that axis alone, compared on the elements both have (the
//!   digests of the smaller size): invariant when none differs, else the first pair that does.
//! - [`separation_words`], [`story_words`]: both in words.
//!
//! ## Guarantees
//! - Two configurations differ in an axis when their values' texts differ; an axis that goes
//!   with another ([`Axis::goes_with`]) is not counted where that one differs too (a change of
//!   rounding from RNE to SR is not also a change of seed).
//! - A configuration joins a class only when its inputs, its size and every rank's digest are
//!   the class's; classes are numbered in the order their first members were placed.
//! - Separations and verdicts are exhaustive over the pairs they describe and deterministic:
//!   separations in the order of the two classes' members, verdicts in the order of the swept
//!   axes, then of the algorithms' first configurations.
//! - Nothing panics on a configuration without a value for an axis: the value is taken as
//!   absent, and absent differs from any text.

pub mod bits;

use cce_numerics::order::Order;

pub use bits::{Difference, Digest, Digests, compare};

/// A parameter of a configuration space, as the analysis treats it.
pub trait Axis: Copy + Eq + core::fmt::Debug {
    /// The parameter's name in words (`elems`, `algo`).
    fn name(self) -> &'static str;

    /// Whether configurations differing here run on the same inputs (and are compared bit
    /// for bit).
    fn same_inputs(self) -> bool;

    /// Whether an algorithm's invariance over this axis is judged.
    fn judged(self) -> bool;

    /// The axis this one goes with: a difference here is not counted where that axis differs
    /// too (a stochastic-rounding seed goes with the rounding). `None` by default.
    fn goes_with(self) -> Option<Self> {
        None
    }

    /// A change of this parameter from `a` to `b`, in words: `from algo ring to mesh` by
    /// default.
    fn change_words(self, a: &str, b: &str) -> String {
        format!("from {} {a} to {b}", self.name())
    }
}

/// One configuration of a space: the value of every axis as text, and the elements per rank
/// its outputs hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configuration<A> {
    /// Every axis with its value, in the space's order.
    pub values: Vec<(A, String)>,
    /// Elements per rank of its outputs.
    pub elems: u64,
}

impl<A: Axis> Configuration<A> {
    /// The value of `axis`, if the configuration has one.
    pub fn value(&self, axis: A) -> Option<&str> {
        self.values.iter().find(|(a, _)| *a == axis).map(|(_, v)| v.as_str())
    }

    /// The axes in which `self` and `other` differ, in `self`'s order, without an axis that
    /// goes with another that differs too.
    pub fn differing(&self, other: &Configuration<A>) -> Vec<A> {
        let mut d: Vec<A> = self.values.iter().map(|&(a, _)| a).filter(|&a| self.value(a) != other.value(a)).collect();
        let carried: Vec<A> = d.iter().copied().filter(|a| a.goes_with().is_some_and(|w| d.contains(&w))).collect();
        d.retain(|a| !carried.contains(a));
        d
    }

    /// Whether `self` and `other` run on the same inputs: the same value in every axis that
    /// changes them.
    pub fn same_inputs(&self, other: &Configuration<A>) -> bool {
        self.values.iter().filter(|(a, _)| !a.same_inputs()).all(|&(a, ref v)| other.value(a) == Some(v.as_str()))
    }
}

/// Configurations whose outputs are bit-identical, each a list of configuration indices in
/// the order they were placed ([`Classes::place`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classes {
    members: Vec<Vec<usize>>,
}

impl Classes {
    /// No class yet.
    pub fn new() -> Classes {
        Classes::default()
    }

    /// Places configuration `i` of `configs`, whose digests are `digests[i]`, in the first
    /// class whose first member has its inputs, its size and its whole digests, or in a new
    /// class. Returns the class and whether it is new.
    pub fn place<A: Axis>(&mut self, configs: &[Configuration<A>], digests: &[Digests], i: usize) -> (usize, bool) {
        let c = &configs[i];
        let same = |m: &Vec<usize>| {
            let r = m[0];
            configs[r].same_inputs(c) && configs[r].elems == c.elems && digests[r].whole() == digests[i].whole()
        };
        match self.members.iter().position(same) {
            Some(k) => {
                self.members[k].push(i);
                (k, false)
            }
            None => {
                self.members.push(vec![i]);
                (self.members.len() - 1, true)
            }
        }
    }

    /// The classes' members, each ascending in the order placed.
    pub fn members(&self) -> &[Vec<usize>] {
        &self.members
    }

    /// Class `k`'s members (none for a class that does not exist).
    pub fn of(&self, k: usize) -> &[usize] {
        self.members.get(k).map_or(&[], Vec::as_slice)
    }
}

/// A parameter whose value differs between two configurations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Separation<A> {
    /// The parameter.
    pub axis: A,
    /// Its value on the first class's side.
    pub a: String,
    /// Its value on the second class's side.
    pub b: String,
    /// Whether it is the only parameter in which those two configurations differ.
    pub alone: bool,
}

/// Whether an algorithm's outputs stay the same over one swept axis: every pair of its
/// configurations that differ in that axis alone (an axis with what goes with it) is compared
/// on the elements both have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict<A> {
    /// The algorithm: the value of the axis the verdicts are taken by.
    pub algo: String,
    /// The axis.
    pub axis: A,
    /// Pairs of configurations compared.
    pub pairs: u64,
    /// The first pair whose outputs differ (configuration indices), if any.
    pub witness: Option<(usize, usize)>,
}

impl<A> Verdict<A> {
    /// Whether no compared pair differs.
    pub fn invariant(&self) -> bool {
        self.witness.is_none()
    }
}

/// Every algorithm's verdict over every judged axis of `swept` that has a pair to compare:
/// the algorithm is the value of axis `by`; `digests[i]` are configuration i's, and two
/// configurations are the same when both have digests at the smaller one's size and they are
/// equal.
pub fn verdicts<A: Axis>(configs: &[Configuration<A>], digests: &[Digests], swept: &[A], by: A) -> Vec<Verdict<A>> {
    let mut out: Vec<Verdict<A>> = Vec::new();
    for &axis in swept.iter().filter(|a| a.judged()) {
        for (i, x) in configs.iter().enumerate() {
            for (j, y) in configs.iter().enumerate().skip(i + 1) {
                if x.differing(y) != [axis] {
                    continue;
                }
                let n = x.elems.min(y.elems);
                let same = digests[i].at(n).is_some() && digests[i].at(n) == digests[j].at(n);
                let algo = x.value(by).unwrap_or_default().to_string();
                let k = match out.iter().position(|v| v.algo == algo && v.axis == axis) {
                    Some(k) => k,
                    None => {
                        out.push(Verdict { algo, axis, pairs: 0, witness: None });
                        out.len() - 1
                    }
                };
                out[k].pairs += 1;
                if !same && out[k].witness.is_none() {
                    out[k].witness = Some((i, j));
                }
            }
        }
    }
    out
}

/// What separates classes `class_a` and `class_b` (whose first configurations are `a` and `b`):
/// the parameters in which a configuration of one differs from one of the other alone, or,
/// without such a pair, every parameter in which `a` and `b` differ.
pub fn separations<A: Axis>(
    configs: &[Configuration<A>],
    classes: &Classes,
    (class_a, class_b): (usize, usize),
    (a, b): (usize, usize),
) -> Vec<Separation<A>> {
    let value = |c: &Configuration<A>, axis: A| c.value(axis).unwrap_or_default().to_string();
    let mut alone: Vec<Separation<A>> = Vec::new();
    for &x in classes.of(class_a) {
        for &y in classes.of(class_b) {
            let (cx, cy) = (&configs[x], &configs[y]);
            if let [axis] = cx.differing(cy)[..] {
                let s = Separation { axis, a: value(cx, axis), b: value(cy, axis), alone: true };
                if !alone.contains(&s) {
                    alone.push(s);
                }
            }
        }
    }
    if !alone.is_empty() {
        return alone;
    }
    let (ca, cb) = (&configs[a], &configs[b]);
    ca.differing(cb)
        .into_iter()
        .map(|axis| Separation { axis, a: value(ca, axis), b: value(cb, axis), alone: false })
        .collect()
}

/// The separation in words: `elems: 4096 vs 4104`; several that each separate alone joined
/// by `or`; parameters that differ together joined by `and`.
pub fn separation_words<A: Axis>(s: &[Separation<A>]) -> String {
    let one = |s: &Separation<A>| format!("{}: {} vs {}", s.axis.name(), s.a, s.b);
    let joiner = if s.iter().all(|s| s.alone) { " or " } else { " and " };
    s.iter().map(one).collect::<Vec<_>>().join(joiner)
}

/// How one configuration made one element: its chunk, its order, and its ranks in the order
/// they enter the sum.
#[derive(Clone, Copy, Debug)]
pub struct ElementOrder<'a> {
    /// The chunk the element is in.
    pub chunk: u64,
    /// Its reduction order.
    pub expr: &'a Order,
    /// Its ranks, in the order they enter.
    pub leaves: &'a [u32],
}

/// The first difference of two classes told in words: what changed between the configurations
/// (`separated_by`), where `element` moved between the first class's order `a` and the
/// second's `b`, and how its reduction changed — "from 4096 to 4104 elements, element 513
/// moves from chunk 1 to chunk 0: its sum starts at rank 0 instead of rank 1".
pub fn story_words<A: Axis>(
    separated_by: &[Separation<A>],
    element: u64,
    a: ElementOrder<'_>,
    b: ElementOrder<'_>,
) -> String {
    let change = match separated_by {
        [s] => s.axis.change_words(&s.a, &s.b),
        [] => "between the two configurations".to_string(),
        many => format!("with {}", separation_words(many)),
    };
    let place = if a.chunk == b.chunk {
        format!("element {element} stays in chunk {}", a.chunk)
    } else {
        format!("element {element} moves from chunk {} to chunk {}", a.chunk, b.chunk)
    };
    let ranks = |l: &[u32]| l.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
    let how = if a.expr == b.expr {
        format!("the same order {}, rounded otherwise", a.expr)
    } else if a.leaves.first() != b.leaves.first() {
        let start = |l: &[u32]| l.first().map_or("no rank".to_string(), |r| format!("rank {r}"));
        format!("its sum starts at {} instead of {}", start(b.leaves), start(a.leaves))
    } else if a.leaves != b.leaves {
        format!("its ranks enter as {} instead of {}", ranks(b.leaves), ranks(a.leaves))
    } else {
        format!("it is reduced as {} instead of {}", b.expr, a.expr)
    };
    format!("{change}, {place}: {how}")
}
