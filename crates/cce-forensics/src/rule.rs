//! What makes one element: an [`Order`] and the accumulate dtype ([`Rule`]); the families real
//! implementations use ([`Family`]: one order for every element; [`RingFamily`]: one order per
//! chunk, over a chunk [`Layout`]); and when two rules give the same bits for every input
//! ([`merge_key`]).
//!
//! ## The families' orders (docs/identify.md, docs/MODEL.md I6–I7)
//! - Sequential sums from every start rank in both directions; the pairwise tree (recursive
//!   halving, [`Order::pairwise`]); one R-source reduce ([`Order::single`]).
//! - **Recursive doubling, pairs first** ([`Family::RecursiveDoubling`]): with P the largest
//!   power of two ≤ R and E = R − P, ranks 2i and 2i+1 (i < E) are added first, then the P
//!   partial sums combine with their neighbours at distances 1, 2, 4, …: at R = 6,
//!   `(((0+1)+(2+3))+(4+5))` (Open MPI's `allreduce_intra_recursivedoubling`, MPICH's
//!   recursive doubling).
//! - **The binomial tree to rank 0** ([`Family::Binomial`]): at mask 1, 2, 4, … rank r (a
//!   multiple of 2·mask) adds the partial sum of rank r + mask when that rank exists: a reduce
//!   to root 0 (then a broadcast); at R = 5, `(((0+1)+(2+3))+4)`.
//! - **Rings** ([`RingFamily`]): chunk c is the sequential sum starting at rank c + k (mod R),
//!   going up or down: Open MPI's ring is k = 0 up, gloo's k = −1 down. The chunks are those of
//!   a [`Layout`].
//!
//! ## Merges (each proven in `tests/merges.rs`; docs/identify.md says why)
//! Two rules with the same [`merge_key`] give the same bits for every finite input, so they are
//! one candidate:
//! 1. **A rounding of one operand is no rounding.** `(x)` of a value already in the buffer dtype
//!    is that value.
//! 2. **Accumulating in the buffer dtype rounds after every add.** With the accumulate dtype
//!    equal to the buffer dtype, `(a+b+c)` is `((a+b)+c)`: the accumulator is rounded to the
//!    buffer dtype by each add (RNE and stochastic rounding alike).
//! 3. **The first add commutes.** `a+b` = `b+a` in any float dtype (IEEE addition is
//!    commutative, signed zeros included; a stochastic rounding's two outcomes do not depend on
//!    the operands' order), so the first two operands of every parenthesis may be swapped: at
//!    R = 3, sequential from s+1 downward is sequential from s upward.
//! 4. **With RNE, fp32 and buffer-dtype accumulation agree when every rounding has two
//!    operands.** fp32 rounds `a+b` once to 24 bits, then to the buffer dtype's p bits; for
//!    p ≤ 11 (bf16, fp16, every fp8), 24 ≥ 2p + 1, and a double rounding of a sum of two
//!    p-bit values through 2p + 1 bits or more is the single rounding (Figueroa, "When is
//!    double rounding innocuous?", SIGNUM 1995): the issue's "but for exponent gaps over 16"
//!    exception does not exist (the sum is exact in fp32 up to a gap of 15, and past it the
//!    smaller operand lies below 2^-8 of the larger's buffer-dtype ulp, where both roundings
//!    give the larger back). Not for stochastic rounding: an fp32 add first rounds a tiny
//!    addend away, which the buffer-dtype accumulator can still round up.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use cce_numerics::NumType;
use cce_numerics::order::Order;

/// How one element is reduced: the order of its ranks' values and the dtype every `+` is
/// computed in (each pair of parentheses then rounds to the buffer dtype).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The order.
    pub order: Order,
    /// The accumulate dtype.
    pub accum: NumType,
}

