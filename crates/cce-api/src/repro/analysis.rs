//! The analysis of a pass is cce-forensics' ([`cce_forensics::repro`]): here, cce's
//! parameters as its axes, its configurations as keyed values, and its pairs with their
//! element stories told in words.

use cce_forensics::repro::{self as forensics, Configuration, ElementOrder};

use super::run::FirstDifference;
use super::{Axis, ReproConfig};
use crate::collective::ElementStory;
use crate::repro::Difference;

pub use forensics::separation_words;

/// A parameter whose value differs between two configurations
/// ([`cce_forensics::repro::Separation`] over [`Axis`]).
pub type Separation = forensics::Separation<Axis>;

/// Whether an algorithm's outputs stay the same over one swept axis
/// ([`cce_forensics::repro::Verdict`] over [`Axis`]; the algorithm as asked for: `auto` is
/// judged as itself, its choice may change).
pub type Verdict = forensics::Verdict<Axis>;

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

impl forensics::Axis for Axis {
    fn name(self) -> &'static str {
        Axis::name(self)
    }

    fn same_inputs(self) -> bool {
        Axis::same_inputs(self)
    }

    fn judged(self) -> bool {
        Axis::judged(self)
    }

    /// A rounding's seed is counted with the rounding when the roundings differ.
    fn goes_with(self) -> Option<Axis> {
        (self == Axis::Seed).then_some(Axis::Rounding)
    }

    /// `from 4096 to 4104 elements` for the size; the default for the others.
    fn change_words(self, a: &str, b: &str) -> String {
        match self {
            Axis::Elems => format!("from {a} to {b} elements"),
            _ => format!("from {} {a} to {b}", self.name()),
        }
    }
}

/// `c` as the analysis sees it: every axis's value as reports write it, and its size.
pub(super) fn configuration(c: &ReproConfig) -> Configuration<Axis> {
    Configuration { values: Axis::ALL.iter().map(|&a| (a, c.value(a))).collect(), elems: c.elems }
}

/// The first difference of `pair` told in words from its two stories: what changed between
/// the configurations, where the element moved and how its reduction changed — "from 4096 to
/// 4104 elements, element 513 moves from chunk 1 to chunk 0: its sum starts at rank 0 instead
/// of rank 1". `None` when no element differs.
pub fn story_words(pair: &Pair) -> Option<String> {
    let f = pair.first.as_ref()?;
    Some(forensics::story_words(&pair.separated_by, f.element, order(&f.story_a), order(&f.story_b)))
}

/// How a story's configuration made its element, as the words need it.
fn order(s: &ElementStory) -> ElementOrder<'_> {
    ElementOrder { chunk: s.story.chunk, expr: &s.story.expr, leaves: &s.story.leaves }
}
