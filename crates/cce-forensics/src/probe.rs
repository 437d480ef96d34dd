//! The probe: inputs on which every pair of (merged) family orders gives different bits in
//! every window of [`Probe::period`] ≤ 64 consecutive elements, so that one all-reduce of them
//! on the hardware names its order chunk by chunk.
//!
//! ## Design
//! Every element is a *cancellation*: rank `a` holds `+B`, rank `b` holds `−B`, every other rank
//! a small value `w·c_r` (`c_r` = 1, or 1 + r mod 2), with `B = w·2^(p+8)` for the buffer
//! dtype's precision p. In an order that rounds to the buffer dtype after every add, once `±B`
//! is in a partial every small value added is rounded away (it is below half an ulp of B), and
//! when the two meet they cancel exactly: the output is the exact sum of the small values that
//! enter *after* both, which says where `a` and `b` sit in the order. A single reduce in fp32
//! keeps every small value (fp32 holds `B` + 8 more bits exactly), and a tree drops those of the
//! subtrees that meet `±B` before the two meet. The pool holds every ordered pair `(a, b)` with
//! both weightings; the probe takes, greedily, the element that separates the most pairs of
//! candidate orders not yet separated [`SEPARATIONS`] times, until every pair is (at most 64
//! elements; else the probe is refused, naming the pairs left). Element `i` is pool element `i mod P`, negated on odd
//! periods (RNE is symmetric in sign, so each period separates the same pairs).
//!
//! ## Guarantees
//! - [`make_probe`] returns only a probe whose period separates every pair of the merged
//!   family candidates ([`crate::identify::family_candidates`], RNE, accumulate fp32 or the
//!   buffer dtype), and of them and the orders in 3-source steps (`outside_orders`),
//!   [`SEPARATIONS`] times each, evaluated by cce-numerics' reduce; `tests/probe.rs` checks it again with an
//!   independent reference at R = 4, 8, 16, 32.

use alloc::string::String;
use alloc::vec::Vec;

use cce_numerics::NumType;
use cce_numerics::float::{decode, round_value};

use crate::error::ForensicsError;
use crate::eval::rne_block;
use crate::identify::{Prediction, family_candidates};
use crate::problem::element;
use crate::rule::{Family, Rounding, Rule, merge_key};
use cce_numerics::order::Order;

/// The longest period a probe may have: a chunk of 64 elements holds all of it.
pub const MAX_PERIOD: usize = 64;

/// Probe inputs, one buffer per rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Every rank's input (little-endian elements of the dtype).
    pub inputs: Vec<Vec<u8>>,
    /// Elements per period: any `period` consecutive elements separate every pair.
    pub period: usize,
    /// The merged family candidates it separates.
    pub orders: usize,
}

/// Orders outside the families that the probe separates too (not candidates of the
/// identification: design aids that keep the probe telling apart orders a hardware run may
/// use): the sequential sum in 3-source steps, `((a+b+c)+d+e)+…` accumulated in fp32 (a
/// two-source last step when R is even), from every start rank in both directions — the shape
/// of the study's three-source ring steps. Those no family rule merges with.
fn outside_orders(ranks: u32, dtype: NumType, family: &[(String, Rule)]) -> Vec<(String, Rule)> {
    let keys: Vec<String> = family.iter().map(|(_, r)| merge_key(r, dtype, Rounding::Rne)).collect();
    let mut out: Vec<(String, Rule)> = Vec::new();
    for f in Family::all(ranks) {
        let Family::Sequential { start, up } = f else { continue };
        let leaves = f.order(ranks).leaves();
        let mut order = Order::Round(leaves.iter().take(3).map(|&r| Order::Rank(r)).collect());
        for pair in leaves[3.min(leaves.len())..].chunks(2) {
            let mut ops = alloc::vec![order];
            ops.extend(pair.iter().map(|&r| Order::Rank(r)));
            order = Order::Round(ops);
        }
        let rule = Rule { order, accum: NumType::F32 };
        let key = merge_key(&rule, dtype, Rounding::Rne);
        if keys.contains(&key) || out.iter().any(|(_, r)| merge_key(r, dtype, Rounding::Rne) == key) {
            continue;
        }
        let dir = if up { "up" } else { "down" };
        out.push((alloc::format!("3-source steps from {start} {dir}"), rule));
    }
    out
}

/// One pool element: the cancelling ranks and the weighting.
#[derive(Clone, Copy, Debug)]
struct Cancel {
    plus: u32,
    minus: u32,
    alternate: bool,
}

/// The encodings of `+B` and of the small unit `w` in `dtype`, checked exact.
fn scales(dtype: NumType) -> Result<(u32, f64, f64), ForensicsError> {
    let fmt = dtype.float_format().ok_or(ForensicsError::NotFloat(dtype))?;
    let p = fmt.precision() as i32;
    let e_b = (p + 8).min(fmt.bias);
    let e_w = e_b - p - 8;
    let (b, w) = (libm_pow2(e_b), libm_pow2(e_w));
    let exact = |x: f64| decode(fmt, round_value(x, fmt, None)) == x;
    if !(exact(b) && exact(w) && exact(2.0 * w)) {
        return Err(ForensicsError::Probe(alloc::format!(
            "{dtype} cannot hold a cancelling pair 2^{} times its small values (bf16, fp16, fp32, fp8e4 and fp8e5 can)",
            p + 8
        )));
    }
    Ok((fmt.sign_bit(), b, w))
}

