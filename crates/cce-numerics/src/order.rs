//! The order grammar: how one element of a reduction was combined, written the same way
//! everywhere an order is shown (the JSON key `expr`), with the ranks in the order they entered
//! beside it (`leaves`).
//!
//! - A rank number is that rank's input element, as it is.
//! - `a+b+…` combines its operands left to right in the accumulate dtype (the reduce op's
//!   combine: an add, an FMA's scaled add, a min or a max).
//! - Every pair of parentheses rounds once, to the buffer dtype: one packet's reduce.
//! - `g(…)` (an extension) is a GCE hop: the value quantised to fp8 against its block's scale
//!   and expanded again.
//!
//! So ring chunk 0 at R = 4 is `(((0+1)+2)+3)`, one 4-source packet `(0+1+2+3)` and the pairwise
//! tree `((0+1)+(2+3))`. [`Order::parse`] reads what [`Order`]'s `Display` writes, and nothing
//! else; parsing any text never panics, and neither parsing nor printing recurses.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

/// One element's reduction order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// A rank's input element, as it is.
    Rank(u32),
    /// Operands combined left to right in the accumulate dtype, then rounded once to the buffer
    /// dtype (written `(a+b+…)`).
    Round(Vec<Order>),
    /// A GCE hop over the value (written `g(…)`).
    Gce(Box<Order>),
}

/// Why a text is not an order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    /// Something other than the grammar's characters, or one in the wrong place.
    #[error("order: unexpected {found} at byte {at}")]
    Unexpected {
        /// What was there.
        found: &'static str,
        /// Its byte offset.
        at: usize,
    },
    /// A rank number too large for 32 bits.
    #[error("order: rank number at byte {at} is too large")]
    RankTooLarge {
        /// The number's byte offset.
        at: usize,
    },
    /// Parentheses nested deeper than [`Order::MAX_DEPTH`].
    #[error("order: nested deeper than {max} at byte {at}")]
    TooDeep {
        /// The limit.
        max: usize,
        /// The byte offset of the group past it.
        at: usize,
    },
}

impl Order {
    /// Deepest nesting [`Order::parse`] accepts: a sequential order over 4096 ranks nests 4096,
    /// and an order this deep still drops (recursively) on a small stack.
    pub const MAX_DEPTH: usize = 8192;

    /// The sequential order over `ranks`: `(((a+b)+c)+d)`, one rounding per step after the
    /// first pair. One rank alone is that rank rounded once: `(a)`.
    pub fn sequential(ranks: &[u32]) -> Order {
        let mut it = ranks.iter().copied();
        let Some(first) = it.next() else { return Order::Round(Vec::new()) };
        let Some(second) = it.next() else { return Order::Round(alloc::vec![Order::Rank(first)]) };
        let mut acc = Order::Round(alloc::vec![Order::Rank(first), Order::Rank(second)]);
        for r in it {
            acc = Order::Round(alloc::vec![acc, Order::Rank(r)]);
        }
        acc
    }

    /// One reduce of every rank with a single rounding: `(a+b+c+d)`.
    pub fn single(ranks: &[u32]) -> Order {
        Order::Round(ranks.iter().map(|&r| Order::Rank(r)).collect())
    }

    /// The pairwise tree over `ranks`: split in halves (the first half the larger when the count
    /// is odd), each half's tree, then the two combined and rounded: `((a+b)+(c+d))`. A half of
    /// one rank enters as it is.
    pub fn pairwise(ranks: &[u32]) -> Order {
        fn half(ranks: &[u32]) -> Order {
            match ranks {
                [r] => Order::Rank(*r),
                _ => Order::pairwise(ranks),
            }
        }
        match ranks {
            [] => Order::Round(Vec::new()),
            [r] => Order::Round(alloc::vec![Order::Rank(*r)]),
            _ => {
                let mid = ranks.len().div_ceil(2);
                Order::Round(alloc::vec![half(&ranks[..mid]), half(&ranks[mid..])])
            }
        }
    }

    /// The ranks in the order they enter the reduction.
    pub fn leaves(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = alloc::vec![self];
        while let Some(o) = stack.pop() {
            match o {
                Order::Rank(r) => out.push(*r),
                Order::Round(v) => stack.extend(v.iter().rev()),
                Order::Gce(inner) => stack.push(inner),
            }
        }
        out
    }

