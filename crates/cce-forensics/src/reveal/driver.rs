//! The reveal's runs as a state machine ([`Reveal`]: the next run's inputs, then what its
//! outputs showed), and [`reveal`], which drives a [`BlackBox`] through it.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use cce_numerics::NumType;
use cce_numerics::order::Order;

use super::RevealError;
use super::hypo::Hypotheses;
use super::mask::{Query, Regime, Scales};
use super::segment::{self, Candidate, Cover, Segment};
use super::tree::{has_multiway, pairs};
use crate::eval::rne_block;
use crate::problem::element;
use crate::rule::{Family, Rounding, Rule, evaluated, merge_key};

/// An all-reduce cce cannot see inside: every rank's input in, every rank's output out.
pub trait BlackBox {
    /// Runs it once (`run` counts from 1) on `inputs` (one little-endian buffer per rank) and
    /// returns every rank's output.
    fn run(&mut self, run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError>;
}

/// Elements that share one tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// First element.
    pub first: usize,
    /// Last element (inclusive).
    pub last: usize,
    /// The rank whose output this is, where the ranks' outputs differ (`None`: every rank's).
    pub rank: Option<usize>,
    /// The tree, in the order grammar.
    pub order: Order,
    /// The accumulate dtype: the buffer dtype when every parenthesis has two operands (with
    /// round-to-nearest-even any wider accumulate gives the same bits then), fp32 otherwise.
    pub accum: NumType,
    /// The family order it equals, if one does.
    pub equals: Option<String>,
}

/// The answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revealed {
    /// Whether every element's tree was revealed and checked.
    pub revealed: bool,
    /// Why not, when not.
    pub reason: Option<String>,
    /// How many times the black box ran.
    pub runs: u32,
    /// Ranks.
    pub ranks: u32,
    /// Elements per rank.
    pub elems: usize,
    /// The buffer dtype.
    pub dtype: NumType,
    /// The classes (empty when not revealed).
    pub classes: Vec<Class>,
}

/// What one element of a run-2 input asks.
#[derive(Clone, Copy, Debug)]
enum Purpose {
    /// Which of segments `seg` and `seg + 1` owns the element: the pair `pair` tells them apart.
    Pin { seg: usize, pair: usize },
    /// Whether add `node` of segment `seg`'s tree rounds.
    Round { seg: usize, node: usize, query: Query },
}

/// One distinct output of run 1 and the ranks that gave it.
struct Group {
    ranks: Vec<usize>,
    cands: Vec<Candidate>,
    segs: Vec<Segment>,
    plan: Vec<Option<Purpose>>,
    /// Per segment: the adds that stay in the accumulator.
    unrounded: Vec<Vec<usize>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Trees,
    Detail(usize),
    Hypo,
    Check,
    Done,
}

/// A reveal in progress: ask [`Reveal::next_inputs`], run them, hand the outputs to
/// [`Reveal::observe`], until `next_inputs` is `None`; then [`Reveal::result`].
pub struct Reveal {
    ranks: u32,
    elems: usize,
    dtype: NumType,
    scales: Scales,
    pairs: Vec<(u32, u32)>,
    stage: Stage,
    runs: u32,
    groups: Vec<Group>,
    /// Run 2's plans: every group's in one run where they fit together, else one run each;
    /// each element's purpose tagged with its group.
    detail: Vec<Vec<Option<(usize, Purpose)>>>,
    /// Orders the caller lists beside the families, for classes too short for run 1's pairs.
    extra: Vec<(String, Rule)>,
    /// The listed orders still possible per element, once run 1 showed classes too short.
    hypo: Option<Hypotheses>,
    outcome: Option<Result<Vec<Class>, String>>,
}

/// Reveals the black box's order of `elems` elements of `dtype` over `ranks` ranks.
pub fn reveal(ranks: u32, elems: usize, dtype: NumType, bb: &mut dyn BlackBox) -> Result<Revealed, RevealError> {
    let mut r = Reveal::new(ranks, elems, dtype)?;
    while let Some(inputs) = r.next_inputs() {
        let outputs = bb.run(r.runs() + 1, &inputs)?;
        r.observe(outputs)?;
    }
    Ok(r.result())
}