fn libm_pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// The values of one pool element at rank `r`.
fn value(c: Cancel, r: u32, b: f64, w: f64) -> f64 {
    if r == c.plus {
        b
    } else if r == c.minus {
        -b
    } else if c.alternate {
        w * f64::from(1 + r % 2)
    } else {
        w
    }
}

/// Probe inputs of `elems` elements per rank for `ranks` ranks of `dtype` (see the module
/// docs), or the refusal: a dtype too narrow, or pairs no pool element separates.
pub fn make_probe(ranks: u32, elems: usize, dtype: NumType) -> Result<Probe, ForensicsError> {
    if !(2..=crate::problem::MAX_RANKS as u32).contains(&ranks) {
        return Err(ForensicsError::Ranks { ranks: ranks as usize, max: crate::problem::MAX_RANKS });
    }
    let (sign, b, w) = scales(dtype)?;
    let fmt = dtype.float_format().ok_or(ForensicsError::NotFloat(dtype))?;
    let pool: Vec<Cancel> = (0..ranks)
        .flat_map(|plus| (0..ranks).filter(move |&m| m != plus).map(move |minus| (plus, minus)))
        .flat_map(|(plus, minus)| [false, true].map(|alternate| Cancel { plus, minus, alternate }))
        .collect();
    let size = dtype.size();
    let encode = |x: f64| round_value(x, fmt, None);
    let inputs: Vec<Vec<u8>> = (0..ranks)
        .map(|r| pool.iter().flat_map(|&c| encode(value(c, r, b, w)).to_le_bytes()[..size].to_vec()).collect())
        .collect();
    let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let candidates = family_candidates(ranks, dtype, &[NumType::F32, dtype], Rounding::Rne);
    let mut rules: Vec<(String, Rule)> = candidates
        .iter()
        .filter_map(|c| match &c.prediction {
            Prediction::Rule(rule) => Some((c.name.clone(), rule.clone())),
            Prediction::Segmented(_) | Prediction::Outputs(_) => None,
        })
        .collect();
    rules.extend(outside_orders(ranks, dtype, &rules));
    let mut outputs: Vec<Vec<u32>> = Vec::new();
    for (_, rule) in &rules {
        let out = rne_block(rule, dtype, &slices, 0, pool.len())?;
        outputs.push((0..pool.len()).map(|j| element(&out, size, j)).collect());
    }
    let names: Vec<String> = rules.iter().map(|(n, _)| n.clone()).collect();
    let chosen = choose(&outputs, &names, candidates.len())?;
    let period = chosen.len();
    let inputs = (0..ranks)
        .map(|r| {
            let mut bytes = Vec::with_capacity(elems * size);
            for i in 0..elems {
                let t = chosen[i % period];
                let flip = if (i / period) % 2 == 1 { sign } else { 0 };
                bytes.extend_from_slice(&(encode(value(pool[t], r, b, w)) ^ flip).to_le_bytes()[..size]);
            }
            bytes
        })
        .collect();
    Ok(Probe { inputs, period, orders: candidates.len() })
}

/// How many elements of a period separate each pair (when the pool has that many): one
/// corrupted or unexpected element still leaves the pair separated.
pub const SEPARATIONS: usize = 4;

/// The pool elements, greedily, that separate every pair of `outputs` (one row per rule, one
/// value per pool element; the first `family` rows the family's) [`SEPARATIONS`] times, or as
/// often as the pool can: every pair of family rules (refused when the pool cannot), and each
/// family rule from each outside order (when the pool can).
fn choose(outputs: &[Vec<u32>], names: &[String], family: usize) -> Result<Vec<usize>, ForensicsError> {
    let pool = outputs.first().map_or(0, Vec::len);
    let differ = |(i, j): (usize, usize), t: usize| outputs[i][t] != outputs[j][t];
    // Each pair with the separations it still needs.
    let mut left: Vec<((usize, usize), usize)> = (0..family)
        .flat_map(|i| (i + 1..outputs.len()).map(move |j| (i, j)))
        .map(|p| (p, SEPARATIONS.min((0..pool).filter(|&t| differ(p, t)).count())))
        .collect();
    if let Some(&((i, j), _)) = left.iter().find(|&&((_, j), need)| need == 0 && j < family) {
        let n = left.iter().filter(|&&((_, j), need)| need == 0 && j < family).count();
        return Err(ForensicsError::Probe(alloc::format!(
            "{n} pairs of orders give the same bits on every probe element (first: {} and {})",
            names[i],
            names[j]
        )));
    }
    left.retain(|&(_, need)| need > 0);
    let mut chosen: Vec<usize> = Vec::new();
    while !left.is_empty() {
        let gain = |t: usize| left.iter().filter(|&&(p, _)| differ(p, t)).count();
        let best = (0..pool)
            .filter(|t| !chosen.contains(t))
            .map(|t| (t, gain(t)))
            .max_by_key(|&(t, n)| (n, core::cmp::Reverse(t)));
        match best {
            Some((t, n)) if n > 0 && chosen.len() < MAX_PERIOD => {
                chosen.push(t);
                for (p, need) in &mut left {
                    if differ(*p, t) {
                        *need -= 1;
                    }
                }
                left.retain(|&(_, need)| need > 0);
            }
            _ => {
                let ((i, j), _) = left[0];
                return Err(ForensicsError::Probe(alloc::format!(
                    "{} pairs of orders are not separated {SEPARATIONS} times within {MAX_PERIOD} elements (first: {} and {})",
                    left.len(),
                    names[i],
                    names[j]
                )));
            }
        }
    }
    if chosen.is_empty() {
        // One candidate: any element is a probe.
        chosen.push(0);
    }
    Ok(chosen)
}
