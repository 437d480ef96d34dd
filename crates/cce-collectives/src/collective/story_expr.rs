//! An order as a story holds it ([`Expr`]): every rounding made once and shared by every order
//! made from it. A story's steps each show their order and their operands' — a 4096-rank ring
//! has thousands, each up to 4096 leaves — so as [`Order`] values they would hold every
//! prefix of the chain again (gigabytes); shared, they hold each rounding once.
//!
//! An order printed a second time keeps its text, and any order that holds it prints that
//! text instead of walking its parts again (a ring's all-gather shows the whole order at each
//! of its thousands of copies).
//!
//! Guarantee: an [`Expr`] prints exactly as the [`Order`] it stands for ([`Expr::to_order`])
//! prints, and two compare equal when their orders do (`tests::exprs_print_as_their_orders`).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use cce_numerics::order::Order;

/// An order ([`Order`], the grammar of docs/forensics.md) whose parts are shared with the
/// orders they were made from. It prints as the order prints.
#[derive(Clone)]
pub struct Expr(Arc<Shared>);

/// A node, and its text once it has been printed twice.
struct Shared {
    node: Node,
    /// Its leaves, counted when it is made.
    leaf_count: usize,
    printed: AtomicBool,
    text: OnceLock<Box<str>>,
}

enum Node {
    Rank(u32),
    Round(Vec<Expr>),
    Gce(Expr),
}

impl Expr {
    /// Rank `r`'s input element.
    pub(super) fn rank(r: u32) -> Expr {
        Expr::of(Node::Rank(r))
    }

    fn of(node: Node) -> Expr {
        let leaf_count = match &node {
            Node::Rank(_) => 1,
            Node::Round(v) => v.iter().map(Expr::leaf_count).sum(),
            Node::Gce(inner) => inner.leaf_count(),
        };
        Expr(Arc::new(Shared { node, leaf_count, printed: AtomicBool::new(false), text: OnceLock::new() }))
    }

    /// How many leaves ([`Expr::leaves`]'s length), without visiting them.
    pub fn leaf_count(&self) -> usize {
        self.0.leaf_count
    }

    fn node(&self) -> &Node {
        &self.0.node
    }

    /// Operands combined left to right, then rounded once.
    pub(super) fn round(operands: Vec<Expr>) -> Expr {
        Expr::of(Node::Round(operands))
    }

    /// A GCE hop over `inner`.
    pub(super) fn gce(inner: Expr) -> Expr {
        Expr::of(Node::Gce(inner))
    }

    /// The order it stands for (made whole: as large as its text), iteratively.
    pub fn to_order(&self) -> Order {
        // (node, the orders of its operands made so far)
        let mut stack: Vec<(&Expr, Vec<Order>)> = vec![(self, Vec::new())];
        loop {
            let (e, made) = stack.last_mut().expect("the root stays until it is made");
            let next = match e.node() {
                Node::Rank(_) => None,
                Node::Round(v) => v.get(made.len()),
                Node::Gce(inner) => Some(inner).filter(|_| made.is_empty()),
            };
            if let Some(next) = next {
                stack.push((next, Vec::new()));
                continue;
            }
            let (e, made) = stack.pop().expect("the node just looked at");
            let order = match e.node() {
                Node::Rank(r) => Order::Rank(*r),
                Node::Round(_) => Order::Round(made),
                Node::Gce(_) => Order::Gce(Box::new(made.into_iter().next().expect("a hop's order"))),
            };
            match stack.last_mut() {
                Some((_, parent)) => parent.push(order),
                None => return order,
            }
        }
    }

    /// The ranks in the order they enter.
    pub fn leaves(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e.node() {
                Node::Rank(r) => out.push(*r),
                Node::Round(v) => stack.extend(v.iter().rev()),
                Node::Gce(inner) => stack.push(inner),
            }
        }
        out
    }
}

impl Drop for Shared {
    /// Iteratively: an order thousands of roundings deep drops on any stack (each part that
    /// is no longer shared is taken apart here, not by a recursion of drops).
    fn drop(&mut self) {
        let mut todo = take_parts(&mut self.node);
        while let Some(e) = todo.pop() {
            if let Ok(mut shared) = Arc::try_unwrap(e.0) {
                todo.extend(take_parts(&mut shared.node));
            }
        }
    }
}

/// The parts of `node`, taken out of it.
fn take_parts(node: &mut Node) -> Vec<Expr> {
    match std::mem::replace(node, Node::Rank(0)) {
        Node::Rank(_) => Vec::new(),
        Node::Round(v) => v,
        Node::Gce(inner) => vec![inner],
    }
}

impl fmt::Display for Expr {
    /// As [`Order`]'s: iterative (an explicit stack), so orders thousands of ranks deep print
    /// on any stack; the text is made in a buffer and written once, and kept from the second
    /// print on.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = self.0.text.get() {
            return f.write_str(text);
        }
        let mut out: Vec<u8> = Vec::new();
        self.write(&mut out);
        // Digits and ASCII signs only.
        let text = std::str::from_utf8(&out).map_err(|_| fmt::Error)?;
        if self.0.printed.swap(true, Ordering::Relaxed) {
            let _ = self.0.text.set(text.into());
        }
        f.write_str(text)
    }
}

