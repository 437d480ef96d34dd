//! A [`Rule`] over elements: the bits it gives with RNE, whole blocks at a time through
//! cce-numerics' vectorised reduce ([`rne_block`]: a parenthesis of k operands is one k-source
//! reduce, accumulate dtype → buffer dtype), and with stochastic rounding the set of values
//! some choice of round-down / round-up at every rounding reaches ([`reachable`], one element
//! at a time).
//!
//! ## Guarantees
//! - [`rne_block`]'s bits are cce-numerics' reduce's, which is bit-exact (its own tests).
//! - [`reachable`] holds every value the model's stochastic rounding can give (its two outcomes
//!   per rounding are those of random bits 0 and 2³² − 1, [`cce_numerics::float::round_value`])
//!   and nothing else, or says it gave up: a set larger than [`MAX_REACHABLE`] after any
//!   step ([`Reach::TooMany`]). Sets stay small: after k roundings the reachable values lie
//!   within about k buffer-dtype ulps of each other.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use cce_numerics::float::{decode, round_value, sum_for_rounding};
use cce_numerics::order::Order;
use cce_numerics::{FloatFormat, NumType, ReduceSpec, reduce};

use crate::error::ForensicsError;
use crate::rule::Rule;

/// The most values [`reachable`] tracks for one element before it gives up.
pub const MAX_REACHABLE: usize = 64;

fn order_error(order: &Order, why: &'static str) -> ForensicsError {
    ForensicsError::Order { order: alloc::format!("{order}"), why }
}

/// Checks that `rule` can be evaluated over `ranks` ranks of `dtype`: ranks in range, no GCE
/// hop, at most 32 operands per parenthesis, a float accumulate dtype.
pub fn check_rule(rule: &Rule, ranks: usize, dtype: NumType) -> Result<(), ForensicsError> {
    if rule.accum.float_format().is_none() || rule.accum.size() < dtype.size() && rule.accum != NumType::F32 {
        return Err(ForensicsError::Accum(rule.accum));
    }
    let mut stack = alloc::vec![&rule.order];
    while let Some(o) = stack.pop() {
        match o {
            Order::Rank(r) if *r as usize >= ranks => return Err(order_error(&rule.order, "a rank beyond the inputs")),
            Order::Rank(_) => {}
            Order::Gce(_) => return Err(order_error(&rule.order, "a GCE hop is not evaluated by identify")),
            Order::Round(v) if v.is_empty() => return Err(order_error(&rule.order, "an empty parenthesis")),
            Order::Round(v) if v.len() > cce_numerics::MAX_SOURCES => {
                return Err(order_error(&rule.order, "more than 32 operands in one reduce"));
            }
            Order::Round(v) => stack.extend(v.iter()),
        }
    }
    Ok(())
}

/// The bits of `rule` (checked by [`check_rule`]) over the elements `first..first + count` of
/// `inputs` (one buffer of `dtype` per rank), with RNE.
pub fn rne_block<'a>(
    rule: &Rule,
    dtype: NumType,
    inputs: &[&'a [u8]],
    first: usize,
    count: usize,
) -> Result<Cow<'a, [u8]>, ForensicsError> {
    let size = dtype.size();
    let spec = ReduceSpec::add(dtype, rule.accum, dtype);
    let slice = |r: u32| &inputs[r as usize][first * size..(first + count) * size];
    fn go<'a>(
        o: &Order,
        spec: &ReduceSpec,
        size: usize,
        count: usize,
        slice: &dyn Fn(u32) -> &'a [u8],
    ) -> Result<Cow<'a, [u8]>, ForensicsError> {
        match o {
            Order::Rank(r) => Ok(Cow::Borrowed(slice(*r))),
            Order::Round(v) if v.len() == 1 && matches!(v[0], Order::Rank(_)) => go(&v[0], spec, size, count, slice),
            Order::Round(v) => {
                let parts: Vec<Cow<'a, [u8]>> =
                    v.iter().map(|x| go(x, spec, size, count, slice)).collect::<Result<_, _>>()?;
                let srcs: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
                let mut out = alloc::vec![0u8; count * size];
                reduce(spec, &srcs, &mut [&mut out], 0)?;
                Ok(Cow::Owned(out))
            }
            Order::Gce(_) => Err(order_error(o, "a GCE hop is not evaluated by identify")),
        }
    }
    go(&rule.order, &spec, size, count, &slice)
}

