//! Which order made an output: candidates ([`Candidate`]) scored element by element against a
//! [`Problem`] ([`Identification`]), then ranked, mapped and summarised ([`Report`]).
//!
//! ## Guarantees
//! - `matched` counts elements whose predicted bits equal the observed bits on every observed
//!   rank, bit for bit; nothing else is called a match.
//! - With stochastic rounding, `consistent` counts elements whose observed bits some choice of
//!   round-down / round-up at every rounding reaches (on every observed rank), tracked exactly
//!   ([`crate::eval::reachable`]); an element whose set outgrows
//!   [`MAX_REACHABLE`](crate::eval::MAX_REACHABLE) is `undecided`, never consistent.
//! - The map is the fewest ranges that explain the output ([`crate::report`]); an element its
//!   range's candidate does not explain is a `suspect` (another candidate explains it) or
//!   `unexplained` (none does), wherever it falls.
//! - Elements with a NaN or an infinity among their inputs are in no count.
//! - Candidates that are one order are one: a candidate whose order of every element has the
//!   [`merge_key`] of an earlier one's (and, for a run's outputs, the same matches) joins it
//!   as an alias; a rule shared by several candidates (a ring's chunk, a sequential sum) is
//!   evaluated once.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use cce_numerics::NumType;
use cce_numerics::order::Order;

use crate::error::ForensicsError;
use crate::eval::{Reach, check_rule, reachable, rne_block};
use crate::problem::{Problem, bit, bitmap, clear_tail, element};
use crate::report::Report;
use crate::rule::{Family, RingFamily, Rounding, Rule, evaluated, merge_key};

/// The order that made element `i` of a candidate's output.
pub type OrderOf = Arc<dyn Fn(u64) -> Order + Send + Sync>;

/// What a candidate predicts.
#[derive(Clone, Debug)]
pub enum Prediction {
    /// Every element reduced by this rule (evaluated here, block by block).
    Rule(Rule),
    /// `(first element, rule)` segments, ascending from element 0: each rule reduces its
    /// segment's elements (a ring's chunks).
    Segmented(Vec<(u64, Rule)>),
    /// Every rank's output bytes, computed elsewhere (a run of one of cce's algorithms).
    Outputs(Vec<Vec<u8>>),
}

/// One candidate explanation of an output.
#[derive(Clone)]
pub struct Candidate {
    /// Its name in reports.
    pub name: String,
    /// The `algo` name, for one of cce's algorithms.
    pub algo: Option<String>,
    /// The schedule file, for a user's MSCCL XML.
    pub file: Option<String>,
    /// The accumulate dtypes it stands for (several when merged).
    pub accum: Vec<NumType>,
    /// Other candidates merged into it (no input tells them apart).
    pub aliases: Vec<String>,
    /// Its predicted bits.
    pub prediction: Prediction,
    /// The order of element `i` (a family's by its rule; cce's algorithms' and users'
    /// schedules' from the element story, which the door computes). `None` when it is not
    /// known: the candidate has no `expr` and stochastic-rounding consistency is not computed
    /// for it (its bit-exact matches still count).
    pub order_of: Option<OrderOf>,
    /// The elements at which `order_of` changes from the element before, ascending (empty:
    /// one order throughout). The map splits its ranges there, so each range has one order.
    pub order_breaks: Vec<u64>,
}

impl core::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Candidate")
            .field("name", &self.name)
            .field("algo", &self.algo)
            .field("accum", &self.accum)
            .field("order_of", &self.order_of.as_ref().map(|o| alloc::format!("{}", o(0))))
            .finish()
    }
}

