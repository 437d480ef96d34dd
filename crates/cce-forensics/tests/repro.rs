//! Repro's analysis on small hand-made spaces, each expectation from the rules of
//! docs/repro.md: classes are bit-identical outputs (every rank, every element) over the same
//! inputs; a class is separated from another by each parameter that alone turns one of its
//! configurations into one of the other's (joined by `or`), else by everything in which their
//! first configurations differ (joined by `and`); an algorithm is invariant over an axis when
//! every pair of its configurations differing there alone agrees on the elements both have;
//! the seed goes with the rounding.

use cce_forensics::repro::{
    Axis, Classes, Configuration, Digests, ElementOrder, Separation, Verdict, separation_words, separations,
    story_words, verdicts,
};
use cce_numerics::order::Order;

/// The axes of the spaces below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ax {
    Ranks,
    Algo,
    Elems,
    Rounding,
    Seed,
}

impl Axis for Ax {
    fn name(self) -> &'static str {
        match self {
            Ax::Ranks => "ranks",
            Ax::Algo => "algo",
            Ax::Elems => "elems",
            Ax::Rounding => "rounding",
            Ax::Seed => "seed",
        }
    }

    fn same_inputs(self) -> bool {
        self != Ax::Ranks
    }

    fn judged(self) -> bool {
        !matches!(self, Ax::Ranks | Ax::Algo)
    }

    fn goes_with(self) -> Option<Ax> {
        (self == Ax::Seed).then_some(Ax::Rounding)
    }

    fn change_words(self, a: &str, b: &str) -> String {
        match self {
            Ax::Elems => format!("from {a} to {b} elements"),
            _ => format!("from {} {a} to {b}", self.name()),
        }
    }
}

/// A configuration of `values` (axis, text); its size is its `elems` value.
fn config(values: &[(Ax, &str)]) -> Configuration<Ax> {
    let elems = values.iter().find(|(a, _)| *a == Ax::Elems).map_or(4, |(_, v)| v.parse().unwrap());
    Configuration { values: values.iter().map(|&(a, v)| (a, v.to_string())).collect(), elems }
}

/// One rank's output of one-byte elements, digested at every size of `sizes`.
fn digests(output: &[u8], sizes: &[u64]) -> Digests {
    Digests::of(&[output.to_vec()], sizes, output.len() as u64, 1, 1)
}

/// Every configuration placed in turn.
fn classify(configs: &[Configuration<Ax>], d: &[Digests]) -> Classes {
    let mut classes = Classes::new();
    for i in 0..configs.len() {
        classes.place(configs, d, i);
    }
    classes
}

fn sep(axis: Ax, a: &str, b: &str, alone: bool) -> Separation<Ax> {
    Separation { axis, a: a.into(), b: b.into(), alone }
}

/// ring, mesh and auto at 4 and 6 elements: ring's first 4 elements change with the size,
/// mesh's do not, and auto chooses mesh (docs/repro.md's batch-invariance sweep, scaled down).
fn algos_by_sizes() -> (Vec<Configuration<Ax>>, Vec<Digests>) {
    let sizes = [4, 6];
    let ring4 = [1u8, 2, 3, 4];
    let ring6 = [1u8, 2, 9, 4, 5, 6]; // element 2 differs from ring4's
    let mesh4 = [1u8, 2, 3, 5];
    let mesh6 = [1u8, 2, 3, 5, 7, 8]; // mesh4, then two more
    let mut configs = Vec::new();
    let mut d = Vec::new();
    for (algo, four, six) in [("ring", &ring4[..], &ring6[..]), ("mesh", &mesh4, &mesh6), ("auto", &mesh4, &mesh6)] {
        configs.push(config(&[(Ax::Algo, algo), (Ax::Elems, "4")]));
        d.push(digests(four, &sizes));
        configs.push(config(&[(Ax::Algo, algo), (Ax::Elems, "6")]));
        d.push(digests(six, &sizes));
    }
    (configs, d)
}