impl Reveal {
    /// A reveal of `elems` (at least 1) elements of `dtype` (fp32, bf16, fp16) over `ranks`
    /// (2..=64) ranks.
    pub fn new(ranks: u32, elems: usize, dtype: NumType) -> Result<Reveal, RevealError> {
        if !(2..=64).contains(&ranks) {
            return Err(RevealError::Ranks(ranks));
        }
        let scales = Scales::new(dtype, ranks)?;
        let pairs = pairs(ranks);
        if elems == 0 {
            return Err(RevealError::Elems { elems, ranks, need: 1 });
        }
        Ok(Reveal {
            ranks,
            elems,
            dtype,
            scales,
            pairs,
            stage: Stage::Trees,
            runs: 0,
            groups: Vec::new(),
            detail: Vec::new(),
            extra: Vec::new(),
            hypo: None,
            outcome: None,
        })
    }

    /// Orders (each named) to consider beside the families where classes are too short to
    /// measure every pair (cce's algorithms' chunk orders, from the door).
    pub fn add_candidates(&mut self, extra: Vec<(String, Rule)>) {
        self.extra.extend(extra);
    }

    /// The most runs a reveal of listed orders takes: run 1, ⌈log₂R⌉ + 1 splitting runs, the
    /// check.
    fn hypo_budget(&self) -> u32 {
        (u32::BITS - (self.ranks - 1).leading_zeros()) + 3
    }

