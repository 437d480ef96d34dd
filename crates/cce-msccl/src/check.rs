//! The shape rules (docs/MODEL.md X2, X3's buffer sizes), the in-place aliasing (X4), the
//! executor's grouping of steps into transmissions (X5), the waits and the links (X6): an
//! [`AlgoFile`] becomes a [`Program`], or the first broken rule is named with its rank, thread
//! block, step and line.

use std::collections::BTreeMap;

use crate::error::{MscclError, Where};
use crate::model::{AlgoFile, Buf, Coll, Gpu, Kind, Operand, Step};
use crate::program::{Area, Block, Chunks, Message, Program, Tx, Wait};

/// Fewest ranks.
pub const MIN_RANKS: usize = 2;
/// Most ranks (cce's collectives).
pub const MAX_RANKS: usize = 64;
/// Most channels (NCCL's `MAXCHANNELS`).
pub const MAX_CHANNELS: usize = 32;
/// Most chunks one step moves (the executor's `MSCCL_MAX_COUNT` − 1).
pub const MAX_CNT: i64 = 71;
/// Most thread blocks on a rank (the executor's `MSCCL_MAX_NUM_THREAD_BLOCKS`).
pub const MAX_TBS: usize = 1024;
/// Most transmissions over all ranks (the checks keep the happens-before relation as bitsets).
pub const MAX_TXS: usize = 1 << 15;
/// Most sources of one CCE packet (study §4.1): a fused reduction's destination and up to 31
/// of its `re` members.
pub const MAX_PACKET_SOURCES: usize = 32;
/// Where the executor closes a fused reduction (`MSCCL_MAX_REDUCE_FUSION`).
pub const EXECUTOR_FUSION: usize = 16;

/// Checks `file` and builds its [`Program`].
pub(crate) fn check(file: &AlgoFile) -> Result<Program, MscclError> {
    let (ranks, nchunks) = check_header(file)?;
    let order = gpu_order(file, ranks)?;
    let mut program = Program {
        name: file.name.clone(),
        proto: file.proto.name(),
        nchannels: file.nchannels as usize,
        nchunks,
        ranks,
        coll: file.coll,
        in_place: !file.outofplace,
        min_bytes: file.min_bytes as u64,
        max_bytes: file.max_bytes as u64,
        scratch_chunks: Vec::with_capacity(ranks),
        blocks: Vec::with_capacity(ranks),
        txs: Vec::new(),
        messages: Vec::new(),
        step_counts: [0; 9],
    };
    for (rank, gi) in order.into_iter().enumerate() {
        check_rank(file, rank, &file.gpus[gi.unwrap_or(0)], &mut program)?;
    }
    meet_waits(&mut program)?;
    link(&mut program)?;
    Ok(program)
}

/// The `<algo>` element's rules: the ranks, channels, chunks per loop and byte bounds, and one
/// `<gpu>` element per rank. Returns the ranks and the chunks per loop.
fn check_header(file: &AlgoFile) -> Result<(usize, u64), MscclError> {
    let top = Where::line(file.line);
    let bad = |m: String| Err(MscclError::new(top, m));
    let ranks = file.ngpus;
    if !(MIN_RANKS as i64..=MAX_RANKS as i64).contains(&ranks) {
        return bad(format!("ngpus {ranks}: cce runs {MIN_RANKS} to {MAX_RANKS} ranks"));
    }
    let ranks = ranks as usize;
    if !(1..=MAX_CHANNELS as i64).contains(&file.nchannels) {
        return bad(format!("nchannels {}: 1 to {MAX_CHANNELS}", file.nchannels));
    }
    if file.nchunksperloop < 1 || file.nchunksperloop > 1 << 30 {
        return bad(format!("nchunksperloop {}: 1 to {}", file.nchunksperloop, 1 << 30));
    }
    let nchunks = file.nchunksperloop as u64;
    if file.coll != Coll::AllReduce && nchunks % ranks as u64 != 0 {
        return bad(format!(
            "nchunksperloop {nchunks} is not a multiple of the {ranks} ranks: a {} gives each rank an equal share",
            file.coll.name()
        ));
    }
    if file.min_bytes < 0 || file.max_bytes < 0 {
        return bad(format!("minBytes {} / maxBytes {}: not negative", file.min_bytes, file.max_bytes));
    }
    if file.gpus.len() != ranks {
        return bad(format!("ngpus is {ranks}, but the file has {} <gpu> elements", file.gpus.len()));
    }
    Ok((ranks, nchunks))
}

