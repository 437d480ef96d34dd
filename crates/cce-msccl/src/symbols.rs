//! The checks on data (docs/MODEL.md X7): no data race, no source overlapping its destination
//! at another offset, no read of a chunk nothing has written, and the collective computed —
//! the schedule run on chunk symbols in an order happens-before allows (any order gives the
//! same result once there is no race).

use std::collections::BTreeMap;

use crate::error::MscclError;
use crate::model::{Coll, Kind};
use crate::order::Order;
use crate::program::{Area, Chunks, Program};

/// What a chunk holds: the sum of one chunk index `g` of the inputs of the ranks in `ranks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sym {
    /// Nothing written yet.
    Undef,
    /// Chunk `g` of the inputs of every rank in the bit set.
    Val { g: u64, ranks: u64 },
    /// A reduction that counted `rank`'s chunk `g` twice.
    Twice { g: u64, rank: u32 },
    /// A reduction of two different chunk indices.
    Mixed { a: u64, b: u64 },
}

fn combine(x: Sym, y: Sym) -> Sym {
    match (x, y) {
        (Sym::Val { g: a, ranks: ra }, Sym::Val { g: b, ranks: rb }) if a == b => {
            if ra & rb != 0 {
                Sym::Twice { g: a, rank: (ra & rb).trailing_zeros() }
            } else {
                Sym::Val { g: a, ranks: ra | rb }
            }
        }
        (Sym::Val { g: a, .. }, Sym::Val { g: b, .. }) => Sym::Mixed { a, b },
        (Sym::Val { .. }, other) => other,
        (other, _) => other,
    }
}

fn ranks_list(mask: u64) -> String {
    let v: Vec<String> = (0..64).filter(|r| mask >> r & 1 == 1).map(|r| r.to_string()).collect();
    v.join(", ")
}

fn show(s: Sym, all: u64) -> String {
    match s {
        Sym::Undef => "nothing (it is never written)".into(),
        Sym::Val { g, ranks } if ranks == all => format!("chunk {g} of every rank"),
        Sym::Val { g, ranks } => {
            format!("chunk {g} of rank(s) {}", ranks_list(ranks))
        }
        Sym::Twice { g, rank } => format!("a sum that counts rank {rank}'s chunk {g} twice"),
        Sym::Mixed { a, b } => format!("a sum of chunk {a} and chunk {b}"),
    }
}

/// One access of a transmission to a chunk of its rank.
#[derive(Clone, Copy)]
struct Access {
    tx: usize,
    write: bool,
}

/// The data accesses of every chunk: (rank, area, chunk) → who reads or writes it.
pub(crate) struct Accesses(BTreeMap<(usize, Area, u64), Vec<(usize, bool)>>);

impl Accesses {
    /// The transmissions that write a chunk.
    pub(crate) fn writers(&self, rank: usize, area: Area, chunk: u64) -> impl Iterator<Item = usize> + '_ {
        self.0.get(&(rank, area, chunk)).into_iter().flatten().filter(|a| a.1).map(|a| a.0)
    }
    /// Whether any transmission of the file writes `area` of any rank.
    pub(crate) fn writes_area(&self, area: Area) -> bool {
        self.0.iter().any(|(k, v)| k.1 == area && v.iter().any(|a| a.1))
    }
}

/// `o[3]`: chunk `j` of `c`.
fn loc(c: Chunks, j: u64) -> String {
    format!("{}[{}]", c.area.letter(), c.off + j)
}