/// Every family order at `ranks` ranks with every accumulate dtype of `accums`, merged
/// (candidates no input can tell apart are one: [`merge_key`]), in [`Family::all`] order.
pub fn family_candidates(ranks: u32, dtype: NumType, accums: &[NumType], rounding: Rounding) -> Vec<Candidate> {
    let mut keys: Vec<String> = Vec::new();
    let mut out: Vec<Candidate> = Vec::new();
    for f in Family::all(ranks) {
        for &accum in accums {
            let rule = Rule { order: f.order(ranks), accum };
            let key = merge_key(&rule, dtype, rounding);
            let name = f.name(ranks);
            if let Some(k) = keys.iter().position(|x| *x == key) {
                let c = &mut out[k];
                if !c.accum.contains(&accum) {
                    c.accum.push(accum);
                }
                if c.name != name && !c.aliases.contains(&name) {
                    c.aliases.push(name);
                }
                continue;
            }
            keys.push(key);
            let order = rule.order.clone();
            out.push(Candidate {
                name,
                algo: None,
                file: None,
                accum: alloc::vec![accum],
                aliases: Vec::new(),
                prediction: Prediction::Rule(evaluated(&rule, dtype, rounding)),
                order_of: Some(Arc::new(move |_| order.clone())),
                order_breaks: Vec::new(),
            });
        }
    }
    // Names stay unique: a candidate that stands for some of the accumulations says which.
    for c in &mut out {
        if c.accum.len() < accums.len() {
            let list: Vec<&str> = c.accum.iter().map(|a| a.name()).collect();
            c.name = alloc::format!("{}, accumulate {}", c.name, list.join(" or "));
        }
    }
    out
}

/// Every ring ([`RingFamily::all`]) over `elems` elements of `dtype` at `ranks` ranks, each
/// accumulate dtype of `accums`: one candidate per distinct order of every element (a layout
/// whose chunks are another's adds nothing), named for what it stands for.
pub fn ring_candidates(
    ranks: u32,
    elems: u64,
    dtype: NumType,
    accums: &[NumType],
    rounding: Rounding,
) -> Vec<Candidate> {
    let mut keys: Vec<String> = Vec::new();
    let mut out: Vec<Candidate> = Vec::new();
    for ring in RingFamily::all(ranks) {
        let orders = ring.segments(elems, ranks, dtype.size() as u64);
        for &accum in accums {
            let rules: Vec<(u64, Rule)> = orders
                .iter()
                .map(|(first, order)| (*first, evaluated(&Rule { order: order.clone(), accum }, dtype, rounding)))
                .collect();
            let key = signature_text(&rules, dtype, rounding);
            let name = ring.name(ranks);
            if let Some(k) = keys.iter().position(|x| *x == key) {
                let c = &mut out[k];
                if !c.accum.contains(&accum) {
                    c.accum.push(accum);
                }
                let same_ring =
                    c.name.trim_end_matches(ring.layout.suffix()) == name.trim_end_matches(ring.layout.suffix());
                if c.name != name && !c.aliases.contains(&name) && !same_ring {
                    c.aliases.push(name);
                }
                continue;
            }
            keys.push(key);
            out.push(segmented_candidate(name, accum, rules, orders.clone()));
        }
    }
    for c in &mut out {
        if c.accum.len() < accums.len() {
            let list: Vec<&str> = c.accum.iter().map(|a| a.name()).collect();
            c.name = alloc::format!("{}, accumulate {}", c.name, list.join(" or "));
        }
    }
    out
}

/// A candidate of per-segment rules, its order per element from `orders`.
fn segmented_candidate(name: String, accum: NumType, rules: Vec<(u64, Rule)>, orders: Vec<(u64, Order)>) -> Candidate {
    let order_breaks: Vec<u64> = orders.windows(2).filter(|w| w[0].1 != w[1].1).map(|w| w[1].0).collect();
    let order_of: OrderOf = Arc::new(move |i| {
        let k = orders.partition_point(|(first, _)| *first <= i).saturating_sub(1);
        orders[k].1.clone()
    });
    Candidate {
        name,
        algo: None,
        file: None,
        accum: alloc::vec![accum],
        aliases: Vec::new(),
        prediction: Prediction::Segmented(rules),
        order_of: Some(order_of),
        order_breaks,
    }
}

/// The merge keys of a candidate's segments, consecutive equal keys as one, as text.
fn signature_text(rules: &[(u64, Rule)], dtype: NumType, rounding: Rounding) -> String {
    let mut out = String::new();
    let mut last = String::new();
    for (first, rule) in rules {
        let key = merge_key(rule, dtype, rounding);
        if key != last {
            out.push_str(&alloc::format!("{first}:{key};"));
            last = key;
        }
    }
    out
}

