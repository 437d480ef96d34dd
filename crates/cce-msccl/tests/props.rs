//! Random edits of valid schedules (the fuzz target's property, on stable, in CI): any number
//! of attribute values replaced by small integers, step types swapped, steps dropped or
//! duplicated — the checks refuse or accept, never panic, and an accepted edit plans work
//! items that stay on their own rank.

mod common;

use cce_msccl::Schedule;
use proptest::prelude::*;

/// The `<step>` lines of a ring of three ranks and an all-pairs of three.
fn sources() -> Vec<String> {
    vec![common::ring(3).xml(), common::allpairs(3).xml(), common::exchange().xml()]
}

/// One edit of a file's lines.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the `k`-th number (any attribute) by `v`.
    Number(usize, i64),
    /// Replace the `k`-th step type by `t`.
    Type(usize, &'static str),
    /// Drop line `k`.
    Drop(usize),
    /// Repeat line `k`.
    Repeat(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let types = prop::sample::select(vec!["s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"]);
    prop_oneof![
        (0usize..2000, -2i64..12).prop_map(|(k, v)| Edit::Number(k, v)),
        (0usize..200, types).prop_map(|(k, t)| Edit::Type(k, t)),
        (0usize..200).prop_map(Edit::Drop),
        (0usize..200).prop_map(Edit::Repeat),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    match *e {
        Edit::Number(k, v) => {
            let spans: Vec<(usize, usize)> = text
                .match_indices("=\"")
                .filter_map(|(i, _)| {
                    let start = i + 2;
                    let end = start + text[start..].find('"')?;
                    text[start..end].parse::<i64>().is_ok().then_some((start, end))
                })
                .collect();
            let Some(&(s, t)) = spans.get(k % spans.len().max(1)) else { return text.to_string() };
            format!("{}{v}{}", &text[..s], &text[t..])
        }
        Edit::Type(k, t) => {
            let at: Vec<usize> = text.match_indices("type=\"").map(|(i, _)| i + 6).collect();
            let Some(&s) = at.get(k % at.len().max(1)) else { return text.to_string() };
            let end = s + text[s..].find('"').unwrap_or(0);
            format!("{}{t}{}", &text[..s], &text[end..])
        }
        Edit::Drop(k) | Edit::Repeat(k) => {
            let lines: Vec<&str> = text.lines().collect();
            let k = 1 + k % lines.len().saturating_sub(2).max(1);
            let mut out: Vec<&str> = Vec::new();
            for (i, l) in lines.iter().enumerate() {
                if i != k || matches!(e, Edit::Repeat(_)) {
                    out.push(l);
                }
                if i == k && matches!(e, Edit::Repeat(_)) {
                    out.push(l);
                }
            }
            out.join("\n")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]
    #[test]
    fn edited_schedules_are_refused_or_planned_never_a_panic(
        which in 0usize..3,
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let mut text = sources()[which].clone();
        for e in &edits {
            text = apply(&text, e);
        }
        match Schedule::from_xml(&text) {
            Err(e) => prop_assert_eq!(e.to_string().lines().count(), 1),
            Ok(s) => {
                for (q, steps) in s.plan.steps.iter().enumerate() {
                    for st in steps {
                        for w in &st.works {
                            prop_assert_eq!(w.dst.rank, q);
                        }
                        prop_assert!(st.deps.iter().all(|&(p, l)| p != q && l < steps.len()));
                    }
                }
            }
        }
    }
}