/// Runs every data check; returns the accesses for the planner.
pub(crate) fn check(p: &Program, o: &Order) -> Result<Accesses, MscclError> {
    let mut acc: BTreeMap<(usize, Area, u64), Vec<Access>> = BTreeMap::new();
    for (i, t) in p.txs.iter().enumerate() {
        // A source that overlaps the destination at another offset.
        if let Some(d) = t.dst {
            for s in &t.srcs {
                if s.area == d.area && s.off != d.off && s.off < d.off + t.cnt && d.off < s.off + t.cnt {
                    return Err(MscclError::new(
                        p.at(i),
                        format!(
                            "src {}[{}..{}) overlaps dst {}[{}..{}) at another offset: the order of the element copies would decide the result",
                            s.area.letter(),
                            s.off,
                            s.off + t.cnt,
                            d.area.letter(),
                            d.off,
                            d.off + t.cnt
                        ),
                    ));
                }
            }
        }
        let mut touch = |c: Chunks, write: bool| {
            for j in 0..t.cnt {
                let v = acc.entry((t.rank, c.area, c.off + j)).or_default();
                // One entry per transmission and kind of access.
                if !v.iter().any(|a| a.tx == i && a.write == write) {
                    v.push(Access { tx: i, write });
                }
            }
        };
        for &s in &t.srcs {
            touch(s, false);
        }
        if let Some(d) = t.dst {
            if t.kind == Kind::Reduce {
                touch(d, false);
            }
            touch(d, true);
        }
    }
    // Races: a write unordered with another access of the same chunk.
    for (&(rank, area, chunk), list) in &acc {
        for w in list.iter().filter(|a| a.write) {
            for a in list.iter().filter(|a| a.tx != w.tx) {
                if !o.ordered(w.tx, a.tx) {
                    let (first, second) = if w.tx < a.tx { (w, a) } else { (a, w) };
                    let verb = |x: &Access| if x.write { "writes" } else { "reads" };
                    return Err(MscclError::new(
                        p.at(second.tx),
                        format!(
                            "{} {area_chunk} while {} {} it with nothing ordering the two (no wait or message between them): a data race on rank {rank}; their order would decide the result",
                            verb(second),
                            p.describe(first.tx),
                            verb(first),
                            area_chunk = format_args!("{}[{chunk}]", area.letter()),
                        ),
                    ));
                }
            }
        }
    }
    simulate(p, o)?;
    Ok(Accesses(acc.into_iter().map(|(k, v)| (k, v.into_iter().map(|a| (a.tx, a.write)).collect())).collect()))
}

/// Per rank and area: each chunk's symbol and last writer.
type Memory = Vec<BTreeMap<Area, Vec<(Sym, Option<usize>)>>>;

/// The schedule on chunk symbols, in a topological order.
fn simulate(p: &Program, o: &Order) -> Result<(), MscclError> {
    let mut mem = initial_memory(p);
    let mut sent: Vec<Vec<Sym>> = vec![Vec::new(); p.messages.len()];
    for &i in &o.topo {
        run_transmission(p, i, &mut mem, &mut sent)?;
    }
    check_outputs(p, &mem)
}

/// Every rank's areas before the schedule: its input chunks hold its own values (an in-place
/// all-gather's, its share of the output), everything else is undefined.
fn initial_memory(p: &Program) -> Memory {
    let r = p.ranks;
    let cf = p.share();
    let areas = [Area::Input, Area::Output, Area::Scratch];
    let mut mem: Memory = (0..r)
        .map(|q| areas.iter().map(|&a| (a, vec![(Sym::Undef, None); p.area_chunks(q, a) as usize])).collect())
        .collect();
    for (q, m) in mem.iter_mut().enumerate() {
        let bit = 1u64 << q;
        match (p.coll, p.in_place) {
            (Coll::AllGather, true) => {
                for k in 0..cf {
                    let g = q as u64 * cf + k;
                    m.get_mut(&Area::Output).expect("areas")[g as usize].0 = Sym::Val { g, ranks: bit };
                }
            }
            (Coll::AllGather, false) => {
                for (k, c) in m.get_mut(&Area::Input).expect("areas").iter_mut().enumerate() {
                    c.0 = Sym::Val { g: q as u64 * cf + k as u64, ranks: bit };
                }
            }
            _ => {
                for (g, c) in m.get_mut(&Area::Input).expect("areas").iter_mut().enumerate() {
                    c.0 = Sym::Val { g: g as u64, ranks: bit };
                }
            }
        }
    }
    mem
}