/// A scored candidate.
struct Scored {
    candidate: Candidate,
    matched: Vec<u64>,
    consistent: Option<Vec<u64>>,
    undecided: u64,
    /// Its orders' merge keys by segment ([`signature_text`]), when its order is known.
    signature: Option<String>,
}

/// One rule's evaluation, kept for every candidate that uses it.
struct Evaluated {
    key: String,
    matched: Vec<u64>,
    /// With stochastic rounding: the consistent elements and the undecided ones.
    sr: Option<(Vec<u64>, Vec<u64>)>,
}

/// Candidates scored against one [`Problem`].
pub struct Identification<'p, 'a> {
    problem: &'p Problem<'a>,
    rounding: Rounding,
    threads: usize,
    scored: Vec<Scored>,
    cache: Vec<Evaluated>,
}

/// Per item: a bitmap (or a piece of one) and a count.
type Pieces<T> = Vec<(Vec<u64>, T)>;

/// Elements per block of the RNE evaluation (a multiple of 64: blocks fill whole words).
const BLOCK: usize = 4096;

impl<'p, 'a> Identification<'p, 'a> {
    /// No candidates yet; rule candidates are evaluated on `threads` threads (at least 1).
    pub fn new(problem: &'p Problem<'a>, rounding: Rounding, threads: usize) -> Self {
        Identification { problem, rounding, threads: threads.max(1), scored: Vec::new(), cache: Vec::new() }
    }

    /// Scores `candidates` (the rules not evaluated yet evaluated together, block by block;
    /// outputs compared and dropped). A candidate whose orders are an earlier one's joins it as
    /// an alias (module docs).
    pub fn add(&mut self, candidates: Vec<Candidate>) -> Result<(), ForensicsError> {
        let p = self.problem;
        for c in &candidates {
            self.check(c)?;
        }
        let mut need: Vec<(String, Rule)> = Vec::new();
        for c in &candidates {
            for (_, rule) in rules_of(&c.prediction) {
                let key = merge_key(&rule, p.dtype, self.rounding);
                if !self.cache.iter().any(|e| e.key == key) && !need.iter().any(|(k, _)| *k == key) {
                    need.push((key, rule));
                }
            }
        }
        let rules: Vec<&Rule> = need.iter().map(|(_, r)| r).collect();
        let bits = self.rne_matches(&rules)?;
        let mut sets = match self.rounding {
            Rounding::Sr => self.sr_consistency(&rules).into_iter().map(Some).collect(),
            Rounding::Rne => Vec::new(),
        }
        .into_iter();
        for ((key, _), matched) in need.into_iter().zip(bits) {
            self.cache.push(Evaluated { key, matched, sr: sets.next().flatten() });
        }
        for mut c in candidates {
            let (matched, sets) = match &mut c.prediction {
                Prediction::Outputs(outs) => {
                    let matched = self.output_matches(outs);
                    // The bytes are compared: they are not kept.
                    *outs = Vec::new();
                    let sets = match (&c.order_of, self.rounding) {
                        (Some(of), Rounding::Sr) => Some(self.sr_of_orders(of, c.accum[0])),
                        _ => None,
                    };
                    (matched, sets)
                }
                prediction => self.composed(&rules_of(prediction)),
            };
            let (consistent, undecided) = match sets {
                Some((bits, undecided)) => (Some(bits), undecided),
                None => (None, 0),
            };
            let signature = self.signature(&c);
            if let Some(k) = self.same_as(signature.as_deref(), &matched) {
                merge_into(&mut self.scored[k].candidate, c);
                continue;
            }
            self.scored.push(Scored { candidate: c, matched, consistent, undecided, signature });
        }
        Ok(())
    }