#[test]
fn classes_are_the_same_bytes_of_the_same_inputs_and_size() {
    let (configs, d) = algos_by_sizes();
    let classes = classify(&configs, &d);
    // ring 4, ring 6, then mesh and auto together at each size.
    assert_eq!(classes.members(), [vec![0], vec![1], vec![2, 4], vec![3, 5]]);
    assert_eq!(classes.of(2), [2, 4]);
    assert!(classes.of(9).is_empty());

    // The same bytes from other inputs (another rank count) are another class.
    let other = vec![config(&[(Ax::Ranks, "4")]), config(&[(Ax::Ranks, "8")])];
    let same = vec![digests(&[7, 7, 7, 7], &[4]), digests(&[7, 7, 7, 7], &[4])];
    assert_eq!(classify(&other, &same).members(), [vec![0], vec![1]]);
    // And over the same inputs, the same bytes are one class whatever else differs.
    let algos = vec![config(&[(Ax::Algo, "ring")]), config(&[(Ax::Algo, "mesh")])];
    assert_eq!(classify(&algos, &same).members(), [vec![0, 1]]);
}

#[test]
fn a_parameter_that_alone_separates_is_named_with_or_else_all_with_and() {
    let (configs, d) = algos_by_sizes();
    let classes = classify(&configs, &d);
    // Class 1 (ring 6) vs class 0 (ring 4): the size alone.
    let s = separations(&configs, &classes, (0, 1), (0, 1));
    assert_eq!(s, [sep(Ax::Elems, "4", "6", true)]);
    assert_eq!(separation_words(&s), "elems: 4 vs 6");
    // Class 2 (mesh 4, auto 4) vs class 0 (ring 4): two configurations each a change of
    // algorithm alone.
    let s = separations(&configs, &classes, (0, 2), (0, 2));
    assert_eq!(s, [sep(Ax::Algo, "ring", "mesh", true), sep(Ax::Algo, "ring", "auto", true)]);
    assert_eq!(separation_words(&s), "algo: ring vs mesh or algo: ring vs auto");
    // Class 3 (mesh 6, auto 6) vs class 0 (ring 4): no pair differs in one parameter, so
    // everything in which the first configurations (0 and 3) differ.
    let s = separations(&configs, &classes, (0, 3), (0, 3));
    assert_eq!(s, [sep(Ax::Algo, "ring", "mesh", false), sep(Ax::Elems, "4", "6", false)]);
    assert_eq!(separation_words(&s), "algo: ring vs mesh and elems: 4 vs 6");
}

#[test]
fn invariance_compares_the_elements_both_sizes_have() {
    let (configs, d) = algos_by_sizes();
    let v = verdicts(&configs, &d, &[Ax::Algo, Ax::Elems], Ax::Algo);
    // The algorithm is not judged over itself; over the size, ring's first 4 elements moved.
    let want = |algo: &str, witness| Verdict { algo: algo.into(), axis: Ax::Elems, pairs: 1, witness };
    assert_eq!(v, [want("ring", Some((0, 1))), want("mesh", None), want("auto", None)]);
    assert!(!v[0].invariant() && v[1].invariant() && v[2].invariant());
    // An axis not swept gets no verdict.
    assert!(verdicts(&configs, &d, &[Ax::Algo], Ax::Algo).is_empty());
}