/// The orders real implementations use, over ranks `0..R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// A sequential sum starting at rank `start`, going up (`start`, `start+1`, …) or down,
    /// ranks mod R, rounded after every add: a ring's chunk.
    Sequential {
        /// The first rank.
        start: u32,
        /// Upward (true) or downward.
        up: bool,
    },
    /// The pairwise tree over `0..R` in order ([`Order::pairwise`]): recursive halving.
    Pairwise,
    /// One R-source reduce with a single rounding ([`Order::single`]); at most 32 ranks (a
    /// reduce's most sources).
    Single,
    /// Recursive doubling with the pairs of a non-power of two added first (module docs).
    RecursiveDoubling,
    /// The binomial tree reducing to rank 0 (module docs).
    Binomial,
}

impl Family {
    /// Every family at `ranks` ranks: the sequential orders (every start, up then down), the
    /// pairwise tree, (at most 32 ranks) the single reduce, recursive doubling (pairs first) and
    /// the binomial tree.
    pub fn all(ranks: u32) -> Vec<Family> {
        let mut out: Vec<Family> = Vec::new();
        for start in 0..ranks {
            out.push(Family::Sequential { start, up: true });
            out.push(Family::Sequential { start, up: false });
        }
        out.push(Family::Pairwise);
        if ranks as usize <= cce_numerics::MAX_SOURCES {
            out.push(Family::Single);
        }
        out.push(Family::RecursiveDoubling);
        out.push(Family::Binomial);
        out
    }

    /// The order at `ranks` ranks.
    pub fn order(self, ranks: u32) -> Order {
        match self {
            Family::Sequential { start, up } => {
                let seq: Vec<u32> = (0..ranks)
                    .map(|k| if up { (start + k) % ranks } else { (start + ranks - k % ranks) % ranks })
                    .collect();
                Order::sequential(&seq)
            }
            Family::Pairwise => Order::pairwise(&(0..ranks).collect::<Vec<_>>()),
            Family::Single => Order::single(&(0..ranks).collect::<Vec<_>>()),
            Family::RecursiveDoubling => recursive_doubling(ranks),
            Family::Binomial => binomial(ranks),
        }
    }

    /// Its name in reports: `sequential from 3 up`, `pairwise tree`, `single 8-source reduce`.
    pub fn name(self, ranks: u32) -> String {
        match self {
            Family::Sequential { start, up } => {
                alloc::format!("sequential from {start} {}", if up { "up" } else { "down" })
            }
            Family::Pairwise => "pairwise tree".into(),
            Family::Single => alloc::format!("single {ranks}-source reduce"),
            Family::RecursiveDoubling => "recursive doubling, pairs first".into(),
            Family::Binomial => "binomial tree to rank 0".into(),
        }
    }
}

fn pair(a: Order, b: Order) -> Order {
    Order::Round(alloc::vec![a, b])
}

/// Recursive doubling with the pairs of a non-power of two first (module docs).
fn recursive_doubling(ranks: u32) -> Order {
    let p = if ranks == 0 { 0 } else { 1u32 << (31 - ranks.leading_zeros()) };
    let extra = ranks - p;
    let mut parts: Vec<Order> = (0..p)
        .map(|i| if i < extra { pair(Order::Rank(2 * i), Order::Rank(2 * i + 1)) } else { Order::Rank(i + extra) })
        .collect();
    while parts.len() > 1 {
        let mut next = Vec::with_capacity(parts.len() / 2);
        let mut it = parts.into_iter();
        while let (Some(a), Some(b)) = (it.next(), it.next()) {
            next.push(pair(a, b));
        }
        parts = next;
    }
    match parts.pop() {
        Some(o @ Order::Round(_)) => o,
        Some(o) => Order::Round(alloc::vec![o]),
        None => Order::Round(Vec::new()),
    }
}

/// The binomial tree reducing to rank 0 (module docs).
fn binomial(ranks: u32) -> Order {
    let mut node: Vec<Option<Order>> = (0..ranks).map(|r| Some(Order::Rank(r))).collect();
    let mut mask = 1u32;
    while mask < ranks {
        for r in (0..ranks).step_by(2 * mask as usize) {
            if r + mask < ranks {
                let (a, b) = (node[r as usize].take(), node[(r + mask) as usize].take());
                node[r as usize] = match (a, b) {
                    (Some(a), Some(b)) => Some(pair(a, b)),
                    (a, _) => a,
                };
            }
        }
        mask <<= 1;
    }
    match node.first_mut().and_then(Option::take) {
        Some(o @ Order::Round(_)) => o,
        Some(o) => Order::Round(alloc::vec![o]),
        None => Order::Round(Vec::new()),
    }
}

