//! Happens-before (docs/MODEL.md X7): each thread block's transmissions in order, each wait
//! (the meeting transmission → the waiter), each message (sender → receiver). A cycle is a
//! deadlock and is named step by step; otherwise every transmission gets its level (the
//! longest chain ending at it, X11) and the relation is kept as bitsets for the checks.

use crate::error::MscclError;
use crate::program::Program;

/// Why one transmission comes after another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// The same thread block, the next transmission.
    Next,
    /// A wait (`depid` / `deps`).
    Wait,
    /// A message over a link.
    Message,
}

/// The relation, acyclic.
pub(crate) struct Order {
    /// A topological order.
    pub(crate) topo: Vec<usize>,
    /// Each transmission's level.
    pub(crate) level: Vec<usize>,
    /// `before[y]` has bit x set when x → y (transitively).
    before: Vec<Vec<u64>>,
}

impl Order {
    /// Whether `x` happens before `y`.
    pub(crate) fn before(&self, x: usize, y: usize) -> bool {
        self.before[y][x / 64] >> (x % 64) & 1 == 1
    }

    /// Whether `x` and `y` are ordered either way (or the same).
    pub(crate) fn ordered(&self, x: usize, y: usize) -> bool {
        x == y || self.before(x, y) || self.before(y, x)
    }
}

/// Every edge into each transmission.
pub(crate) fn edges(p: &Program) -> Vec<Vec<(usize, Edge)>> {
    let mut into = vec![Vec::new(); p.txs.len()];
    for blocks in &p.blocks {
        for b in blocks {
            for i in b.txs.clone().skip(1) {
                into[i].push((i - 1, Edge::Next));
            }
        }
    }
    for (i, t) in p.txs.iter().enumerate() {
        for w in &t.waits {
            into[i].push((w.met_by, Edge::Wait));
        }
    }
    for m in &p.messages {
        into[m.receiver].push((m.sender, Edge::Message));
    }
    into
}

/// The order of `p`, or the deadlock.
pub(crate) fn order(p: &Program) -> Result<Order, MscclError> {
    let n = p.txs.len();
    let into = edges(p);
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indeg = vec![0usize; n];
    for (y, es) in into.iter().enumerate() {
        for &(x, _) in es {
            out[x].push(y);
            indeg[y] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).rev().collect();
    let mut topo = Vec::with_capacity(n);
    while let Some(x) = ready.pop() {
        topo.push(x);
        for &y in &out[x] {
            indeg[y] -= 1;
            if indeg[y] == 0 {
                ready.push(y);
            }
        }
    }
    if topo.len() < n {
        return Err(deadlock(p, &into, &indeg));
    }
    let words = n.div_ceil(64);
    let mut before = vec![vec![0u64; words]; n];
    let mut level = vec![0usize; n];
    for &y in &topo {
        let mut acc = std::mem::take(&mut before[y]);
        for &(x, _) in &into[y] {
            for (a, b) in acc.iter_mut().zip(&before[x]) {
                *a |= b;
            }
            acc[x / 64] |= 1 << (x % 64);
            level[y] = level[y].max(level[x] + 1);
        }
        before[y] = acc;
    }
    Ok(Order { topo, level, before })
}

/// A cycle among the transmissions Kahn's algorithm could not order, named step by step: from
/// any of them, follow an edge from another unordered one until a transmission repeats.
fn deadlock(p: &Program, into: &[Vec<(usize, Edge)>], indeg: &[usize]) -> MscclError {
    let stuck = |i: usize| indeg[i] > 0;
    let Some(start) = (0..p.txs.len()).find(|&i| stuck(i)) else {
        return MscclError::new(crate::Where::default(), "a dependency cycle");
    };
    // Walk backwards: every stuck transmission waits for at least one stuck one.
    let mut path = vec![start];
    let mut why = Vec::new();
    let mut seen = vec![usize::MAX; p.txs.len()];
    seen[start] = 0;
    let mut at = start;
    while let Some(&(prev, e)) = into[at].iter().find(|(x, _)| stuck(*x)) {
        why.push(e);
        if seen[prev] != usize::MAX {
            // The cycle: from prev's first visit to here.
            let from = seen[prev];
            let cycle: Vec<usize> = path[from..].to_vec();
            let edges: Vec<Edge> = why[from..].to_vec();
            return describe_cycle(p, &cycle, &edges);
        }
        seen[prev] = path.len();
        path.push(prev);
        at = prev;
    }
    MscclError::new(p.at(start), "is part of a dependency cycle")
}

/// `cycle[i]` comes after `cycle[i + 1]` by `edges[i]`, and the last after the first.
fn describe_cycle(p: &Program, cycle: &[usize], edges: &[Edge]) -> MscclError {
    let n = cycle.len();
    let mut text = p.describe(cycle[0]);
    for (i, e) in edges.iter().enumerate().take(n) {
        let verb = match e {
            Edge::Next => "runs after",
            Edge::Wait => "waits for",
            Edge::Message => "receives from",
        };
        text.push_str(&format!(" {verb} {}", p.describe(cycle[(i + 1) % n])));
        if i + 1 < n {
            text.push_str(", which");
        }
    }
    MscclError::new(
        p.at(cycle[0]),
        format!("deadlock, a cycle of waits and receives (the executor would hang): {text}"),
    )
}