    /// How many roundings to the buffer dtype it makes (pairs of parentheses).
    pub fn roundings(&self) -> usize {
        match self {
            Order::Rank(_) => 0,
            Order::Round(v) => 1 + v.iter().map(Order::roundings).sum::<usize>(),
            Order::Gce(inner) => inner.roundings(),
        }
    }

    /// Reads an order as [`Order`]'s `Display` writes it (spaces are allowed between tokens).
    pub fn parse(text: &str) -> Result<Order, OrderError> {
        let mut p = Parser { bytes: text.as_bytes(), at: 0 };
        let order = p.order()?;
        p.skip_spaces();
        match p.peek() {
            None => Ok(order),
            Some(_) => Err(p.unexpected()),
        }
    }
}

impl fmt::Display for Order {
    /// Iterative (an explicit stack), so orders thousands of ranks deep print on any stack.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // (node, operands written so far)
        let mut stack: Vec<(&Order, usize)> = alloc::vec![(self, 0)];
        while let Some((node, done)) = stack.pop() {
            match node {
                Order::Rank(r) => write!(f, "{r}")?,
                Order::Gce(inner) if done == 0 => {
                    f.write_str("g(")?;
                    stack.push((node, 1));
                    stack.push((inner, 0));
                }
                Order::Gce(_) => f.write_str(")")?,
                Order::Round(v) => {
                    if done == 0 {
                        f.write_str("(")?;
                    }
                    match v.get(done) {
                        Some(next) => {
                            if done > 0 {
                                f.write_str("+")?;
                            }
                            stack.push((node, done + 1));
                            stack.push((next, 0));
                        }
                        None => f.write_str(")")?,
                    }
                }
            }
        }
        Ok(())
    }
}

/// An open group while parsing.
enum Open {
    Round(Vec<Order>),
    Gce,
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.at += 1;
        }
    }

    fn unexpected(&self) -> OrderError {
        let found = match self.peek() {
            None => "end of text",
            Some(b'(') => "'('",
            Some(b')') => "')'",
            Some(b'+') => "'+'",
            Some(b'0'..=b'9') => "a rank number",
            Some(_) => "a character outside the grammar",
        };
        OrderError::Unexpected { found, at: self.at }
    }

    fn expect(&mut self, c: u8) -> Result<(), OrderError> {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// One order, iteratively: the open groups on an explicit stack (at most
    /// [`Order::MAX_DEPTH`] of them), so no text can exhaust the call stack.
    fn order(&mut self) -> Result<Order, OrderError> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // An operand: a rank, or the start of a group.
            self.skip_spaces();
            let mut done = match self.peek() {
                Some(b'0'..=b'9') => self.rank()?,
                Some(c @ (b'(' | b'g')) => {
                    if open.len() >= Order::MAX_DEPTH {
                        return Err(OrderError::TooDeep { max: Order::MAX_DEPTH, at: self.at });
                    }
                    self.at += 1;
                    if c == b'g' {
                        self.expect(b'(')?;
                        open.push(Open::Gce);
                    } else {
                        open.push(Open::Round(Vec::new()));
                    }
                    continue;
                }
                _ => return Err(self.unexpected()),
            };
            // After an operand: close every group it completes.
            loop {
                self.skip_spaces();
                match open.last_mut() {
                    None => return Ok(done),
                    Some(Open::Gce) => {
                        self.expect(b')')?;
                        open.pop();
                        done = Order::Gce(Box::new(done));
                    }
                    Some(Open::Round(v)) => {
                        v.push(done);
                        match self.peek() {
                            Some(b'+') => {
                                self.at += 1;
                                break;
                            }
                            Some(b')') => {
                                self.at += 1;
                                let v = core::mem::take(v);
                                open.pop();
                                done = Order::Round(v);
                            }
                            _ => return Err(self.unexpected()),
                        }
                    }
                }
            }
        }
    }

    fn rank(&mut self) -> Result<Order, OrderError> {
        let start = self.at;
        let mut value: u32 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u32::from(d - b'0')))
                .ok_or(OrderError::RankTooLarge { at: start })?;
            self.at += 1;
        }
        Ok(Order::Rank(value))
    }
}