/// How N elements split into R chunks (docs/MODEL.md I7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Open MPI's ring (`COLL_BASE_COMPUTE_BLOCKCOUNT`): the first N mod R chunks hold
    /// ⌈N/R⌉ elements, the others ⌊N/R⌋.
    Balanced,
    /// gloo's ring: S = the multiple of R at or above max(⌈bytes / 1 MiB⌉, 2R) segments of
    /// ⌈N/S⌉ elements each, S/R consecutive segments per chunk (the last chunks may be short
    /// or empty).
    Gloo,
}

impl Layout {
    /// Both layouts.
    pub const ALL: [Layout; 2] = [Layout::Balanced, Layout::Gloo];

    /// The first element of every chunk, then `elems`: R + 1 ascending bounds (a chunk may be
    /// empty), for elements of `elem_bytes` bytes.
    pub fn bounds(self, elems: u64, ranks: u32, elem_bytes: u64) -> Vec<u64> {
        let r = u64::from(ranks.max(1));
        match self {
            Layout::Balanced => {
                let (late, split) = (elems / r, elems % r);
                (0..=r).map(|c| c * late + c.min(split)).collect()
            }
            Layout::Gloo => {
                const MAX_SEGMENT: u64 = 1 << 20;
                let size = elem_bytes.max(1);
                let seg_bytes = size * (MAX_SEGMENT / size).max(1);
                let bytes = elems.saturating_mul(size);
                let segments = bytes.div_ceil(seg_bytes).max(2 * r).div_ceil(r) * r;
                let seg = elems.div_ceil(segments);
                let per = segments / r;
                (0..=r).map(|c| if c == r { elems } else { (c * per * seg).min(elems) }).collect()
            }
        }
    }

    /// Its name in reports (the balanced layout is the default and unnamed).
    pub fn suffix(self) -> &'static str {
        match self {
            Layout::Balanced => "",
            Layout::Gloo => ", gloo chunks",
        }
    }
}

/// A ring's order: chunk c (of a [`Layout`]) is the sequential sum starting at rank
/// c + `offset` (mod R), going up or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingFamily {
    /// The start rank of chunk c is c + offset (mod R).
    pub offset: u32,
    /// Upward (true) or downward.
    pub up: bool,
    /// The chunks.
    pub layout: Layout,
}

impl RingFamily {
    /// Every ring at `ranks` ranks: every offset, both directions, both layouts.
    pub fn all(ranks: u32) -> Vec<RingFamily> {
        let mut out = Vec::new();
        for layout in Layout::ALL {
            for offset in 0..ranks {
                for up in [true, false] {
                    out.push(RingFamily { offset, up, layout });
                }
            }
        }
        out
    }

    /// `(first element, order)` of every non-empty chunk over `elems` elements of
    /// `elem_bytes` bytes, ascending.
    pub fn segments(self, elems: u64, ranks: u32, elem_bytes: u64) -> Vec<(u64, Order)> {
        let b = self.layout.bounds(elems, ranks, elem_bytes);
        (0..ranks)
            .filter(|&c| b[c as usize] < b[c as usize + 1])
            .map(|c| {
                let start = (c + self.offset) % ranks;
                (b[c as usize], Family::Sequential { start, up: self.up }.order(ranks))
            })
            .collect()
    }

    /// Its name in reports: `ring, chunk c from c-1 down`.
    pub fn name(self, ranks: u32) -> String {
        let k = i64::from(self.offset);
        let k = if 2 * k > i64::from(ranks) { k - i64::from(ranks) } else { k };
        let from = match k {
            0 => "c".into(),
            k if k > 0 => alloc::format!("c+{k}"),
            k => alloc::format!("c{k}"),
        };
        let dir = if self.up { "up" } else { "down" };
        alloc::format!("ring, chunk c from {from} {dir}{}", self.layout.suffix())
    }
}