    /// Runs observed so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    fn zeros(&self) -> Vec<Vec<u8>> {
        alloc::vec![alloc::vec![0u8; self.elems * self.scales.size()]; self.ranks as usize]
    }

    fn run1_query(&self, e: usize) -> Query {
        let (i, j) = self.pairs[e % self.pairs.len()];
        Query::pair(i, j, self.ranks, Regime::Absorbed)
    }

    fn detail_query(&self, p: &Purpose) -> Query {
        match *p {
            Purpose::Pin { pair, .. } => {
                let (i, j) = self.pairs[pair];
                Query::pair(i, j, self.ranks, Regime::Absorbed)
            }
            Purpose::Round { query, .. } => query,
        }
    }

    /// The next run's inputs (one buffer per rank), or `None` when the reveal is over.
    pub fn next_inputs(&self) -> Option<Vec<Vec<u8>>> {
        let mut inputs = self.zeros();
        match self.stage {
            Stage::Trees => {
                for e in 0..self.elems {
                    self.scales.write(&self.run1_query(e), e, &mut inputs);
                }
            }
            Stage::Detail(k) => {
                for (e, p) in self.detail[k].iter().enumerate() {
                    if let Some((_, p)) = p {
                        self.scales.write(&self.detail_query(p), e, &mut inputs);
                    }
                }
            }
            Stage::Hypo => {
                if let Some(h) = &self.hypo {
                    for (e, q) in h.asked.iter().enumerate() {
                        if let Some(q) = q {
                            self.scales.write(&h.pool[*q], e, &mut inputs);
                        }
                    }
                }
            }
            Stage::Check => inputs = check_inputs(self.ranks, self.elems, self.dtype),
            Stage::Done => return None,
        }
        Some(inputs)
    }

    /// Takes the outputs of the run [`Reveal::next_inputs`] gave.
    pub fn observe(&mut self, outputs: Vec<Vec<u8>>) -> Result<(), RevealError> {
        let run = self.runs + 1;
        let len = self.elems * self.scales.size();
        if outputs.len() != self.ranks as usize {
            return Err(RevealError::Outputs {
                run,
                what: alloc::format!("{} ranks' outputs, expected {}", outputs.len(), self.ranks),
            });
        }
        if let Some((r, o)) = outputs.iter().enumerate().find(|(_, o)| o.len() != len) {
            return Err(RevealError::Outputs {
                run,
                what: alloc::format!(
                    "rank {r}'s output has {} bytes, expected {len} ({} elements of {})",
                    o.len(),
                    self.elems,
                    self.dtype
                ),
            });
        }
        self.runs = run;
        let step = match self.stage {
            Stage::Trees => self.observe_trees(&outputs),
            Stage::Detail(k) => self.observe_detail(k, &outputs),
            Stage::Hypo => self.observe_hypo(&outputs),
            Stage::Check => self.observe_check(&outputs),
            Stage::Done => Ok(()),
        };
        if let Err(reason) = step {
            self.outcome = Some(Err(reason));
            self.stage = Stage::Done;
        }
        Ok(())
    }

    /// The answer (not revealed, with the reason, while runs are still wanted).
    pub fn result(&self) -> Revealed {
        let (revealed, reason, classes) = match &self.outcome {
            Some(Ok(classes)) => (true, None, classes.clone()),
            Some(Err(reason)) => (false, Some(reason.clone()), Vec::new()),
            None => (false, Some(alloc::format!("the reveal wants run {} still", self.runs + 1)), Vec::new()),
        };
        Revealed { revealed, reason, runs: self.runs, ranks: self.ranks, elems: self.elems, dtype: self.dtype, classes }
    }

    fn count(&self, q: &Query, out: &[u8], e: usize) -> Option<u32> {
        self.scales.count(q, element(out, self.scales.size(), e))
    }

    /// Run 1: the ranks grouped by their outputs, each group's classes and its run-2 plan.
    fn observe_trees(&mut self, outputs: &[Vec<u8>]) -> Result<(), String> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for r in 0..outputs.len() {
            match groups.iter_mut().find(|g| outputs[g[0]] == outputs[r]) {
                Some(g) => g.push(r),
                None => groups.push(alloc::vec![r]),
            }
        }
        for ranks in groups {
            let out = &outputs[ranks[0]];
            let d: Vec<Option<u8>> = (0..self.elems)
                .map(|e| self.count(&self.run1_query(e), out, e).map(|c| (self.ranks - c) as u8))
                .collect();
            let found = segment::classes(self.ranks, &d);
            let segs = match found.cover {
                Cover::Covered(segs) => segs,
                Cover::Unexplained(e) if ranks.len() == outputs.len() && d[e].is_some() => {
                    return self.start_hypo(&outputs[0], e);
                }
                Cover::Unexplained(e) => return Err(self.unexplained(&ranks, &d, e)),
            };
            let mut group = Group { ranks, cands: found.cands, segs, plan: Vec::new(), unrounded: Vec::new() };
            self.plan(&mut group)?;
            self.groups.push(group);
        }
        self.detail = self.detail_runs();
        self.stage = if self.detail.is_empty() { Stage::Check } else { Stage::Detail(0) };
        Ok(())
    }

    /// Run 1 showed a class too short for its pairs (element `short`): the listed orders
    /// instead ([`Hypotheses`]).
    fn start_hypo(&mut self, run1: &[u8], short: usize) -> Result<(), String> {
        let h = Hypotheses::new(&self.scales, self.ranks, self.dtype, &self.extra, run1)?;
        if let Some(e) = h.empty() {
            return Err(alloc::format!(
                "run 1, element {e}: its class is shorter than the {} elements that measure every pair once (element {short} shows it), and none of the {} listed orders (the families, cce's algorithms) explains it",
                self.pairs.len(),
                h.rules.len()
            ));
        }
        self.hypo = Some(h);
        self.next_hypo();
        Ok(())
    }

    /// Another splitting run while the budget leaves room for the check, else the check.
    fn next_hypo(&mut self) {
        let room = self.runs + 1 < self.hypo_budget();
        let split = room && self.hypo.as_mut().is_some_and(Hypotheses::plan);
        self.stage = if split { Stage::Hypo } else { Stage::Check };
    }

    /// A splitting run: every element keeps the listed orders that predict its output.
    fn observe_hypo(&mut self, outputs: &[Vec<u8>]) -> Result<(), String> {
        let size = self.scales.size();
        let runs = self.runs;
        let Some(h) = self.hypo.as_mut() else { return Err("no listed orders".into()) };
        h.observe(&outputs[0], size);
        if let Some(e) = h.empty() {
            return Err(alloc::format!(
                "run {runs}, element {e}: its class is shorter than the {} elements that measure every pair once, and none of the listed orders (the families, cce's algorithms) explains it",
                self.pairs.len()
            ));
        }
        self.next_hypo();
        Ok(())
    }

    fn unexplained(&self, ranks: &[usize], d: &[Option<u8>], e: usize) -> String {
        let who = rank_words(ranks, self.ranks as usize);
        match d[e] {
            None => alloc::format!(
                "run 1, element {e} of {who}: the output is no count of the mask's units (a stochastic rounding, a NaN, or an order that depends on the values)"
            ),
            Some(_) => alloc::format!(
                "run 1, element {e} of {who}: no tree of adds explains it and the {} elements around it (a class shorter than the {} elements that measure every pair once, or a node that adds more than two sums exactly)",
                self.pairs.len(),
                self.pairs.len()
            ),
        }
    }

    /// Run 2's plan for a group: pins in every zone, rounding queries on the rest.
    fn plan(&self, g: &mut Group) -> Result<(), String> {
        let mut plan: Vec<Option<Purpose>> = alloc::vec![None; self.elems];
        for (s, seg) in g.segs.iter().enumerate() {
            if let Some((z0, z1)) = seg.zone {
                let pair = segment::separating_pair(&g.cands[seg.cand], &g.cands[g.segs[s + 1].cand])
                    .ok_or_else(|| "two classes with one tree".to_string())?;
                plan[z0..=z1].fill(Some(Purpose::Pin { seg: s, pair }));
            }
            if !self.scales.has_buffer_regime() {
                continue;
            }
            let tree = &g.cands[seg.cand].tree;
            let queries: Vec<Purpose> = tree
                .inner_adds()
                .into_iter()
                .map(|(node, sibling)| {
                    let plus = tree.leaves(node).trailing_zeros();
                    let minus = tree.leaves(sibling).trailing_zeros();
                    let ones = tree.leaves(node) & !(1 << plus);
                    Purpose::Round { seg: s, node, query: Query { plus, minus, ones, regime: Regime::Buffer } }
                })
                .collect();
            let free: Vec<usize> = (seg.first..=seg.last).filter(|&e| plan[e].is_none()).collect();
            if !queries.is_empty() && free.len() < queries.len() {
                return Err(alloc::format!(
                    "elements {}..={}: {} elements outside the boundary zones, fewer than the {} adds whose rounding they must show",
                    seg.first,
                    seg.last,
                    free.len(),
                    queries.len()
                ));
            }
            for (k, &e) in free.iter().enumerate() {
                if !queries.is_empty() {
                    plan[e] = Some(queries[k % queries.len()]);
                }
            }
        }
        g.unrounded = alloc::vec![Vec::new(); g.segs.len()];
        g.plan = plan;
        Ok(())
    }

    /// Run 2's plans (the `detail` field's docs): pins never share an element; each group's
    /// rounding queries take the free elements `e` with `e mod G` its turn, and every query of
    /// every group must keep at least one element, else each group gets a run of its own.
    fn detail_runs(&self) -> Vec<Vec<Option<(usize, Purpose)>>> {
        let needs: Vec<usize> =
            (0..self.groups.len()).filter(|&g| self.groups[g].plan.iter().any(Option::is_some)).collect();
        let own = |g: usize| self.groups[g].plan.iter().map(|p| p.map(|p| (g, p))).collect::<Vec<_>>();
        if needs.len() <= 1 {
            return needs.into_iter().map(own).collect();
        }
        let separate = || needs.iter().map(|&g| own(g)).collect();
        let mut shared: Vec<Option<(usize, Purpose)>> = alloc::vec![None; self.elems];
        for &g in &needs {
            for (e, p) in self.groups[g].plan.iter().enumerate() {
                if let Some(p @ Purpose::Pin { .. }) = p {
                    if shared[e].is_some() {
                        return separate();
                    }
                    shared[e] = Some((g, *p));
                }
            }
        }
        for (turn, &g) in needs.iter().enumerate() {
            let group = &self.groups[g];
            for (si, seg) in group.segs.iter().enumerate() {
                // This segment's queries, once each, dealt again over the elements of its turn.
                let mut queries: Vec<Purpose> = Vec::new();
                for p in group.plan[seg.first..=seg.last].iter().flatten() {
                    if let Purpose::Round { seg: s2, node, .. } = p {
                        if *s2 == si
                            && !queries.iter().any(|q| matches!(q, Purpose::Round { node: n2, .. } if n2 == node))
                        {
                            queries.push(*p);
                        }
                    }
                }
                if queries.is_empty() {
                    continue;
                }
                let mine = (seg.first..=seg.last)
                    .filter(|&e| shared[e].is_none() && e % needs.len() == turn)
                    .collect::<Vec<usize>>();
                for (k, e) in mine.into_iter().enumerate() {
                    shared[e] = Some((g, queries[k % queries.len()]));
                }
            }
        }
        let asked = |plan: &mut dyn Iterator<Item = (usize, Purpose)>| {
            let mut v: Vec<(usize, usize, usize)> = plan
                .filter_map(|(g, p)| match p {
                    Purpose::Round { seg, node, .. } => Some((g, seg, node)),
                    Purpose::Pin { .. } => None,
                })
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let wanted = asked(&mut needs.iter().flat_map(|&g| own(g)).flatten());
        let kept = asked(&mut shared.iter().flatten().copied());
        if wanted == kept { alloc::vec![shared] } else { separate() }
    }

    /// A run 2 (`k`): every group's zones settled and roundings read, from its own output.
    fn observe_detail(&mut self, k: usize, outputs: &[Vec<u8>]) -> Result<(), String> {
        let g_count = self.groups.len();
        let mut owners: Vec<Vec<Vec<(usize, bool)>>> =
            (0..g_count).map(|g| alloc::vec![Vec::new(); self.groups[g].segs.len()]).collect();
        let mut rounds: Vec<Vec<Vec<(usize, bool)>>> = owners.clone();
        for (e, p) in self.detail[k].iter().enumerate() {
            let Some((g, p)) = p else { continue };
            let group = &self.groups[*g];
            let who = rank_words(&group.ranks, self.ranks as usize);
            let q = self.detail_query(p);
            let Some(c) = self.count(&q, &outputs[group.ranks[0]], e) else {
                return Err(alloc::format!(
                    "run {}, element {e} of {who}: the output is no count of the mask's units",
                    self.runs
                ));
            };
            match *p {
                Purpose::Pin { seg, pair } => {
                    let d = (self.ranks - c) as u8;
                    let (a, b) = (&group.cands[group.segs[seg].cand], &group.cands[group.segs[seg + 1].cand]);
                    if d != a.d[pair] && d != b.d[pair] {
                        return Err(alloc::format!(
                            "run {}, element {e} of {who}: neither neighbouring class's tree explains it",
                            self.runs
                        ));
                    }
                    owners[*g][seg].push((e, d == b.d[pair]));
                }
                Purpose::Round { seg, node, .. } => rounds[*g][seg].push((node, c > 0)),
            }
        }
        for (g, (own, round)) in owners.into_iter().zip(rounds).enumerate() {
            if self.detail[k].iter().flatten().any(|(x, _)| *x == g) {
                self.settle(g, &own, round)?;
            }
        }
        self.stage = if k + 1 < self.detail.len() { Stage::Detail(k + 1) } else { Stage::Check };
        Ok(())
    }

    /// Group `g`'s boundaries moved to where the pins say, and its unrounded adds.
    fn settle(
        &mut self,
        g: usize,
        owners: &[Vec<(usize, bool)>],
        mut rounds: Vec<Vec<(usize, bool)>>,
    ) -> Result<(), String> {
        let who = rank_words(&self.groups[g].ranks, self.ranks as usize);
        let runs = self.runs;
        let group = &mut self.groups[g];
        for (s, own) in owners.iter().enumerate() {
            if own.is_empty() {
                continue;
            }
            // The zone's owners go a…a b…b: the boundary is at the first b.
            let first_b = own.iter().position(|&(_, b)| b).unwrap_or(own.len());
            if own[first_b..].iter().any(|&(_, b)| !b) {
                return Err(alloc::format!(
                    "run {runs}: elements {}..={} of {who} switch between two trees more than once",
                    own[0].0,
                    own[own.len() - 1].0
                ));
            }
            let boundary = own.get(first_b).map_or(own[own.len() - 1].0 + 1, |&(e, _)| e);
            group.segs[s].last = boundary - 1;
            group.segs[s + 1].first = boundary;
        }
        for (s, answers) in rounds.iter_mut().enumerate() {
            answers.sort_unstable();
            if let Some(w) = answers.windows(2).find(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1) {
                let seg = &group.segs[s];
                return Err(alloc::format!(
                    "run {runs}, elements {}..={} of {who}: an add (over ranks {:?}) rounds at some elements and not at others",
                    seg.first,
                    seg.last,
                    ranks_of(group.cands[seg.cand].tree.leaves(w[0].0))
                ));
            }
            answers.dedup();
            group.unrounded[s] = answers.iter().filter(|&&(_, kept)| kept).map(|&(n, _)| n).collect();
        }
        Ok(())
    }

    /// Every group's classes: segments with their orders, neighbours of one order joined.
    fn classes(&self) -> Result<Vec<Class>, String> {
        let mut out: Vec<Class> = Vec::new();
        let per_rank = self.groups.len() > 1;
        for g in &self.groups {
            let mut mine: Vec<Class> = Vec::new();
            for (s, seg) in g.segs.iter().enumerate() {
                let unrounded = g.unrounded.get(s).map_or(&[][..], Vec::as_slice);
                let order = g.cands[seg.cand]
                    .tree
                    .order(unrounded)
                    .map_err(|why| alloc::format!("elements {}..={}: {why}", seg.first, seg.last))?;
                let accum = if has_multiway(&order) { NumType::F32 } else { self.dtype };
                match mine.last_mut() {
                    Some(c) if c.order == order && c.accum == accum => c.last = seg.last,
                    _ => mine.push(Class { first: seg.first, last: seg.last, rank: None, equals: None, order, accum }),
                }
            }
            for c in &mut mine {
                // A family's order is written as the family writes it (the first add's operands
                // in its order: they commute, so the bits are the same).
                if let Some((name, order)) = family_equal(&c.order, c.accum, self.dtype, self.ranks) {
                    c.equals = Some(name);
                    c.order = order;
                }
            }
            if per_rank {
                for &r in &g.ranks {
                    out.extend(mine.iter().cloned().map(|c| Class { rank: Some(r), ..c }));
                }
            } else {
                out = mine;
            }
        }
        out.sort_by_key(|c| (c.rank, c.first));
        Ok(out)
    }

    /// Run 3: every element's output is its class's order on random inputs.
    fn observe_check(&mut self, outputs: &[Vec<u8>]) -> Result<(), String> {
        self.stage = Stage::Done;
        if self.hypo.is_some() {
            let classes = self.hypo_classes(outputs)?;
            self.outcome = Some(Ok(classes));
            return Ok(());
        }
        let classes = self.classes()?;
        let inputs = check_inputs(self.ranks, self.elems, self.dtype);
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let size = self.scales.size();
        for c in &classes {
            // The fast kernels' accumulation where it gives the same bits (cce-forensics' merges).
            let rule = evaluated(&Rule { order: c.order.clone(), accum: c.accum }, self.dtype, Rounding::Rne);
            let count = c.last - c.first + 1;
            let pred = rne_block(&rule, self.dtype, &slices, c.first, count).map_err(|e| e.to_string())?;
            let ranks: Vec<usize> = match c.rank {
                Some(r) => alloc::vec![r],
                None => (0..self.ranks as usize).collect(),
            };
            for r in ranks {
                let got = &outputs[r][c.first * size..(c.last + 1) * size];
                if let Some(k) = (0..count).find(|&k| pred[k * size..(k + 1) * size] != got[k * size..(k + 1) * size]) {
                    return Err(alloc::format!(
                        "run {}: on random inputs element {} of rank {r} is not {} (accumulate {}): the order depends on the values, the rounding is not to nearest even, or the adds are not what the masks showed",
                        self.runs,
                        c.first + k,
                        c.order,
                        c.accum
                    ));
                }
            }
        }
        self.outcome = Some(Ok(classes));
        Ok(())
    }
}

