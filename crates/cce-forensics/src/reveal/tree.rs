//! A tree of adds rebuilt from pair measurements, where its sums are rounded, and the order
//! (the order grammar's [`Order`]) they make together.
//!
//! A pair measurement of leaves `i`, `j` is `d(i, j) = |Cᵢ| + |Cⱼ|`: the sizes of the two
//! children of the lowest node holding both (the masks of [`super::mask`] lose exactly the
//! units of those two subtrees). [`AddTree::from_pairs`] rebuilds a binary tree from every
//! pair's `d`: two complete subtrees `A`, `B` are siblings exactly when `d(a, b) = |A| + |B|`
//! for their leaves (a larger `d` means a lower node joins them with more), so merging such
//! pairs, smallest first, rebuilds it; the result is then checked against every pair.
//!
//! ## Guarantees
//! - [`AddTree::from_pairs`] returns a tree only when the tree's own `d` equals every
//!   measurement given; a node of more than two children (adds fp32 does not round: an
//!   accumulator wider than fp32) or measurements no tree makes give `None`.
//! - [`AddTree::order`] writes each group of adds between two roundings as one parenthesis,
//!   operands in the order they enter the accumulator (the chain's first two in ascending
//!   order of their lowest rank: they commute), or says why the marks make no order of the
//!   grammar (two unrounded partial sums added together).

use alloc::string::String;
use alloc::vec::Vec;

use cce_numerics::order::Order;

/// Every unordered pair of `0..ranks`, `(i, j)` with `i < j`, in lexicographic order.
pub fn pairs(ranks: u32) -> Vec<(u32, u32)> {
    (0..ranks).flat_map(|i| (i + 1..ranks).map(move |j| (i, j))).collect()
}

/// One node: a leaf (a rank) or the add of two nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// The two operands (indices of nodes), for an add.
    kids: Option<(usize, usize)>,
    /// The ranks below it (bit r: rank r).
    leaves: u64,
}

/// A binary tree of adds over ranks `0..R`: nodes `0..R` are the leaves, the last node is the
/// root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddTree {
    ranks: u32,
    nodes: Vec<Node>,
}

fn lowest(bits: u64) -> u32 {
    bits.trailing_zeros()
}

impl AddTree {
    /// The tree whose `d` is `d[k]` for pair `pairs(ranks)[k]`, if one is (module docs).
    pub fn from_pairs(ranks: u32, d: &[u8]) -> Option<AddTree> {
        let index = |i: u32, j: u32| -> usize {
            let (i, j) = (i.min(j) as usize, i.max(j) as usize);
            let r = ranks as usize;
            i * (2 * r - i - 1) / 2 + (j - i - 1)
        };
        let mut nodes: Vec<Node> = (0..ranks).map(|r| Node { kids: None, leaves: 1 << r }).collect();
        let mut active: Vec<usize> = (0..ranks as usize).collect();
        while active.len() > 1 {
            let mut best: Option<(u32, usize, usize)> = None;
            for (x, &a) in active.iter().enumerate() {
                for &b in &active[x + 1..] {
                    let (la, lb) = (nodes[a].leaves, nodes[b].leaves);
                    let sum = la.count_ones() + lb.count_ones();
                    if u32::from(d[index(lowest(la), lowest(lb))]) == sum && best.is_none_or(|(s, _, _)| sum < s) {
                        best = Some((sum, a, b));
                    }
                }
            }
            let (_, a, b) = best?;
            nodes.push(Node { kids: Some((a, b)), leaves: nodes[a].leaves | nodes[b].leaves });
            let new = nodes.len() - 1;
            active.retain(|&n| n != a && n != b);
            active.push(new);
        }
        let tree = AddTree { ranks, nodes };
        let all = pairs(ranks);
        all.iter().enumerate().all(|(k, &(i, j))| tree.d(i, j) == u32::from(d[k])).then_some(tree)
    }

