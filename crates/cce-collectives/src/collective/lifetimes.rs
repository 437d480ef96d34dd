//! When each scratch buffer lives, so the model's memory grows only as the data does (MODEL,
//! docs/MODEL.md C12). A partial `P(r, c)` or a receive buffer `RECV(r, c)` is mapped just before
//! the step that writes it and unmapped when the steps that read it are done (at once when
//! nothing reads it). With [`add_backpressure`], a rank's step also waits until the readers of
//! what it wrote two steps earlier are done, so at most two steps' scratch buffers of each rank
//! are mapped at any time; inputs and outputs stay mapped for the whole run.

use std::collections::BTreeMap;

use super::lowered::Lowered;
use super::schedule::Step;

/// The scratch buffers' births and deaths, per rank and step.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Lifetimes {
    /// Per rank and step: the scratch regions `(base, bytes)` the step writes, mapped before it.
    pub(super) allocs: Vec<Vec<Vec<(u64, u64)>>>,
    /// Per rank and step: the scratch regions the step is one of the last users of (it reads
    /// them, or writes them when nothing reads them); each is unmapped when all its users are
    /// done.
    pub(super) releases: Vec<Vec<Vec<u64>>>,
    /// How many steps release each region.
    pub(super) users: BTreeMap<u64, usize>,
    /// Most scratch bytes any one rank allocates in two consecutive steps.
    pub(super) two_steps: u64,
}

/// The lifetimes of every scratch buffer of `steps` (`low`'s, perhaps with back pressure).
pub(super) fn lifetimes(low: &Lowered, steps: &[Vec<Step>]) -> Lifetimes {
    let shape = |f: fn() -> Vec<u64>| -> Vec<Vec<Vec<u64>>> {
        steps.iter().map(|st| st.iter().map(|_| f()).collect()).collect()
    };
    let mut allocs: Vec<Vec<Vec<(u64, u64)>>> = steps.iter().map(|st| vec![Vec::new(); st.len()]).collect();
    let mut readers: BTreeMap<u64, Vec<(usize, usize)>> = BTreeMap::new();
    let mut writer: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for (q, st) in steps.iter().enumerate() {
        for (s, step) in st.iter().enumerate() {
            for w in &step.work {
                for a in w.writes() {
                    // A scratch buffer holds what its one writer writes (an empty one maps a byte).
                    if low.is_scratch(a) && writer.insert(a, (q, s)).is_none() {
                        allocs[q][s].push((a, w.write_len(low.l.size).max(1)));
                    }
                }
                for a in w.reads().into_iter().filter_map(|a| low.scratch_of(a)) {
                    {
                        let r = readers.entry(a).or_default();
                        if !r.contains(&(q, s)) {
                            r.push((q, s));
                        }
                    }
                }
            }
        }
    }
    let mut releases = shape(Vec::new);
    let mut users = BTreeMap::new();
    for (&a, &(q, s)) in &writer {
        let by: Vec<(usize, usize)> = readers.get(&a).cloned().unwrap_or_else(|| vec![(q, s)]);
        users.insert(a, by.len());
        for (p, t) in by {
            releases[p][t].push(a);
        }
    }
    let two_steps = allocs
        .iter()
        .flat_map(|st| {
            let bytes: Vec<u64> = st.iter().map(|v| v.iter().map(|(_, b)| b).sum()).collect();
            (0..bytes.len()).map(move |s| bytes[s] + if s > 0 { bytes[s - 1] } else { 0 })
        })
        .max()
        .unwrap_or(0);
    Lifetimes { allocs, releases, users, two_steps }
}