/// Each rank's `<gpu>` element (its index in the file): the ids 0 to `ranks` − 1, once each.
fn gpu_order(file: &AlgoFile, ranks: usize) -> Result<Vec<Option<usize>>, MscclError> {
    let bad = |at: Where, m: String| Err(MscclError::new(at, m));
    let mut order: Vec<Option<usize>> = vec![None; ranks];
    for (i, g) in file.gpus.iter().enumerate() {
        let at = Where::line(g.line);
        if !(0..ranks as i64).contains(&g.id) {
            return bad(at, format!("gpu id {}: 0 to {}", g.id, ranks - 1));
        }
        if order[g.id as usize].replace(i).is_some() {
            return bad(at, format!("gpu id {} appears twice", g.id));
        }
    }
    Ok(order)
}

/// Checks rank `rank`'s `<gpu>` element `g` (its buffers, thread blocks, steps and
/// transmissions) into `program`.
fn check_rank(file: &AlgoFile, rank: usize, g: &Gpu, program: &mut Program) -> Result<(), MscclError> {
    let bad = |at: Where, m: String| Err(MscclError::new(at, m));
    let at = Where::rank(rank, g.line);
    check_buffer_sizes(file, at, g, program)?;
    program.scratch_chunks.push(g.s_chunks as u64);
    let declared = |b: Buf| match b {
        Buf::Input => g.i_chunks,
        Buf::Output => g.o_chunks,
        Buf::Scratch => g.s_chunks,
    };
    let tb_order = tb_order(rank, g)?;
    let mut blocks = thread_blocks(file, rank, g, &tb_order)?;
    // Steps, then transmissions.
    for (tb, ti) in tb_order.iter().enumerate() {
        let t = &g.tbs[ti.unwrap_or(0)];
        for (pos, st) in t.steps.iter().enumerate() {
            check_step(rank, tb, pos, st, &blocks, &declared)?;
            program.step_counts[Kind::ALL.iter().position(|k| *k == st.kind).unwrap_or(0)] += 1;
        }
        let first = program.txs.len();
        transmissions(file, rank, tb, &t.steps, &mut program.txs)?;
        blocks[tb].txs = first..program.txs.len();
        if program.txs.len() > MAX_TXS {
            return bad(
                Where::tb(rank, tb, t.line),
                format!("more than {MAX_TXS} transmissions over all ranks (the checks' limit)"),
            );
        }
    }
    program.blocks.push(blocks);
    Ok(())
}

/// X3's buffer sizes of `<gpu>` element `g` (at `at`): the input and output within the
/// collective's share of `program`'s chunks, the scratch within bounds.
fn check_buffer_sizes(file: &AlgoFile, at: Where, g: &Gpu, program: &Program) -> Result<(), MscclError> {
    let bad = |at: Where, m: String| Err(MscclError::new(at, m));
    let (nchunks, ranks) = (program.nchunks, program.ranks);
    let (in_chunks, out_chunks) = match file.coll {
        Coll::AllReduce => (nchunks, nchunks),
        Coll::ReduceScatter => (nchunks, nchunks / ranks as u64),
        Coll::AllGather => (nchunks / ranks as u64, nchunks),
    };
    for (name, v, max) in [("i_chunks", g.i_chunks, in_chunks), ("o_chunks", g.o_chunks, out_chunks)] {
        if v < 0 || v as u64 > max {
            let buf = if name == "i_chunks" { "input" } else { "output" };
            return bad(
                at,
                format!(
                    "{name} {v}: a {} gives each rank an {buf} of {max} chunks (nchunksperloop {nchunks}, {ranks} ranks); more would reach past the user's buffer",
                    file.coll.name()
                ),
            );
        }
    }
    if !(0..=1 << 30).contains(&g.s_chunks) {
        return bad(at, format!("s_chunks {}: 0 to {}", g.s_chunks, 1 << 30));
    }
    Ok(())
}