    /// The rank count.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    fn root(&self) -> usize {
        self.nodes.len() - 1
    }

    /// `d(i, j)` of this tree.
    pub fn d(&self, i: u32, j: u32) -> u32 {
        let mut n = self.root();
        loop {
            let Some((a, b)) = self.nodes[n].kids else { return 0 };
            let (la, lb) = (self.nodes[a].leaves, self.nodes[b].leaves);
            let (ia, ja) = (la >> i & 1 == 1, la >> j & 1 == 1);
            if ia && ja {
                n = a;
            } else if !ia && !ja {
                n = b;
            } else {
                return la.count_ones() + lb.count_ones();
            }
        }
    }

    /// The adds below the root (node indices), each with its sibling: the nodes whose rounding
    /// a [`Regime::Buffer`](super::mask::Regime::Buffer) query decides.
    pub fn inner_adds(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for n in &self.nodes {
            if let Some((a, b)) = n.kids {
                for (x, y) in [(a, b), (b, a)] {
                    if self.nodes[x].kids.is_some() {
                        out.push((x, y));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The ranks below node `n`.
    pub fn leaves(&self, n: usize) -> u64 {
        self.nodes[n].leaves
    }

    /// The order this tree makes when the adds of `unrounded` (node indices) keep their sum in
    /// the accumulator and every other add rounds to the buffer dtype.
    pub fn order(&self, unrounded: &[usize]) -> Result<Order, String> {
        Ok(Order::Round(self.operands(self.root(), unrounded)?))
    }

    fn atom(&self, n: usize, unrounded: &[usize]) -> Result<Order, String> {
        match self.nodes[n].kids {
            None => Ok(Order::Rank(lowest(self.nodes[n].leaves))),
            Some(_) => Ok(Order::Round(self.operands(n, unrounded)?)),
        }
    }

    fn operands(&self, n: usize, unrounded: &[usize]) -> Result<Vec<Order>, String> {
        let Some((a, b)) = self.nodes[n].kids else {
            return Ok(alloc::vec![Order::Rank(lowest(self.nodes[n].leaves))]);
        };
        match (unrounded.contains(&a), unrounded.contains(&b)) {
            (true, true) => Err(alloc::format!(
                "two unrounded partial sums are added together (ranks {:?} and {:?}): no order of the grammar",
                self.ranks_of(a),
                self.ranks_of(b)
            )),
            (true, false) | (false, true) => {
                let (chain, other) = if unrounded.contains(&a) { (a, b) } else { (b, a) };
                let mut ops = self.operands(chain, unrounded)?;
                ops.push(self.atom(other, unrounded)?);
                Ok(ops)
            }
            (false, false) => {
                let key =
                    |n: usize| (core::cmp::Reverse(self.nodes[n].leaves.count_ones()), lowest(self.nodes[n].leaves));
                let (x, y) = if key(a) < key(b) { (a, b) } else { (b, a) };
                Ok(alloc::vec![self.atom(x, unrounded)?, self.atom(y, unrounded)?])
            }
        }
    }

    fn ranks_of(&self, n: usize) -> Vec<u32> {
        (0..self.ranks).filter(|r| self.nodes[n].leaves >> r & 1 == 1).collect()
    }
}

/// Whether some parenthesis of `o` has more than two operands.
pub fn has_multiway(o: &Order) -> bool {
    match o {
        Order::Rank(_) => false,
        Order::Round(v) => v.len() > 2 || v.iter().any(has_multiway),
        Order::Gce(inner) => has_multiway(inner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    /// `d` of every pair of a tree written in the grammar, computed from its text (a separate
    /// walk from [`AddTree::d`]: each parenthesis of two operands is one add).
    fn d_of(o: &Order, ranks: u32) -> Vec<u8> {
        fn lca(o: &Order, i: u32, j: u32) -> Option<u32> {
            let Order::Round(v) = o else { return None };
            let holds = |x: &Order, r: u32| x.leaves().contains(&r);
            if let Some(x) = v.iter().find(|x| holds(x, i) && holds(x, j)) {
                return lca(x, i, j);
            }
            let size = |r: u32| v.iter().find(|x| holds(x, r)).map_or(0, |x| x.leaves().len() as u32);
            Some(size(i) + size(j))
        }
        pairs(ranks).iter().map(|&(i, j)| lca(o, i, j).unwrap_or(0) as u8).collect()
    }

    #[test]
    fn binary_trees_come_back_from_their_pairs() {
        // (tree, as it comes back: the first two operands of a parenthesis commute, so they are
        // written the larger first, then the one with the lower rank)
        for (text, back) in [
            ("((0+1)+(2+3))", "((0+1)+(2+3))"),
            ("(((2+3)+0)+1)", "(((2+3)+0)+1)"),
            ("(((0+5)+((1+4)+2))+3)", "((((1+4)+2)+(0+5))+3)"),
            ("(0+1)", "(0+1)"),
            ("((((4+2)+(7+0))+((3+6)+1))+5)", "((((0+7)+(2+4))+((3+6)+1))+5)"),
        ] {
            let o = Order::parse(text).unwrap();
            let r = o.leaves().len() as u32;
            let t = AddTree::from_pairs(r, &d_of(&o, r)).expect(text);
            assert_eq!(t.order(&[]).unwrap().to_string(), back, "{text}");
        }
    }

    #[test]
    fn a_three_way_node_is_no_binary_tree() {
        let o = Order::parse("((0+1+2)+3)").unwrap();
        assert_eq!(AddTree::from_pairs(4, &d_of(&o, 4)), None);
    }

    #[test]
    fn unrounded_chains_write_multiway_groups() {
        let o = Order::parse("((((0+1)+2)+3)+4)").unwrap();
        let t = AddTree::from_pairs(5, &d_of(&o, 5)).unwrap();
        // Adds below the root, each once: (0+1), ((0+1)+2), (((0+1)+2)+3).
        let adds: Vec<usize> = t.inner_adds().into_iter().map(|(n, _)| n).collect();
        assert_eq!(adds.len(), 3);
        let by_size = |k: u32| adds.iter().copied().find(|&n| t.leaves(n).count_ones() == k).unwrap();
        assert_eq!(t.order(&[by_size(2)]).unwrap().to_string(), "(((0+1+2)+3)+4)");
        assert_eq!(t.order(&[by_size(2), by_size(4)]).unwrap().to_string(), "((0+1+2)+3+4)");
        assert_eq!(t.order(&[by_size(2), by_size(3), by_size(4)]).unwrap().to_string(), "(0+1+2+3+4)");
    }
}