/// Adds the back-pressure edges: step `s` of a rank waits for every user of what the rank
/// allocated at step `s − 2` (users on its own queue come before it anyway). Returns false,
/// leaving `steps` as they were, if an edge would close a cycle (no schedule here does).
pub(super) fn add_backpressure(steps: &mut [Vec<Step>], life: &Lifetimes) -> bool {
    let mut users_of: BTreeMap<u64, Vec<(usize, usize)>> = BTreeMap::new();
    for (q, st) in life.releases.iter().enumerate() {
        for (s, bases) in st.iter().enumerate() {
            for &a in bases {
                users_of.entry(a).or_default().push((q, s));
            }
        }
    }
    // The new edges, per rank and step, apart from the steps until they are known acyclic.
    let mut added: Vec<Vec<Vec<(usize, usize)>>> = steps.iter().map(|st| vec![Vec::new(); st.len()]).collect();
    for (q, st) in steps.iter().enumerate() {
        for s in 2..st.len() {
            for (a, _) in &life.allocs[q][s - 2] {
                for &(p, t) in users_of.get(a).map_or(&[][..], Vec::as_slice) {
                    if p != q && !st[s].deps.contains(&(p, t)) && !added[q][s].contains(&(p, t)) {
                        added[q][s].push((p, t));
                    }
                }
            }
        }
    }
    drop(users_of);
    if !acyclic(steps, &added) {
        return false;
    }
    for (st, more) in steps.iter_mut().zip(added) {
        for (step, more) in st.iter_mut().zip(more) {
            step.deps.extend(more);
        }
    }
    true
}

/// Whether the steps' order (each rank's steps in sequence, plus every dependency and every
/// edge of `more`, per rank and step) has no cycle.
pub(super) fn acyclic(steps: &[Vec<Step>], more: &[Vec<Vec<(usize, usize)>>]) -> bool {
    // Kahn's algorithm over (rank, step).
    let first: Vec<usize> = steps
        .iter()
        .scan(0, |at, st| {
            let here = *at;
            *at += st.len();
            Some(here)
        })
        .collect();
    let idx = |q: usize, s: usize| first[q] + s;
    let n: usize = steps.iter().map(Vec::len).sum();
    let mut indeg = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (q, st) in steps.iter().enumerate() {
        for (s, step) in st.iter().enumerate() {
            let me = idx(q, s);
            let extra = more.get(q).and_then(|m| m.get(s)).map_or(&[][..], Vec::as_slice);
            let before = step.deps.iter().chain(extra).map(|&(p, t)| idx(p, t)).chain((s > 0).then(|| idx(q, s - 1)));
            for b in before {
                out[b].push(me);
                indeg[me] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        for &j in &out[i] {
            indeg[j] -= 1;
            if indeg[j] == 0 {
                ready.push(j);
            }
        }
    }
    done == n
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use cce_format::SdmaDtype;

    use super::*;
    use crate::collective::config::{Algo, Collective, Config, RedOp};

    /// Under back pressure, whatever order the ranks run in (within the dependencies), a rank
    /// starting step s holds no scratch buffer it allocated before step s − 1 that a user has
    /// not finished with: every user of its allocations up to step s − 2 comes before (q, s).
    #[test]
    #[allow(clippy::needless_range_loop, reason = "steps are addressed as (rank, step) pairs")]
    fn back_pressure_keeps_two_steps_of_scratch() {
        for algo in Algo::ALL {
            for ranks in (3..=12).filter(|&r| algo.refusal(r, 3).is_none()) {
                for collective in [Collective::AllReduce, Collective::ReduceScatter] {
                    let cfg = Config { collective, ..Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, 4096) };
                    let low = Lowered::new(&cfg);
                    let mut steps = low.steps.clone();
                    let life = lifetimes(&low, &steps);
                    assert!(add_backpressure(&mut steps, &life), "{algo:?} R={ranks}: a cycle");
                    for (q, st) in steps.iter().enumerate() {
                        for s in 0..st.len() {
                            // Everything (q, s) comes after.
                            let mut before = BTreeSet::new();
                            let mut todo: Vec<(usize, usize)> = st[s].deps.clone();
                            if s > 0 {
                                todo.push((q, s - 1));
                            }
                            while let Some((p, t)) = todo.pop() {
                                if before.insert((p, t)) {
                                    todo.extend(steps[p][t].deps.iter().copied());
                                    if t > 0 {
                                        todo.push((p, t - 1));
                                    }
                                }
                            }
                            for a in (0..s.saturating_sub(1)).flat_map(|t| life.allocs[q][t].iter().map(|x| x.0)) {
                                for (p, t) in life.releases.iter().enumerate().flat_map(|(p, r)| {
                                    r.iter().enumerate().filter(|(_, v)| v.contains(&a)).map(move |(t, _)| (p, t))
                                }) {
                                    assert!(
                                        before.contains(&(p, t)) || (p, t) == (q, s),
                                        "{algo:?} R={ranks}: rank {q} step {s} may start while ({p}, {t}) uses 0x{a:x}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