/// Runs transmission `i` on the symbols: reads its sources from `mem` (refusing undefined
/// ones), takes the message it receives from `sent`, writes its result to its destination and
/// files the message it sends in `sent`.
fn run_transmission(p: &Program, i: usize, mem: &mut Memory, sent: &mut [Vec<Sym>]) -> Result<(), MscclError> {
    let t = &p.txs[i];
    let q = t.rank;
    let read = |mem: &Memory, c: Chunks| -> Result<Vec<Sym>, MscclError> {
        (0..t.cnt)
            .map(|j| {
                let s = mem[q][&c.area][(c.off + j) as usize].0;
                if s == Sym::Undef {
                    Err(MscclError::new(
                        p.at(i),
                        format!(
                            "reads {}, which nothing writes before it: undefined data (a GPU would read whatever the buffer held)",
                            loc(c, j)
                        ),
                    ))
                } else {
                    Ok(s)
                }
            })
            .collect()
    };
    let received = t.recv.map(|m| sent[m].clone());
    let mut srcs = Vec::with_capacity(t.srcs.len());
    for &s in &t.srcs {
        srcs.push(read(mem, s)?);
    }
    let fold = |mut acc: Vec<Sym>, more: &[Vec<Sym>]| {
        for v in more {
            for (a, b) in acc.iter_mut().zip(v) {
                *a = combine(*a, *b);
            }
        }
        acc
    };
    let result: Option<Vec<Sym>> = match t.kind {
        Kind::Send | Kind::Nop => None,
        Kind::Recv | Kind::RecvCopySend => received.clone(),
        Kind::RecvReduceSend | Kind::RecvReduceCopy | Kind::RecvReduceCopySend => {
            received.clone().map(|v| fold(v, &srcs))
        }
        Kind::Copy => srcs.first().cloned(),
        Kind::Reduce => {
            let d = t.dst.map(|d| read(mem, d)).transpose()?;
            d.map(|d| fold(d, &srcs))
        }
    };
    if let (Some(d), Some(v)) = (t.dst, &result) {
        for (j, s) in v.iter().enumerate() {
            mem[q].get_mut(&d.area).expect("areas")[d.off as usize + j] = (*s, Some(i));
        }
    }
    if let Some(m) = t.send {
        sent[m] = match t.kind {
            Kind::Send => srcs.first().cloned().unwrap_or_default(),
            _ => result.unwrap_or_default(),
        };
    }
    Ok(())
}

/// The collective's outputs: each rank's output chunks hold what the collective gives it.
fn check_outputs(p: &Program, mem: &Memory) -> Result<(), MscclError> {
    let r = p.ranks;
    let all = if r == 64 { u64::MAX } else { (1u64 << r) - 1 };
    let cf = p.share();
    for (q, m) in mem.iter().enumerate() {
        let (area, base, n) = match (p.coll, p.in_place) {
            (Coll::AllReduce, true) => (Area::Input, 0, p.nchunks),
            (Coll::AllReduce, false) | (Coll::AllGather, _) => (Area::Output, 0, p.nchunks),
            (Coll::ReduceScatter, true) => (Area::Input, q as u64 * cf, cf),
            (Coll::ReduceScatter, false) => (Area::Output, 0, cf),
        };
        for k in 0..n {
            let want = match p.coll {
                Coll::AllReduce => Sym::Val { g: k, ranks: all },
                Coll::ReduceScatter => Sym::Val { g: q as u64 * cf + k, ranks: all },
                Coll::AllGather => Sym::Val { g: k, ranks: 1 << (k / cf) },
            };
            let (got, writer) = m[&area][(base + k) as usize];
            if got != want {
                let by = writer.map_or(String::new(), |w| format!("; last written by {}", p.describe(w)));
                let at = writer.map_or(crate::Where { rank: Some(q), ..crate::Where::default() }, |w| p.at(w));
                return Err(MscclError::new(
                    at,
                    format!(
                        "the {} is wrong: rank {q}'s output chunk {k} ({}[{}]) ends holding {}, not {}{by}",
                        p.coll.name(),
                        area.letter(),
                        base + k,
                        show(got, all),
                        show(want, all),
                    ),
                ));
            }
        }
    }
    Ok(())
}