/// Whether a stochastic rounding is in play: merge 4 holds for RNE only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Round to nearest even: candidates are compared bit for bit.
    Rne,
    /// Stochastic rounding with unknown bits: candidates are checked for consistency.
    Sr,
}

/// The key under which rules that give the same bits for every finite input meet (merges 1–4
/// of the module docs), for a buffer dtype `dtype`.
pub fn merge_key(rule: &Rule, dtype: NumType, rounding: Rounding) -> String {
    let order = normal_form(&rule.order, rule.accum == dtype);
    let any_accum = rounding == Rounding::Rne
        && all_binary(&order)
        && (rule.accum == dtype || (rule.accum == NumType::F32 && narrow_enough(dtype)));
    let mut key = canonical_text(&order);
    key.push('|');
    key.push_str(if any_accum { "any" } else { rule.accum.name() });
    key
}

/// The rule evaluated for a merged candidate: its normal form (merges 1 and 2), and fp32
/// accumulation where merge 4 makes the accumulate dtype irrelevant (the fast fp32 kernels).
pub fn evaluated(rule: &Rule, dtype: NumType, rounding: Rounding) -> Rule {
    let order = normal_form(&rule.order, rule.accum == dtype);
    let any_accum = merge_key(rule, dtype, rounding).ends_with("|any");
    let accum = if any_accum && narrow_enough(dtype) { NumType::F32 } else { rule.accum };
    Rule { order, accum }
}

/// Whether fp32 accumulation of a two-operand sum is the buffer dtype's single rounding:
/// 24 ≥ 2p + 1 (merge 4).
fn narrow_enough(dtype: NumType) -> bool {
    dtype.float_format().is_some_and(|f| 2 * f.precision() < 24)
}

/// Merges 1 and 2: a parenthesis of one operand dropped (but at the top), and with
/// buffer-dtype accumulation every parenthesis of n operands written as n − 1 nested pairs.
fn normal_form(order: &Order, accum_is_buffer: bool) -> Order {
    fn go(o: &Order, split: bool) -> Order {
        match o {
            Order::Rank(r) => Order::Rank(*r),
            Order::Gce(inner) => Order::Gce(alloc::boxed::Box::new(go(inner, split))),
            Order::Round(v) if v.len() == 1 => go(&v[0], split),
            Order::Round(v) if split && v.len() > 2 => {
                let mut acc = Order::Round(alloc::vec![go(&v[0], split), go(&v[1], split)]);
                for x in &v[2..] {
                    acc = Order::Round(alloc::vec![acc, go(x, split)]);
                }
                acc
            }
            Order::Round(v) => Order::Round(v.iter().map(|x| go(x, split)).collect()),
        }
    }
    match go(order, accum_is_buffer) {
        // A bare rank is one rank's value rounded once: itself.
        Order::Rank(r) => Order::Round(alloc::vec![Order::Rank(r)]),
        o => o,
    }
}

/// Whether every parenthesis has at most two operands.
fn all_binary(o: &Order) -> bool {
    match o {
        Order::Rank(_) => true,
        Order::Gce(inner) => all_binary(inner),
        Order::Round(v) => v.len() <= 2 && v.iter().all(all_binary),
    }
}