#[test]
fn the_seed_goes_with_the_rounding() {
    let rne = config(&[(Ax::Algo, "mesh"), (Ax::Rounding, "rne"), (Ax::Seed, "-")]);
    let sr1 = config(&[(Ax::Algo, "mesh"), (Ax::Rounding, "sr"), (Ax::Seed, "1")]);
    let sr2 = config(&[(Ax::Algo, "mesh"), (Ax::Rounding, "sr"), (Ax::Seed, "2")]);
    assert_eq!(rne.differing(&sr1), [Ax::Rounding]);
    assert_eq!(sr1.differing(&sr2), [Ax::Seed]);
    let configs = vec![rne, sr1, sr2];
    // Each seed its own class; sr 2's first element equals RNE's.
    let d = vec![digests(&[1, 2, 3, 4], &[4]), digests(&[1, 3, 3, 4], &[4]), digests(&[1, 2, 3, 5], &[4])];
    let classes = classify(&configs, &d);
    assert_eq!(classes.members().len(), 3);
    let v = verdicts(&configs, &d, &[Ax::Rounding, Ax::Seed], Ax::Algo);
    let rounding = Verdict { algo: "mesh".into(), axis: Ax::Rounding, pairs: 2, witness: Some((0, 1)) };
    let seed = Verdict { algo: "mesh".into(), axis: Ax::Seed, pairs: 1, witness: Some((1, 2)) };
    assert_eq!(v, [rounding, seed]);
    assert_eq!(separations(&configs, &classes, (0, 2), (0, 2)), [sep(Ax::Rounding, "rne", "sr", true)]);
}

#[test]
fn a_missing_value_differs_from_any_text() {
    let a = config(&[(Ax::Algo, "ring"), (Ax::Elems, "4")]);
    let b = config(&[(Ax::Elems, "4")]);
    assert_eq!(a.differing(&b), [Ax::Algo]);
    assert_eq!(b.differing(&a), Vec::<Ax>::new(), "b has no algo axis to list");
    assert_eq!(a.value(Ax::Seed), None);
}

#[test]
fn the_first_difference_in_words() {
    let order = |s: &str| Order::parse(s).unwrap();
    let (ring0, ring1, mesh) = (order("(((0+1)+2)+3)"), order("(((1+2)+3)+0)"), order("(0+1+2+3)"));
    let swapped = order("(((0+2)+1)+3)");
    let at = |chunk, expr, leaves| ElementOrder { chunk, expr, leaves };
    let size = [sep(Ax::Elems, "4096", "4104", true)];
    // The element moves to another chunk, where its sum starts at another rank.
    let w = story_words(&size, 513, at(1, &ring1, &[1, 2, 3, 0]), at(0, &ring0, &[0, 1, 2, 3]));
    assert_eq!(
        w,
        "from 4096 to 4104 elements, element 513 moves from chunk 1 to chunk 0: its sum starts at rank 0 instead of rank 1"
    );
    // Same leaves, another tree.
    let algo = [sep(Ax::Algo, "ring", "mesh", true)];
    let w = story_words(&algo, 1, at(0, &ring0, &[0, 1, 2, 3]), at(0, &mesh, &[0, 1, 2, 3]));
    assert_eq!(
        w,
        "from algo ring to mesh, element 1 stays in chunk 0: it is reduced as (0+1+2+3) instead of (((0+1)+2)+3)"
    );
    // Same first rank, the others in another order.
    let w = story_words(&algo, 2, at(0, &ring0, &[0, 1, 2, 3]), at(0, &swapped, &[0, 2, 1, 3]));
    assert!(w.ends_with("its ranks enter as 0 2 1 3 instead of 0 1 2 3"), "{w}");
    // Same order: the rounding changed.
    let rounding = [sep(Ax::Rounding, "rne", "sr", true)];
    let w = story_words(&rounding, 1, at(0, &ring0, &[0, 1, 2, 3]), at(0, &ring0, &[0, 1, 2, 3]));
    assert_eq!(
        w,
        "from rounding rne to sr, element 1 stays in chunk 0: the same order (((0+1)+2)+3), rounded otherwise"
    );
    // Several parameters together; none.
    let both = [sep(Ax::Algo, "ring", "mesh", false), sep(Ax::Elems, "4", "6", false)];
    let w = story_words(&both, 1, at(0, &ring0, &[0, 1, 2, 3]), at(0, &mesh, &[0, 1, 2, 3]));
    assert!(w.starts_with("with algo: ring vs mesh and elems: 4 vs 6, element 1"), "{w}");
    let w = story_words::<Ax>(&[], 1, at(0, &ring0, &[0, 1, 2, 3]), at(0, &mesh, &[0, 1, 2, 3]));
    assert!(w.starts_with("between the two configurations, "), "{w}");
}
