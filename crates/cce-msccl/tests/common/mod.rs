//! XML written here for the tests: a small writer of the old MSCCL format, and a ring
//! all-reduce built with it (each test edits it into the schedule it needs).
#![allow(dead_code, reason = "each test file uses a subset")]

use std::fmt::Write;

/// One `<step>`: (type, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps, hasdep).
#[derive(Clone, Debug)]
pub(crate) struct S {
    pub(crate) t: &'static str,
    pub(crate) src: (&'static str, i64),
    pub(crate) dst: (&'static str, i64),
    pub(crate) cnt: i64,
    pub(crate) dep: (i64, i64),
    pub(crate) hasdep: i64,
}

impl S {
    pub(crate) fn new(t: &'static str, src: (&'static str, i64), dst: (&'static str, i64)) -> S {
        S { t, src, dst, cnt: 1, dep: (-1, -1), hasdep: 0 }
    }
    pub(crate) fn dep(mut self, tb: i64, step: i64) -> S {
        self.dep = (tb, step);
        self
    }
    pub(crate) fn flag(mut self) -> S {
        self.hasdep = 1;
        self
    }
}

/// A thread block: (send, recv, chan, steps).
#[derive(Clone, Debug)]
pub(crate) struct Tb {
    pub(crate) send: i64,
    pub(crate) recv: i64,
    pub(crate) chan: i64,
    pub(crate) steps: Vec<S>,
}

/// A rank: (i_chunks, o_chunks, s_chunks, thread blocks).
#[derive(Clone, Debug)]
pub(crate) struct Gpu {
    pub(crate) chunks: (i64, i64, i64),
    pub(crate) tbs: Vec<Tb>,
}

/// A whole file.
#[derive(Clone, Debug)]
pub(crate) struct Algo {
    pub(crate) coll: &'static str,
    pub(crate) nchunks: i64,
    pub(crate) inplace: bool,
    pub(crate) gpus: Vec<Gpu>,
}

impl Algo {
    pub(crate) fn xml(&self) -> String {
        let mut x = String::new();
        let nch = self.gpus.iter().flat_map(|g| &g.tbs).map(|t| t.chan + 1).max().unwrap_or(1);
        let _ = writeln!(
            x,
            "<algo name=\"test\" proto=\"Simple\" nchannels=\"{nch}\" nchunksperloop=\"{}\" ngpus=\"{}\" coll=\"{}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"0\" maxBytes=\"0\">",
            self.nchunks,
            self.gpus.len(),
            self.coll,
            u8::from(self.inplace),
            u8::from(!self.inplace)
        );
        for (g, gpu) in self.gpus.iter().enumerate() {
            let (i, o, s) = gpu.chunks;
            let _ = writeln!(x, "  <gpu id=\"{g}\" i_chunks=\"{i}\" o_chunks=\"{o}\" s_chunks=\"{s}\">");
            for (t, tb) in gpu.tbs.iter().enumerate() {
                let _ =
                    writeln!(x, "    <tb id=\"{t}\" send=\"{}\" recv=\"{}\" chan=\"{}\">", tb.send, tb.recv, tb.chan);
                for (k, s) in tb.steps.iter().enumerate() {
                    let _ = writeln!(
                        x,
                        "      <step s=\"{k}\" type=\"{}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{}\" depid=\"{}\" deps=\"{}\" hasdep=\"{}\"/>",
                        s.t, s.src.0, s.src.1, s.dst.0, s.dst.1, s.cnt, s.dep.0, s.dep.1, s.hasdep
                    );
                }
                let _ = writeln!(x, "    </tb>");
            }
            let _ = writeln!(x, "  </gpu>");
        }
        x.push_str("</algo>\n");
        x
    }
}

/// The ring all-reduce, out of place, one chunk per rank: rank q sends its chunk q, each next
/// rank adds its own and passes it on (rrs), the last (q − 1) writes the sum (rrcs), and the
/// sum goes round once more (rcs, the last hop r).
pub(crate) fn ring(r: usize) -> Algo {
    let m = |x: i64| x.rem_euclid(r as i64);
    let gpus = (0..r as i64)
        .map(|q| {
            let mut steps = vec![S::new("s", ("i", q), ("o", -1))];
            for k in 1..r as i64 {
                let c = m(q - k);
                let t = if k < r as i64 - 1 { "rrs" } else { "rrcs" };
                let dst = if t == "rrcs" { ("o", c) } else { ("o", -1) };
                steps.push(S::new(t, ("i", c), dst));
            }
            for h in 1..r as i64 {
                let c = m(q - h + 1);
                let t = if h < r as i64 - 1 { "rcs" } else { "r" };
                steps.push(S::new(t, ("i", -1), ("o", c)));
            }
            Gpu { chunks: (r as i64, r as i64, 0), tbs: vec![Tb { send: m(q + 1), recv: m(q - 1), chan: 0, steps }] }
        })
        .collect();
    Algo { coll: "allreduce", nchunks: r as i64, inplace: false, gpus }
}

/// All-pairs all-reduce, out of place: rank q owns chunk q. Per peer p a thread block sends
/// i[p] to p and receives p's copy of chunk q into s[p] (flagged); a reduction thread block
/// copies i[q] to o[q], waits for every receive (nops, then the first re's own depid) and adds
/// every s[p] in one run of re steps; each peer thread block then sends o[q] and receives o[p].
pub(crate) fn allpairs(r: usize) -> Algo {
    let gpus = (0..r as i64)
        .map(|q| {
            let peers: Vec<i64> = (0..r as i64).filter(|&p| p != q).collect();
            let red = peers.len() as i64; // the reduction thread block's id
            let mut tbs: Vec<Tb> = peers
                .iter()
                .map(|&p| Tb {
                    send: p,
                    recv: p,
                    chan: 0,
                    steps: vec![S::new("s", ("i", p), ("o", -1)), S::new("r", ("i", -1), ("s", p)).flag()],
                })
                .collect();
            let mut steps = vec![S::new("cpy", ("i", q), ("o", q))];
            let (last, rest) = peers.split_last().expect("two ranks at least");
            for (t, _) in rest.iter().enumerate() {
                steps.push(S::new("nop", ("i", -1), ("o", -1)).dep(t as i64, 1));
            }
            for (k, &p) in peers.iter().enumerate() {
                let mut re = S::new("re", ("s", p), ("o", q));
                if k == 0 {
                    re = re.dep(peers.iter().position(|x| x == last).expect("peer") as i64, 1);
                }
                steps.push(re);
            }
            let done = steps.len() as i64 - 1;
            if let Some(l) = steps.last_mut() {
                l.hasdep = 1;
            }
            for (t, &p) in peers.iter().enumerate() {
                tbs[t].steps.push(S::new("s", ("o", q), ("o", -1)).dep(red, done));
                tbs[t].steps.push(S::new("r", ("i", -1), ("o", p)));
            }
            tbs.push(Tb { send: -1, recv: -1, chan: 0, steps });
            Gpu { chunks: (r as i64, r as i64, r as i64), tbs }
        })
        .collect();
    Algo { coll: "allreduce", nchunks: r as i64, inplace: false, gpus }
}

/// Two ranks, in place, one chunk: each sends i[0] and then adds what it receives into i[0]
/// (rrc). The send's chunk is rewritten while the peer may not have read it: a snapshot.
pub(crate) fn exchange() -> Algo {
    let gpus = (0..2)
        .map(|q| Gpu {
            chunks: (1, 1, 0),
            tbs: vec![Tb {
                send: 1 - q,
                recv: 1 - q,
                chan: 0,
                steps: vec![S::new("s", ("i", 0), ("o", -1)), S::new("rrc", ("i", 0), ("i", 0))],
            }],
        })
        .collect();
    Algo { coll: "allreduce", nchunks: 1, inplace: true, gpus }
}