/// What [`reachable`] found for one element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The buffer-dtype encodings some choice of roundings gives, sorted.
    Values(Vec<u32>),
    /// More than [`MAX_REACHABLE`] values after some step: not decided.
    TooMany,
}

/// A set of exact values of one dtype (deduplicated by their bits).
type Set = Vec<f64>;

fn push(set: &mut Set, x: f64) {
    if !set.iter().any(|y| y.to_bits() == x.to_bits()) {
        set.push(x);
    }
}

/// The outcomes of rounding `x` into `fmt` by the model's stochastic rounding (fp32 is never
/// rounded stochastically: RNE).
fn outcomes(x: f64, fmt: FloatFormat) -> [u32; 2] {
    if fmt == FloatFormat::F32 {
        let v = round_value(x, fmt, None);
        [v, v]
    } else {
        [round_value(x, fmt, Some(0)), round_value(x, fmt, Some(u32::MAX))]
    }
}

/// Every buffer-dtype value `rule` (checked by [`check_rule`]) can give for one element whose
/// ranks hold the encodings `values` (finite), when every rounding into a format narrower than
/// fp32 may go either way.
pub fn reachable(rule: &Rule, dtype: NumType, values: &[u32]) -> Reach {
    let (Some(buf), Some(acc)) = (dtype.float_format(), rule.accum.float_format()) else {
        return Reach::TooMany;
    };
    match reach(&rule.order, buf, acc, values) {
        Some(set) => {
            let mut enc: Vec<u32> = set.iter().map(|&x| round_value(x, buf, None)).collect();
            enc.sort_unstable();
            enc.dedup();
            Reach::Values(enc)
        }
        None => Reach::TooMany,
    }
}

/// The set of buffer-dtype values (exact) of `o`, or `None` past [`MAX_REACHABLE`].
fn reach(o: &Order, buf: FloatFormat, acc: FloatFormat, values: &[u32]) -> Option<Set> {
    match o {
        Order::Rank(r) => Some(alloc::vec![decode(buf, values[*r as usize])]),
        Order::Gce(_) => None,
        Order::Round(v) => {
            // Operands enter the accumulator (a conversion, itself rounded when narrower).
            let mut state: Set = Vec::new();
            for (i, x) in v.iter().enumerate() {
                let operand = reach(x, buf, acc, values)?;
                let mut next: Set = Vec::new();
                for &y in &operand {
                    for a in outcomes(y, acc) {
                        let ya = decode(acc, a);
                        if i == 0 {
                            push(&mut next, ya);
                            continue;
                        }
                        for &s in &state {
                            for e in outcomes(sum_for_rounding(s, ya), acc) {
                                push(&mut next, decode(acc, e));
                            }
                        }
                    }
                }
                if next.len() > MAX_REACHABLE {
                    return None;
                }
                state = next;
            }
            // The accumulator rounded to the buffer dtype.
            let mut out: Set = Vec::new();
            for &s in &state {
                for e in outcomes(s, buf) {
                    push(&mut out, decode(buf, e));
                }
            }
            (out.len() <= MAX_REACHABLE).then_some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tie_reaches_both_neighbours_and_an_exact_sum_one_value() {
        // bf16 1 + 2^-8 (below bf16's ulp 2^-7): SR reaches 1 and 1 + 2^-7.
        let rule = Rule { order: Order::single(&[0, 1]), accum: NumType::F32 };
        assert_eq!(reachable(&rule, NumType::Bf16, &[0x3f80, 0x3b80]), Reach::Values(alloc::vec![0x3f80, 0x3f81]));
        // 1 + 1 is exact.
        assert_eq!(reachable(&rule, NumType::Bf16, &[0x3f80, 0x3f80]), Reach::Values(alloc::vec![0x4000]));
    }
}