impl Reveal {
    /// The check of listed orders: every element keeps the orders whose bits on the random
    /// inputs are every rank's; one must be left (or several no input tells apart), and runs
    /// of elements with one order are the classes.
    fn hypo_classes(&self, outputs: &[Vec<u8>]) -> Result<Vec<Class>, String> {
        let Some(h) = &self.hypo else { return Ok(Vec::new()) };
        let inputs = check_inputs(self.ranks, self.elems, self.dtype);
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let size = self.scales.size();
        let mut used: Vec<u16> = h.alive.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        let mut bits: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
        for &k in &used {
            let rule = evaluated(&h.rules[k as usize].1, self.dtype, Rounding::Rne);
            let out = rne_block(&rule, self.dtype, &slices, 0, self.elems).map_err(|e| e.to_string())?;
            bits.insert(k, out.into_owned());
        }
        let mut out: Vec<Class> = Vec::new();
        for (e, set) in h.alive.iter().enumerate() {
            let fits: Vec<u16> = set
                .iter()
                .copied()
                .filter(|k| outputs.iter().all(|o| o[e * size..(e + 1) * size] == bits[k][e * size..(e + 1) * size]))
                .collect();
            let keys: Vec<String> =
                fits.iter().map(|&k| merge_key(&h.rules[k as usize].1, self.dtype, Rounding::Rne)).collect();
            let Some(&k) = fits.first() else {
                return Err(alloc::format!(
                    "run {}: on random inputs element {e} is none of the listed orders its masks allowed (its class is shorter than the {} elements that measure every pair)",
                    self.runs,
                    self.pairs.len()
                ));
            };
            if keys.iter().any(|x| *x != keys[0]) {
                return Err(alloc::format!(
                    "run {}: element {e} is both {} and {} on every input given, and its class is too short to measure every pair",
                    self.runs,
                    h.rules[fits[0] as usize].0,
                    h.rules[fits[1] as usize].0
                ));
            }
            let (name, rule) = &h.rules[k as usize];
            let accum = if has_multiway(&rule.order) { rule.accum } else { self.dtype };
            match out.last_mut() {
                Some(c) if c.order == rule.order && c.accum == accum && c.last + 1 == e => c.last = e,
                _ => out.push(Class {
                    first: e,
                    last: e,
                    rank: None,
                    order: rule.order.clone(),
                    accum,
                    equals: Some(name.clone()),
                }),
            }
        }
        Ok(out)
    }
}