    /// Checks a candidate's prediction against the problem's shapes.
    fn check(&self, c: &Candidate) -> Result<(), ForensicsError> {
        let p = self.problem;
        match &c.prediction {
            Prediction::Rule(rule) => check_rule(rule, p.ranks(), p.dtype),
            Prediction::Segmented(rules) => {
                if rules.first().map(|r| r.0) != Some(0) || rules.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return Err(ForensicsError::Segments(c.name.clone()));
                }
                rules.iter().try_for_each(|(_, rule)| check_rule(rule, p.ranks(), p.dtype))
            }
            Prediction::Outputs(outs) => {
                let len = p.inputs[0].len();
                if outs.len() != p.ranks() || outs.iter().any(|o| o.len() != len) {
                    return Err(ForensicsError::CandidateOutputs {
                        name: c.name.clone(),
                        got: outs.len(),
                        len: outs.first().map_or(0, Vec::len),
                        ranks: p.ranks(),
                        expected: len,
                    });
                }
                Ok(())
            }
        }
    }

    /// A rule candidate's matches (and with stochastic rounding, its consistency and undecided
    /// count) put together from the evaluated rules, segment by segment.
    fn composed(&self, rules: &[(u64, Rule)]) -> (Vec<u64>, Option<(Vec<u64>, u64)>) {
        let p = self.problem;
        let n = p.elems as u64;
        let mut matched = bitmap(p.elems);
        let sr = self.rounding == Rounding::Sr;
        let (mut consistent, mut undecided) = (bitmap(p.elems), bitmap(p.elems));
        for (k, (first, rule)) in rules.iter().enumerate() {
            let end = rules.get(k + 1).map_or(n, |r| r.0).min(n);
            let key = merge_key(rule, p.dtype, self.rounding);
            let Some(e) = self.cache.iter().find(|e| e.key == key) else { continue };
            copy_range(&mut matched, &e.matched, *first as usize, end as usize);
            if let Some((c, u)) = &e.sr {
                copy_range(&mut consistent, c, *first as usize, end as usize);
                copy_range(&mut undecided, u, *first as usize, end as usize);
            }
        }
        let sets = sr.then(|| {
            let count = undecided.iter().map(|w| u64::from(w.count_ones())).sum();
            (consistent, count)
        });
        (matched, sets)
    }

    /// A candidate's orders as merge keys by segment, when known.
    fn signature(&self, c: &Candidate) -> Option<String> {
        let p = self.problem;
        match &c.prediction {
            Prediction::Rule(rule) => Some(signature_text(&[(0, rule.clone())], p.dtype, self.rounding)),
            Prediction::Segmented(rules) => Some(signature_text(rules, p.dtype, self.rounding)),
            Prediction::Outputs(_) => {
                let of = c.order_of.as_ref()?;
                let accum = *c.accum.first()?;
                let firsts = core::iter::once(0).chain(c.order_breaks.iter().copied());
                let rules: Vec<(u64, Rule)> = firsts.map(|i| (i, Rule { order: of(i), accum })).collect();
                if rules.iter().any(|(_, r)| check_rule(r, p.ranks(), p.dtype).is_err()) {
                    return None;
                }
                Some(signature_text(&rules, p.dtype, self.rounding))
            }
        }
    }

    /// The scored candidate with this signature and these matches, if any.
    fn same_as(&self, signature: Option<&str>, matched: &[u64]) -> Option<usize> {
        let signature = signature?;
        self.scored.iter().position(|s| s.signature.as_deref() == Some(signature) && s.matched == matched)
    }

    /// The word ranges of the threads.
    fn parts(&self) -> Vec<(usize, usize)> {
        let words = self.problem.elems.div_ceil(64);
        let per = words.div_ceil(self.threads).max(1);
        (0..words).step_by(per).map(|w| (w, (w + per).min(words))).collect()
    }

    /// Runs `f` over every thread's word range, each giving one bitmap piece per item; the
    /// pieces joined in element order, per item.
    fn par<T>(
        &self,
        items: usize,
        f: impl Fn(usize, usize) -> Result<Pieces<T>, ForensicsError> + Sync,
    ) -> Result<Pieces<T>, ForensicsError>
    where
        T: Default + Send + core::ops::AddAssign,
    {
        let parts = self.parts();
        let f = &f;
        let pieces: Vec<Result<Pieces<T>, ForensicsError>> = std::thread::scope(|s| {
            let handles: Vec<_> = parts.iter().map(|&(w0, w1)| s.spawn(move || f(w0, w1))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let mut out: Vec<(Vec<u64>, T)> = (0..items).map(|_| (Vec::new(), T::default())).collect();
        for piece in pieces {
            for (k, (bits, t)) in piece?.into_iter().enumerate() {
                out[k].0.extend(bits);
                out[k].1 += t;
            }
        }
        Ok(out)
    }

    /// Each rule's RNE bits compared with the observed outputs: a match bitmap per rule.
    fn rne_matches(&self, rules: &[&Rule]) -> Result<Vec<Vec<u64>>, ForensicsError> {
        if rules.is_empty() {
            return Ok(Vec::new());
        }
        let p = self.problem;
        let size = p.dtype.size();
        let scored = self.par(rules.len(), |w0, w1| {
            let first = w0 * 64;
            let end = (w1 * 64).min(p.elems);
            let mut out: Vec<(Vec<u64>, u64)> = rules.iter().map(|_| (alloc::vec![0; w1 - w0], 0)).collect();
            let mut at = first;
            while at < end {
                let count = BLOCK.min(end - at);
                for (k, rule) in rules.iter().enumerate() {
                    let pred = rne_block(rule, p.dtype, &p.inputs, at, count)?;
                    compare(&pred, &p.observed, size, at, count, &mut out[k].0[(at - first) / 64..]);
                }
                at += count;
            }
            Ok(out)
        })?;
        Ok(scored.into_iter().map(|(mut bits, _)| self.keep_finite(&mut bits)).collect())
    }

    fn keep_finite(&self, bits: &mut Vec<u64>) -> Vec<u64> {
        for (w, f) in bits.iter_mut().zip(&self.problem.finite) {
            *w &= f;
        }
        clear_tail(bits, self.problem.elems);
        core::mem::take(bits)
    }

    /// A run's outputs compared with the observed ones, rank by rank.
    fn output_matches(&self, outs: &[Vec<u8>]) -> Vec<u64> {
        let p = self.problem;
        let size = p.dtype.size();
        let mut bits = bitmap(p.elems);
        for j in 0..p.elems {
            let same =
                p.observed.iter().all(|&(r, o)| o[j * size..(j + 1) * size] == outs[r][j * size..(j + 1) * size]);
            bits[j / 64] |= u64::from(same) << (j % 64);
        }
        self.keep_finite(&mut bits)
    }

    /// Whether the observed bits of element `j` are in `reach` on every observed rank.
    fn observed_in(&self, j: usize, reach: &Reach) -> Option<bool> {
        let size = self.problem.dtype.size();
        match reach {
            Reach::Values(v) => {
                Some(self.problem.observed.iter().all(|&(_, o)| v.binary_search(&element(o, size, j)).is_ok()))
            }
            Reach::TooMany => None,
        }
    }

    /// Each rule's stochastic-rounding consistency: per rule, the consistent elements and the
    /// undecided ones (bitmaps).
    fn sr_consistency(&self, rules: &[&Rule]) -> Vec<(Vec<u64>, Vec<u64>)> {
        let p = self.problem;
        let size = p.dtype.size();
        // Item 2k: rule k's consistent elements; item 2k + 1: its undecided ones.
        let scored = self.par(2 * rules.len(), |w0, w1| {
            let mut out: Vec<(Vec<u64>, u64)> = (0..2 * rules.len()).map(|_| (alloc::vec![0; w1 - w0], 0)).collect();
            let mut values = alloc::vec![0u32; p.ranks()];
            for j in w0 * 64..(w1 * 64).min(p.elems) {
                if !bit(&p.finite, j) {
                    continue;
                }
                for (r, v) in values.iter_mut().enumerate() {
                    *v = element(p.inputs[r], size, j);
                }
                for (k, rule) in rules.iter().enumerate() {
                    match self.observed_in(j, &reachable(rule, p.dtype, &values)) {
                        Some(true) => out[2 * k].0[j / 64 - w0] |= 1 << (j % 64),
                        Some(false) => {}
                        None => out[2 * k + 1].0[j / 64 - w0] |= 1 << (j % 64),
                    }
                }
            }
            Ok(out)
        });
        let mut it = scored.unwrap_or_default().into_iter().map(|(bits, _)| bits);
        let mut out = Vec::new();
        while let (Some(c), Some(u)) = (it.next(), it.next()) {
            out.push((c, u));
        }
        out
    }

    /// Stochastic-rounding consistency of a candidate whose order varies by element.
    fn sr_of_orders(&self, order_of: &OrderOf, accum: NumType) -> (Vec<u64>, u64) {
        let p = self.problem;
        let size = p.dtype.size();
        let mut bits = bitmap(p.elems);
        let mut undecided = 0;
        let mut values = alloc::vec![0u32; p.ranks()];
        let mut rule = Rule { order: order_of(0), accum };
        for j in 0..p.elems {
            if !bit(&p.finite, j) {
                continue;
            }
            let order = order_of(j as u64);
            if order != rule.order {
                rule.order = order;
            }
            if check_rule(&rule, p.ranks(), p.dtype).is_err() {
                undecided += 1;
                continue;
            }
            for (r, v) in values.iter_mut().enumerate() {
                *v = element(p.inputs[r], size, j);
            }
            match self.observed_in(j, &reachable(&rule, p.dtype, &values)) {
                Some(true) => bits[j / 64] |= 1 << (j % 64),
                Some(false) => {}
                None => undecided += 1,
            }
        }
        (bits, undecided)
    }

    /// The ranking, the map, the unexplained elements and the separation of the top two.
    pub fn report(self) -> Report {
        crate::report::build(self.problem, self.rounding, self.scored.into_iter().map(Scored::into_parts).collect())
    }
}

impl Scored {
    fn into_parts(self) -> crate::report::Evidence {
        crate::report::Evidence {
            candidate: self.candidate,
            matched: self.matched,
            consistent: self.consistent,
            undecided: self.undecided,
        }
    }
}

/// The rules of a rule prediction, as segments (none for outputs).
fn rules_of(p: &Prediction) -> Vec<(u64, Rule)> {
    match p {
        Prediction::Rule(rule) => alloc::vec![(0, rule.clone())],
        Prediction::Segmented(rules) => rules.clone(),
        Prediction::Outputs(_) => Vec::new(),
    }
}

/// A candidate that is an earlier one's orders joins it: its name and aliases become aliases
/// (one of cce's algorithms lends its name, the family's becomes the alias), its accumulate
/// dtypes are added.
fn merge_into(c: &mut Candidate, new: Candidate) {
    let mut names = alloc::vec![new.name.clone()];
    names.extend(new.aliases);
    if new.algo.is_some() && c.algo.is_none() {
        let old = core::mem::replace(&mut c.name, new.name);
        names[0] = old;
        c.algo = new.algo;
        c.file = c.file.take().or(new.file);
    }
    for n in names {
        if n != c.name && !c.aliases.contains(&n) {
            c.aliases.push(n);
        }
    }
    for a in new.accum {
        if !c.accum.contains(&a) {
            c.accum.push(a);
        }
    }
}

/// Copies the bits of elements `from..to` of `src` into `dst`.
fn copy_range(dst: &mut [u64], src: &[u64], from: usize, to: usize) {
    let mut j = from;
    while j < to {
        let w = j / 64;
        let lo = j % 64;
        let hi = (to - w * 64).min(64);
        let mask = if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo };
        dst[w] = (dst[w] & !mask) | (src[w] & mask);
        j = w * 64 + hi;
    }
}

/// Sets bit `k` of `bits` (element `at + k`, `at` a multiple of 64) where `pred` equals every
/// observed output.
fn compare(pred: &[u8], observed: &[(usize, &[u8])], size: usize, at: usize, count: usize, bits: &mut [u64]) {
    for (k, word) in bits.iter_mut().take(count.div_ceil(64)).enumerate() {
        let lo = k * 64;
        let hi = (lo + 64).min(count);
        let mut w = u64::MAX >> (64 - (hi - lo));
        for &(_, o) in observed {
            let o = &o[(at + lo) * size..(at + hi) * size];
            let p = &pred[lo * size..hi * size];
            let mut eq = 0u64;
            match size {
                2 => {
                    for (i, (a, b)) in p.chunks_exact(2).zip(o.chunks_exact(2)).enumerate() {
                        eq |= u64::from(a == b) << i;
                    }
                }
                _ => {
                    for (i, (a, b)) in p.chunks_exact(size).zip(o.chunks_exact(size)).enumerate() {
                        eq |= u64::from(a == b) << i;
                    }
                }
            }
            w &= eq;
        }
        *word = w;
    }
}