/// The order's text with the first two operands of every parenthesis in a fixed order
/// (merge 3).
fn canonical_text(o: &Order) -> String {
    match o {
        Order::Rank(r) => alloc::format!("{r}"),
        Order::Gce(inner) => alloc::format!("g({})", canonical_text(inner)),
        Order::Round(v) => {
            let mut parts: Vec<String> = v.iter().map(canonical_text).collect();
            if parts.len() >= 2 && parts[0] > parts[1] {
                parts.swap(0, 1);
            }
            let mut s = String::from("(");
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    s.push('+');
                }
                let _ = write!(s, "{p}");
            }
            s.push(')');
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn key(f: Family, r: u32, accum: NumType, rounding: Rounding) -> String {
        merge_key(&Rule { order: f.order(r), accum }, NumType::Bf16, rounding)
    }

    #[test]
    fn families_write_the_documented_orders() {
        assert_eq!(Family::Sequential { start: 2, up: true }.order(4).to_string(), "(((2+3)+0)+1)");
        assert_eq!(Family::Sequential { start: 1, up: false }.order(4).to_string(), "(((1+0)+3)+2)");
        assert_eq!(Family::Pairwise.order(4).to_string(), "((0+1)+(2+3))");
        assert_eq!(Family::Single.order(4).to_string(), "(0+1+2+3)");
        assert_eq!(Family::all(4).len(), 12);
        assert_eq!(Family::all(33).len(), 69);
        // Open MPI's recursive doubling at 6 and 5 ranks; the binomial tree at 5.
        assert_eq!(Family::RecursiveDoubling.order(6).to_string(), "(((0+1)+(2+3))+(4+5))");
        assert_eq!(Family::RecursiveDoubling.order(5).to_string(), "(((0+1)+2)+(3+4))");
        assert_eq!(Family::RecursiveDoubling.order(8).to_string(), Family::Pairwise.order(8).to_string());
        assert_eq!(Family::Binomial.order(5).to_string(), "(((0+1)+(2+3))+4)");
        assert_eq!(Family::Binomial.order(2).to_string(), "(0+1)");
    }

    #[test]
    fn layouts_split_as_the_libraries_do() {
        // Open MPI: 10 over 4 → 3, 3, 2, 2.
        assert_eq!(Layout::Balanced.bounds(10, 4, 2), alloc::vec![0, 3, 6, 8, 10]);
        // gloo: 8 segments of ⌈10/8⌉ = 2, two per chunk → 4, 4, 2, 0.
        assert_eq!(Layout::Gloo.bounds(10, 4, 2), alloc::vec![0, 4, 8, 10, 10]);
        let ring = RingFamily { offset: 3, up: false, layout: Layout::Gloo };
        assert_eq!(ring.name(4), "ring, chunk c from c-1 down, gloo chunks");
        let seg = ring.segments(10, 4, 2);
        assert_eq!(seg.len(), 3);
        assert_eq!(seg[1].1.to_string(), "(((0+3)+2)+1)");
    }

    #[test]
    fn merge_keys_meet_exactly_where_the_rules_say() {
        use Family::*;
        let (f32_, bf) = (NumType::F32, NumType::Bf16);
        let rne = Rounding::Rne;
        // Merge 3 at R = 3: from s+1 down is from s up; not at R = 4.
        assert_eq!(
            key(Sequential { start: 1, up: false }, 3, f32_, rne),
            key(Sequential { start: 0, up: true }, 3, f32_, rne)
        );
        assert_ne!(
            key(Sequential { start: 1, up: false }, 4, f32_, rne),
            key(Sequential { start: 0, up: true }, 4, f32_, rne)
        );
        // Merge 4 (RNE only).
        assert_eq!(key(Pairwise, 8, f32_, rne), key(Pairwise, 8, bf, rne));
        assert_ne!(key(Pairwise, 8, f32_, Rounding::Sr), key(Pairwise, 8, bf, Rounding::Sr));
        // Merge 2: a single reduce accumulated in bf16 is the sequential sum from 0 up.
        assert_eq!(key(Single, 8, bf, Rounding::Sr), key(Sequential { start: 0, up: true }, 8, bf, Rounding::Sr));
        assert_ne!(key(Single, 8, f32_, rne), key(Sequential { start: 0, up: true }, 8, f32_, rne));
        // R = 2: everything is (0+1).
        let all: Vec<String> = Family::all(2).into_iter().map(|f| key(f, 2, f32_, rne)).collect();
        assert!(all.iter().all(|k| *k == all[0]), "{all:?}");
        // fp32 buffers: merge 4 needs no argument, the accumulator is the buffer dtype.
        let k = |f: Family| merge_key(&Rule { order: f.order(4), accum: f32_ }, f32_, rne);
        assert_eq!(k(Single), k(Sequential { start: 0, up: true }));
    }
}