fn ranks_of(bits: u64) -> Vec<u32> {
    (0..64).filter(|r| bits >> r & 1 == 1).collect()
}

fn rank_words(ranks: &[usize], all: usize) -> String {
    if ranks.len() == all {
        "every rank".into()
    } else if ranks.len() == 1 {
        alloc::format!("rank {}", ranks[0])
    } else {
        alloc::format!("ranks {ranks:?}")
    }
}

/// The family order (accumulated in fp32 or the buffer dtype) that gives the same bits as
/// `order` accumulated in `accum`, by [`merge_key`]: its name and its order, or `None`.
fn family_equal(order: &Order, accum: NumType, dtype: NumType, ranks: u32) -> Option<(String, Order)> {
    let key = merge_key(&Rule { order: order.clone(), accum }, dtype, Rounding::Rne);
    Family::all(ranks).into_iter().find_map(|f| {
        let fo = f.order(ranks);
        // The same text once the first adds commute, so `accum` stays the class's.
        let same = merge_key(&Rule { order: fo.clone(), accum }, dtype, Rounding::Rne) == key;
        let any = [NumType::F32, dtype]
            .into_iter()
            .any(|a| merge_key(&Rule { order: fo.clone(), accum: a }, dtype, Rounding::Rne) == key);
        any.then(|| (f.name(ranks), if same { fo } else { order.clone() }))
    })
}