/// Rank `rank`'s thread blocks in id order (each one's index in `g`): at most [`MAX_TBS`], the
/// ids dense from 0, once each.
fn tb_order(rank: usize, g: &Gpu) -> Result<Vec<Option<usize>>, MscclError> {
    let bad = |at: Where, m: String| Err(MscclError::new(at, m));
    let at = Where::rank(rank, g.line);
    if g.tbs.len() > MAX_TBS {
        return bad(at, format!("{} thread blocks: the executor takes at most {MAX_TBS}", g.tbs.len()));
    }
    let mut tb_order: Vec<Option<usize>> = vec![None; g.tbs.len()];
    for (i, t) in g.tbs.iter().enumerate() {
        let at = Where { rank: Some(rank), line: Some(t.line), ..Where::default() };
        if t.id < 0 || t.id as usize >= g.tbs.len() {
            return bad(
                at,
                format!(
                    "tb id {}: thread block ids must be dense from 0 (this rank has {} thread blocks)",
                    t.id,
                    g.tbs.len()
                ),
            );
        }
        if tb_order[t.id as usize].replace(i).is_some() {
            return bad(at, format!("tb id {} appears twice", t.id));
        }
    }
    Ok(tb_order)
}

/// Rank `rank`'s thread blocks (`tb_order`: their indices in `g`, in id order), their peers
/// and channels checked: one thread block per peer, direction and channel. Their
/// transmissions are left empty.
fn thread_blocks(file: &AlgoFile, rank: usize, g: &Gpu, tb_order: &[Option<usize>]) -> Result<Vec<Block>, MscclError> {
    let ranks = file.ngpus as usize;
    let mut sends: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut recvs: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut blocks = Vec::with_capacity(g.tbs.len());
    for (tb, ti) in tb_order.iter().enumerate() {
        let t = &g.tbs[ti.unwrap_or(0)];
        let at = Where::tb(rank, tb, t.line);
        let bad = |m: String| Err(MscclError::new(at, m));
        let peer = |v: i64, what: &str| -> Result<Option<usize>, MscclError> {
            match v {
                -1 => Ok(None),
                p if (0..ranks as i64).contains(&p) && p as usize != rank => Ok(Some(p as usize)),
                p if p == rank as i64 => Err(MscclError::new(at, format!("{what} {p} is the rank itself"))),
                p => Err(MscclError::new(at, format!("{what} {p}: -1 or a rank 0 to {}", ranks - 1))),
            }
        };
        let (send, recv) = (peer(t.send, "send")?, peer(t.recv, "recv")?);
        if !(0..file.nchannels).contains(&t.chan) {
            return bad(format!("chan {}: 0 to {} (nchannels {})", t.chan, file.nchannels - 1, file.nchannels));
        }
        let chan = t.chan as usize;
        if let Some(p) = send
            && let Some(other) = sends.insert((p, chan), tb)
        {
            return bad(format!(
                "tb {other} already sends to rank {p} on channel {chan}: one thread block per peer and channel"
            ));
        }
        if let Some(p) = recv
            && let Some(other) = recvs.insert((p, chan), tb)
        {
            return bad(format!(
                "tb {other} already receives from rank {p} on channel {chan}: one thread block per peer and channel"
            ));
        }
        blocks.push(Block {
            send,
            recv,
            chan,
            steps: t.steps.len(),
            txs: 0..0,
            lines: t.steps.iter().map(|s| s.line).collect(),
            kinds: t.steps.iter().map(|s| s.kind).collect(),
        });
    }
    Ok(blocks)
}

