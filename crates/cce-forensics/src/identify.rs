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
//! - The map's ranges each name a candidate that explains every explained element in it; the
//!   elements no candidate explains are listed as `unexplained`, wherever they fall.
//! - Elements with a NaN or an infinity among their inputs are in no count.

use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use cce_numerics::NumType;
use cce_numerics::order::Order;

use crate::error::ForensicsError;
use crate::eval::{Reach, check_rule, reachable, rne_block};
use crate::problem::{Problem, bit, bitmap, clear_tail, element};
use crate::report::Report;
use crate::rule::{Family, Rounding, Rule, evaluated, merge_key};

/// The order that made element `i` of a candidate's output.
pub type OrderOf = Arc<dyn Fn(u64) -> Order + Send + Sync>;

/// What a candidate predicts.
#[derive(Clone, Debug)]
pub enum Prediction {
    /// Every element reduced by this rule (evaluated here, block by block).
    Rule(Rule),
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

/// A scored candidate.
struct Scored {
    candidate: Candidate,
    matched: Vec<u64>,
    consistent: Option<Vec<u64>>,
    undecided: u64,
}

/// Candidates scored against one [`Problem`].
pub struct Identification<'p, 'a> {
    problem: &'p Problem<'a>,
    rounding: Rounding,
    threads: usize,
    scored: Vec<Scored>,
}

/// Per item: a bitmap (or a piece of one) and a count.
type Pieces<T> = Vec<(Vec<u64>, T)>;

/// Elements per block of the RNE evaluation (a multiple of 64: blocks fill whole words).
const BLOCK: usize = 4096;

impl<'p, 'a> Identification<'p, 'a> {
    /// No candidates yet; rule candidates are evaluated on `threads` threads (at least 1).
    pub fn new(problem: &'p Problem<'a>, rounding: Rounding, threads: usize) -> Self {
        Identification { problem, rounding, threads: threads.max(1), scored: Vec::new() }
    }

    /// Scores `candidates` (rules evaluated together, block by block; outputs compared and
    /// dropped).
    pub fn add(&mut self, candidates: Vec<Candidate>) -> Result<(), ForensicsError> {
        let p = self.problem;
        for c in &candidates {
            match &c.prediction {
                Prediction::Rule(rule) => check_rule(rule, p.ranks(), p.dtype)?,
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
                }
            }
        }
        let rules: Vec<&Rule> = candidates
            .iter()
            .filter_map(|c| match &c.prediction {
                Prediction::Rule(r) => Some(r),
                Prediction::Outputs(_) => None,
            })
            .collect();
        let mut rule_bits = self.rne_matches(&rules)?.into_iter();
        let mut rule_sets = match self.rounding {
            Rounding::Sr => self.sr_consistency(&rules).into_iter().map(Some).collect(),
            Rounding::Rne => Vec::new(),
        }
        .into_iter();
        for mut c in candidates {
            let (matched, sets) = match &mut c.prediction {
                Prediction::Rule(_) => (rule_bits.next().unwrap_or_default(), rule_sets.next().flatten()),
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
            };
            let (consistent, undecided) = match sets {
                Some((bits, undecided)) => (Some(bits), undecided),
                None => (None, 0),
            };
            self.scored.push(Scored { candidate: c, matched, consistent, undecided });
        }
        Ok(())
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

    /// Each rule's stochastic-rounding consistency: a bitmap per rule and its undecided count.
    fn sr_consistency(&self, rules: &[&Rule]) -> Vec<(Vec<u64>, u64)> {
        let p = self.problem;
        let size = p.dtype.size();
        let scored = self.par(rules.len(), |w0, w1| {
            let mut out: Vec<(Vec<u64>, u64)> = rules.iter().map(|_| (alloc::vec![0; w1 - w0], 0)).collect();
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
                        Some(true) => out[k].0[j / 64 - w0] |= 1 << (j % 64),
                        Some(false) => {}
                        None => out[k].1 += 1,
                    }
                }
            }
            Ok(out)
        });
        scored.unwrap_or_default()
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