/// SplitMix64 (cce-numerics' finaliser after the golden-ratio step): the check's random bits, a
/// pure function of its seed.
fn splitmix(z: u64) -> u64 {
    cce_numerics::rng::mix64(z.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// Run 3's inputs: every rank and element a different finite value, sign and significand at
/// random, exponent in −6..=6 (written as the dtype's bits directly: a normal number of every
/// dtype reveal takes).
pub(super) fn check_inputs(ranks: u32, elems: usize, dtype: NumType) -> Vec<Vec<u8>> {
    let fmt = dtype.float_format().unwrap_or(cce_numerics::FloatFormat::F32);
    let size = dtype.size();
    let (mbits, ebits) = (fmt.mbits, fmt.ebits);
    (0..ranks)
        .map(|r| {
            let mut buf = Vec::with_capacity(elems * size);
            for e in 0..elems {
                let z = splitmix(0x5eed_0000_0000_0000 ^ ((e as u64) << 8 | u64::from(r)));
                let mant = (z & ((1 << mbits) - 1)) as u32;
                let exp = (((z >> 40) % 13) as i32 - 6 + fmt.bias) as u32;
                let sign = (z >> 63) as u32;
                let bits = sign << (ebits + mbits) | exp << mbits | mant;
                buf.extend_from_slice(&bits.to_le_bytes()[..size]);
            }
            buf
        })
        .collect()
}