/// The per-step rules of X2.
fn check_step(
    rank: usize,
    tb: usize,
    pos: usize,
    st: &Step,
    blocks: &[Block],
    declared: &dyn Fn(Buf) -> i64,
) -> Result<(), MscclError> {
    let at = Where::step(rank, tb, pos, st.line);
    let bad = |m: String| Err(MscclError::new(at, m));
    if st.s != pos as i64 {
        return bad(format!(
            "s=\"{}\" at position {pos}: steps are numbered 0, 1, 2, ... in order (the executor's flags count positions)",
            st.s
        ));
    }
    if st.hasdep != 0 && st.hasdep != 1 {
        return bad(format!("hasdep {}: 0 or 1", st.hasdep));
    }
    let me = &blocks[tb];
    if st.kind.sends() && me.send.is_none() {
        return bad(format!("a {} step sends, but tb {tb} has no send peer (send=\"-1\")", st.kind.name()));
    }
    if st.kind.receives() && me.recv.is_none() {
        return bad(format!("a {} step receives, but tb {tb} has no recv peer (recv=\"-1\")", st.kind.name()));
    }
    match st.depid {
        -1 => {
            if st.kind == Kind::Nop {
                return bad(
                    "a nop must carry a dependency (depid >= 0): without one the executor's step counter skips it and every later flag of the thread block is off by one"
                        .into(),
                );
            }
        }
        d if d >= 0 && (d as usize) < blocks.len() => {
            let n = blocks[d as usize].steps;
            if st.deps < 0 || st.deps as usize >= n {
                return bad(format!("deps {}: tb {d} has steps 0 to {}", st.deps, n as i64 - 1));
            }
        }
        d => return bad(format!("depid {d}: -1 or a thread block 0 to {} of this rank", blocks.len() as i64 - 1)),
    }
    if st.kind == Kind::Nop {
        return Ok(());
    }
    if !(1..=MAX_CNT).contains(&st.cnt) {
        return bad(format!("cnt {}: 1 to {MAX_CNT} chunks", st.cnt));
    }
    let operand = |o: Operand, what: &str| -> Result<(), MscclError> {
        let n = declared(o.buf);
        let name = match o.buf {
            Buf::Input => "i_chunks",
            Buf::Output => "o_chunks",
            Buf::Scratch => "s_chunks",
        };
        if o.off < 0 || o.off + st.cnt > n {
            return bad(format!(
                "{what} {}[{}..{}) is outside the buffer: {name} = {n}",
                o.buf.letter(),
                o.off,
                o.off + st.cnt
            ));
        }
        Ok(())
    };
    if st.kind.reads_src() {
        operand(st.src, "src")?;
    }
    if st.kind.writes_dst() {
        operand(st.dst, "dst")?;
    }
    Ok(())
}

/// The area and first chunk of a file operand on `rank`, after the in-place aliasing (X4).
pub(crate) fn place(file: &AlgoFile, rank: usize, o: Operand) -> Chunks {
    let off = o.off.max(0) as u64;
    let share = file.nchunksperloop as u64 / file.ngpus.max(1) as u64;
    let in_place = !file.outofplace;
    match (o.buf, file.coll, in_place) {
        (Buf::Scratch, _, _) => Chunks { area: Area::Scratch, off },
        (Buf::Output, Coll::AllReduce, true) => Chunks { area: Area::Input, off },
        (Buf::Output, Coll::ReduceScatter, true) => Chunks { area: Area::Input, off: rank as u64 * share + off },
        (Buf::Input, Coll::AllGather, true) => Chunks { area: Area::Output, off: rank as u64 * share + off },
        (Buf::Input, _, _) => Chunks { area: Area::Input, off },
        (Buf::Output, _, _) => Chunks { area: Area::Output, off },
    }
}

/// The executor's grouping of one thread block's steps (X5).
fn transmissions(file: &AlgoFile, rank: usize, tb: usize, steps: &[Step], txs: &mut Vec<Tx>) -> Result<(), MscclError> {
    let first = txs.len();
    let mut pending: Vec<Wait> = Vec::new();
    // The open reduction: its transmission and the file operands it fuses on.
    let mut open: Option<(usize, Operand, Buf)> = None;
    for (pos, st) in steps.iter().enumerate() {
        let at = Where::step(rank, tb, pos, st.line);
        let wait =
            (st.depid >= 0).then_some(Wait { tb: st.depid as usize, step: st.deps as usize, met_by: usize::MAX });
        if st.kind == Kind::Nop {
            pending.extend(wait);
            continue;
        }
        if st.kind == Kind::Reduce
            && let Some((i, dst, srcbuf)) = open
            && dst == st.dst
            && srcbuf == st.src.buf
            && st.depid == -1
            && txs[i].srcs.len() < MAX_PACKET_SOURCES - 1
        {
            let t = &mut txs[i];
            if t.cnt != st.cnt as u64 {
                return Err(MscclError::new(
                    at,
                    format!(
                        "this re joins the reduction of steps {}-{} (same dst, srcbuf, no depid), but its cnt {} differs from their {}: the executor would apply the last cnt to every member",
                        t.first, t.last, st.cnt, t.cnt
                    ),
                ));
            }
            t.srcs.push(place(file, rank, st.src));
            t.last = pos;
            t.hasdep = st.hasdep == 1;
            if t.hasdep {
                open = None;
            }
            continue;
        }
        let mut waits = std::mem::take(&mut pending);
        match wait {
            Some(w) => waits.push(w),
            None if !waits.is_empty() => {
                return Err(MscclError::new(
                    at,
                    "nop dependencies before this step need it to carry a dependency of its own (depid >= 0): the executor refuses such a chain",
                ));
            }
            None => {}
        }
        let i = txs.len();
        txs.push(Tx {
            rank,
            tb,
            first: pos,
            last: pos,
            line: st.line,
            kind: st.kind,
            cnt: st.cnt as u64,
            srcs: if st.kind.reads_src() { vec![place(file, rank, st.src)] } else { Vec::new() },
            dst: st.kind.writes_dst().then(|| place(file, rank, st.dst)),
            waits,
            hasdep: st.hasdep == 1,
            flag: 0,
            recv: None,
            send: None,
        });
        open = (st.kind == Kind::Reduce && st.hasdep == 0).then_some((i, st.dst, st.src.buf));
    }
    // The kernel's step counter: past the waits (all but one are nops' positions), then past
    // the fused members; the flag holds it, then it moves on by one.
    let mut counter = 0usize;
    for t in txs.iter_mut().skip(first) {
        counter += t.waits.len().saturating_sub(1);
        t.flag = counter + if t.kind == Kind::Reduce { t.srcs.len().saturating_sub(1) } else { 0 };
        counter = t.flag + 1;
    }
    Ok(())
}