impl Expr {
    /// Appends the text (a part that kept its text: that text).
    fn write(&self, out: &mut Vec<u8>) {
        // (node, operands written so far)
        let mut stack: Vec<(&Expr, usize)> = vec![(self, 0)];
        while let Some((e, done)) = stack.pop() {
            if let Some(text) = e.0.text.get().filter(|_| done == 0) {
                out.extend_from_slice(text.as_bytes());
                continue;
            }
            match e.node() {
                Node::Rank(r) => push_decimal(out, *r),
                Node::Gce(inner) if done == 0 => {
                    out.extend_from_slice(b"g(");
                    stack.push((e, 1));
                    stack.push((inner, 0));
                }
                Node::Gce(_) => out.push(b')'),
                Node::Round(v) => {
                    if done == 0 {
                        out.push(b'(');
                    }
                    match v.get(done) {
                        Some(next) => {
                            if done > 0 {
                                out.push(b'+');
                            }
                            stack.push((e, done + 1));
                            stack.push((next, 0));
                        }
                        None => out.push(b')'),
                    }
                }
            }
        }
    }
}

/// Appends `r` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut r: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (r % 10) as u8;
        r /= 10;
        if r == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({self})")
    }
}

impl PartialEq for Expr {
    /// The same order: shared parts at once, others part by part (iteratively).
    fn eq(&self, other: &Expr) -> bool {
        let mut todo = vec![(self, other)];
        while let Some((a, b)) = todo.pop() {
            if Arc::ptr_eq(&a.0, &b.0) {
                continue;
            }
            match (a.node(), b.node()) {
                (Node::Rank(x), Node::Rank(y)) if x == y => {}
                (Node::Gce(x), Node::Gce(y)) => todo.push((x, y)),
                (Node::Round(x), Node::Round(y)) if x.len() == y.len() => todo.extend(x.iter().zip(y)),
                _ => return false,
            }
        }
        true
    }
}

impl PartialEq<Order> for Expr {
    fn eq(&self, other: &Order) -> bool {
        self.to_order() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every order of the documented examples and a deep chain: the same text and leaves as the
    /// order, equal to itself made again, unequal to another.
    #[test]
    fn exprs_print_as_their_orders() {
        let chain = (1..4096).fold(Expr::rank(0), |acc, r| Expr::round(vec![acc, Expr::rank(r)]));
        let cases = [
            Expr::round(vec![Expr::round(vec![Expr::rank(0), Expr::rank(1)]), Expr::rank(2)]),
            Expr::round(vec![Expr::rank(0), Expr::rank(1), Expr::rank(2), Expr::rank(3)]),
            Expr::round(vec![Expr::gce(Expr::round(vec![Expr::rank(3), Expr::rank(0)])), Expr::rank(1)]),
            Expr::rank(7),
            chain.clone(),
        ];
        for e in &cases {
            let o = e.to_order();
            assert_eq!(e.to_string(), o.to_string());
            assert_eq!(e.leaves(), o.leaves());
            assert_eq!(e.leaf_count(), o.leaves().len());
            assert_eq!(Order::parse(&e.to_string()).unwrap(), o);
            assert!(*e == o);
            let again = Order::parse(&e.to_string()).unwrap();
            assert_eq!(e.to_string(), again.to_string());
        }
        assert_eq!(cases[0], Expr::round(vec![Expr::round(vec![Expr::rank(0), Expr::rank(1)]), Expr::rank(2)]));
        assert_ne!(cases[0], cases[1]);
        assert_eq!(chain, (1..4096).fold(Expr::rank(0), |acc, r| Expr::round(vec![acc, Expr::rank(r)])));
        assert_eq!(cases[2].to_string(), "(g((3+0))+1)");
        // Printed again (from the kept text), and inside another order.
        for e in &cases {
            let once = e.to_order().to_string();
            for _ in 0..3 {
                assert_eq!(e.to_string(), once);
            }
            let outer = Expr::round(vec![e.clone(), Expr::rank(1), e.clone()]);
            assert_eq!(outer.to_string(), outer.to_order().to_string());
        }
        for r in [0, 9, 10, 99, 100, 4095, u32::MAX] {
            assert_eq!(Expr::rank(r).to_string(), r.to_string());
        }
    }

    /// A million roundings deep: made, printed, compared, turned into its order's text and
    /// dropped on a 256 KiB stack.
    #[test]
    fn deep_exprs_need_no_stack() {
        let deep = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let e = (1..1_000_000).fold(Expr::rank(0), |acc, r| Expr::round(vec![acc, Expr::rank(r % 7)]));
                let g = Expr::gce(e.clone());
                let text = g.to_string();
                assert!(text.starts_with("g((((") && text.ends_with(&format!("+{}))", 999_999 % 7)));
                assert!(g == g.clone() && e.leaves().len() == 1_000_000);
                let o = Expr::round(vec![Expr::rank(3), Expr::rank(4)]).to_order();
                assert_eq!(o.to_string(), "(3+4)");
                drop(e);
                drop(g);
            })
            .unwrap();
        deep.join().unwrap();
    }
}