/// Which transmission meets each wait (X6): the first of the waited thread block that sets
/// its flag (`hasdep`) at or after the waited step.
fn meet_waits(p: &mut Program) -> Result<(), MscclError> {
    for i in 0..p.txs.len() {
        let rank = p.txs[i].rank;
        for w in 0..p.txs[i].waits.len() {
            let Wait { tb, step, .. } = p.txs[i].waits[w];
            let range = p.blocks[rank][tb].txs.clone();
            let met = range.clone().find(|&j| p.txs[j].hasdep && p.txs[j].flag >= step);
            let Some(j) = met else {
                return Err(MscclError::new(
                    p.at(i),
                    format!(
                        "waits for tb {tb} step {step}, but no transmission of tb {tb} at or after step {step} sets a flag (hasdep=\"1\"): the executor would wait forever"
                    ),
                ));
            };
            p.txs[i].waits[w].met_by = j;
        }
    }
    Ok(())
}

/// Pairs the sends and receives of every link in order (X6).
fn link(p: &mut Program) -> Result<(), MscclError> {
    // (from, to, chan) → the sending and receiving transmissions, in order.
    type Ends = (Vec<usize>, Vec<usize>);
    let mut links: BTreeMap<(usize, usize, usize), Ends> = BTreeMap::new();
    for (rank, blocks) in p.blocks.iter().enumerate() {
        for b in blocks {
            for i in b.txs.clone() {
                let k = p.txs[i].kind;
                if k.sends()
                    && let Some(to) = b.send
                {
                    links.entry((rank, to, b.chan)).or_default().0.push(i);
                }
                if k.receives()
                    && let Some(from) = b.recv
                {
                    links.entry((from, rank, b.chan)).or_default().1.push(i);
                }
            }
        }
    }
    for ((from, to, chan), (sends, recvs)) in links {
        let link = format!("link {from}->{to} channel {chan}");
        for (k, (&s, &r)) in sends.iter().zip(&recvs).enumerate() {
            if p.txs[s].cnt != p.txs[r].cnt {
                return Err(MscclError::new(
                    p.at(r),
                    format!(
                        "receives {} chunks as message {k} of {link}, but {} sends {}",
                        p.txs[r].cnt,
                        p.describe(s),
                        p.txs[s].cnt
                    ),
                ));
            }
            let m = p.messages.len();
            p.messages.push(Message { from, to, chan, k, sender: s, receiver: r });
            p.txs[s].send = Some(m);
            p.txs[r].recv = Some(m);
        }
        if sends.len() > recvs.len() {
            let s = sends[recvs.len()];
            return Err(MscclError::new(
                p.at(s),
                format!(
                    "sends message {} of {link}, but rank {to} receives only {} on it: an unmatched send",
                    recvs.len(),
                    recvs.len()
                ),
            ));
        }
        if recvs.len() > sends.len() {
            let r = recvs[sends.len()];
            return Err(MscclError::new(
                p.at(r),
                format!(
                    "receives message {} of {link}, but rank {from} sends only {} on it: the receive would wait forever",
                    sends.len(),
                    sends.len()
                ),
            ));
        }
    }
    Ok(())
}
