#!/usr/bin/env python3
"""The project's own MSCCL XML schedules (docs/MODEL.md, "User algorithms: MSCCL XML", X1-X13).

Writes the old format msccl-tools writes (`<algo>` / `<gpu>` / `<tb>` / `<step>`, every attribute
on every step, unused operands as `srcbuf="i" srcoff="-1"` / `dstbuf="o" dstoff="-1"`, no
dependency as `depid="-1" deps="-1"`, `hasdep="1"` exactly on the steps another step waits for,
`s` = the step's position in its thread block, `cnt="0"` on a nop as msccl-tools writes it).
Chunk k of a rank's buffer is chunk k of the collective's `nchunksperloop` (X3). In place, the
buffers are named as msccl-tools names them after its aliasing (all-reduce and reduce-scatter
`i`, all-gather `o`), except allpairs-allreduce, whose final receives name `o` (X4's alias).

Algorithms (R ranks, K = --chunks, C = --channels):
  ring-allreduce       per channel one tb (send r+1, recv r-1): s, rrs x (R-2), rrcs, rcs x (R-2), r;
                       each step moves the K chunks of one ring position (cnt K); R*K*C chunks
  allpairs-allreduce   per peer a send tb and a receive tb (receives into scratch), one reducer tb
                       (nops + one fused chain of `re`), then every rank sends its reduced chunk to
                       every peer; R*K chunks
  hier-allreduce       G groups of M = R/G: an intra-group ring reduce-scatter into scratch, a ring
                       all-reduce of each shard across the groups on two channels, an intra-group
                       ring all-gather (depid / deps / nop between the tbs); 2*R*K chunks
  tree-allreduce       binomial tree: reduce to rank 0 (rrc chained across the child tbs by waits),
                       then broadcast; K chunks
  ring-reducescatter   per channel one ring tb: s, rrs x (R-2), rrc; R*K*C chunks
  ring-allgather       per channel one ring tb: [cpy], s, rcs x (R-2), r; R*K*C chunks
Defects (--defect, applied to ring-allreduce of R ranks; each one minimal):
  unmatched-send  rank 0's last receiving step removed (its predecessor's last send is never received)
  reordered-recv  rank 0 tb 0's first two receiving steps swapped
  cycle           tb 0 receives from r-1 (hasdep), tb 1 sends to r+1 after waiting for it: every
                  rank waits for its predecessor (R = 2: the two-rank deadlock)
  offset          rank 0 tb 0 step 0 reads input chunk i_chunks (one past the end)
  unknown-type    rank 0 tb 0 step 1 has type "rrx"
  missing-attr    rank 0 tb 0 step 1 has no `cnt`

Usage: msccl_gen.py ALGO RANKS [--inplace | --outofplace] [--chunks K] [--channels C]
                    [--groups G] [--defect D] [-o FILE]
"""
import argparse
import sys
import xml.etree.ElementTree as ET

MAX_CNT = 71  # X2: cnt 1..=71

ALGOS = ("ring-allreduce", "allpairs-allreduce", "hier-allreduce", "tree-allreduce",
         "ring-reducescatter", "ring-allgather")
DEFECTS = ("unmatched-send", "reordered-recv", "cycle", "offset", "unknown-type", "missing-attr")
RECVS = ("r", "rcs", "rrs", "rrc", "rrcs")


class Step:
    """One `<step>`; `dep` is (Tb, Step) or None, resolved to depid / deps when written."""

    def __init__(self, type_, src=None, dst=None, cnt=1, dep=None):
        if type_ == "nop":
            cnt = 0  # what msccl-tools writes on a nop (no operand); the executor ignores it
        elif not 1 <= cnt <= MAX_CNT:
            raise SystemExit(f"a step would move {cnt} chunks (1..={MAX_CNT}): use a smaller --chunks")
        self.type = type_
        self.src = src  # (buffer, offset) or None
        self.dst = dst
        self.cnt = cnt
        self.dep = dep
        self.omit = ()  # attributes left out (the missing-attr defect)


class Tb:
    def __init__(self, send=-1, recv=-1, chan=0):
        self.send, self.recv, self.chan = send, recv, chan
        self.steps = []

    def add(self, *args, **kw):
        st = Step(*args, **kw)
        self.steps.append(st)
        return st


class Gpu:
    def __init__(self, rank, i_chunks, o_chunks, s_chunks=0):
        self.rank, self.i_chunks, self.o_chunks, self.s_chunks = rank, i_chunks, o_chunks, s_chunks
        self.tbs = []

    def tb(self, send=-1, recv=-1, chan=0):
        t = Tb(send, recv, chan)
        self.tbs.append(t)
        return t


class Algo:
    def __init__(self, name, coll, ranks, nchunks, inplace):
        self.name, self.coll, self.ranks, self.nchunks, self.inplace = name, coll, ranks, nchunks, inplace
        self.gpus = []

    def to_xml(self):
        nchannels = max((t.chan + 1 for g in self.gpus for t in g.tbs), default=1)
        algo = ET.Element("algo")
        for k, v in (("name", self.name), ("proto", "Simple"), ("nchannels", nchannels),
                     ("nchunksperloop", self.nchunks), ("ngpus", self.ranks), ("coll", self.coll),
                     ("inplace", int(self.inplace)), ("outofplace", int(not self.inplace)),
                     ("minBytes", 0), ("maxBytes", 0)):
            algo.set(k, str(v))
        waited = {id(st.dep[1]) for g in self.gpus for t in g.tbs for st in t.steps if st.dep}
        for g in self.gpus:
            ge = ET.SubElement(algo, "gpu")
            for k, v in (("id", g.rank), ("i_chunks", g.i_chunks), ("o_chunks", g.o_chunks),
                         ("s_chunks", g.s_chunks)):
                ge.set(k, str(v))
            for tid, t in enumerate(g.tbs):
                te = ET.SubElement(ge, "tb")
                for k, v in (("id", tid), ("send", t.send), ("recv", t.recv), ("chan", t.chan)):
                    te.set(k, str(v))
                for pos, st in enumerate(t.steps):
                    if st.dep:
                        dtb, dst_ = st.dep
                        depid, deps = g.tbs.index(dtb), dtb.steps.index(dst_)
                    else:
                        depid = deps = -1
                    src = st.src or ("i", -1)
                    dst = st.dst or ("o", -1)
                    se = ET.SubElement(te, "step")
                    for k, v in (("s", pos), ("type", st.type), ("srcbuf", src[0]), ("srcoff", src[1]),
                                 ("dstbuf", dst[0]), ("dstoff", dst[1]), ("cnt", st.cnt),
                                 ("depid", depid), ("deps", deps),
                                 ("hasdep", int(id(st) in waited))):
                        if k not in st.omit:
                            se.set(k, str(v))
        ET.indent(algo, space="  ")
        return ET.tostring(algo, encoding="unicode") + "\n"


def ring_allreduce(R, K, C, inplace):
    """Per channel c a ring of one tb per rank; ring position p of channel c is chunks
    [p*K*C + c*K, +K). Rank r ends the reduce-scatter owning position r."""
    N = R * K * C
    a = Algo(f"ring-allreduce-r{R}-k{K}-c{C}", "allreduce", R, N, inplace)
    ob = "i" if inplace else "o"
    for r in range(R):
        g = Gpu(r, N, N)
        for c in range(C):
            t = g.tb(send=(r + 1) % R, recv=(r - 1) % R, chan=c)
            pos = lambda p: ((p % R) * K * C + c * K)
            t.add("s", src=("i", pos(r - 1)), cnt=K)
            for j in range(1, R - 1):
                t.add("rrs", src=("i", pos(r - j - 1)), cnt=K)
            t.add("rrcs", src=("i", pos(r)), dst=(ob, pos(r)), cnt=K)
            for j in range(1, R - 1):
                t.add("rcs", dst=(ob, pos(r - j)), cnt=K)
            t.add("r", dst=(ob, pos(r + 1)), cnt=K)
        a.gpus.append(g)
    return a


def ring_reducescatter(R, K, C, inplace):
    """Rank p's share (cf = K*C chunks) is input chunks [p*cf, (p+1)*cf); channel c carries
    [p*cf + c*K, +K) of each share. In place the output is written where msccl-tools maps it,
    input chunk r*cf + k (X4)."""
    cf = K * C
    N = R * cf
    a = Algo(f"ring-reducescatter-r{R}-k{K}-c{C}", "reducescatter", R, N, inplace)
    for r in range(R):
        g = Gpu(r, N, cf)
        for c in range(C):
            t = g.tb(send=(r + 1) % R, recv=(r - 1) % R, chan=c)
            pos = lambda p: ((p % R) * cf + c * K)
            t.add("s", src=("i", pos(r - 1)), cnt=K)
            for j in range(1, R - 1):
                t.add("rrs", src=("i", pos(r - j - 1)), cnt=K)
            dst = ("i", pos(r)) if inplace else ("o", c * K)
            t.add("rrc", src=("i", pos(r)), dst=dst, cnt=K)
        a.gpus.append(g)
    return a


def ring_allgather(R, K, C, inplace):
    """Output chunks [p*cf, (p+1)*cf) hold rank p's input. Out of place, tb c first copies the
    rank's own part into the output; in place (msccl-tools' mapping, X4) the input already lies
    there and every step names the output buffer."""
    cf = K * C
    N = R * cf
    a = Algo(f"ring-allgather-r{R}-k{K}-c{C}", "allgather", R, N, inplace)
    for r in range(R):
        g = Gpu(r, cf, N)
        for c in range(C):
            t = g.tb(send=(r + 1) % R, recv=(r - 1) % R, chan=c)
            pos = lambda p: ((p % R) * cf + c * K)
            if inplace:
                t.add("s", src=("o", pos(r)), cnt=K)
            else:
                t.add("cpy", src=("i", c * K), dst=("o", pos(r)), cnt=K)
                t.add("s", src=("i", c * K), cnt=K)
            for j in range(1, R - 1):
                t.add("rcs", dst=("o", pos(r - j)), cnt=K)
            t.add("r", dst=("o", pos(r + 1)), cnt=K)
        a.gpus.append(g)
    return a


def allpairs_allreduce(R, K, inplace):
    """Rank r owns chunks [r*K, (r+1)*K). Thread blocks: 0..R-2 send to each peer (ascending),
    R-1..2R-3 receive from each peer, 2R-2 reduces. A send tb sends the peer's chunk, then (waiting
    for the reducer's last `re`) the rank's reduced chunk. A receive tb receives the peer's copy of
    the rank's chunk into scratch slot j (hasdep: the reducer waits for it), then the peer's
    reduced chunk into the output. The reducer (out of place: first a cpy of its input chunk into
    the output) has a nop per receive tb but the last, then R-1 `re` into its chunk from the
    scratch slots: the first carries the wait on the last receive tb, the others continue the
    reduction (one fused transmission of R-1 sources, X5). In place it reduces into `i` and the
    receive tbs write `o`, its alias (X4)."""
    N = R * K
    a = Algo(f"allpairs-allreduce-r{R}-k{K}", "allreduce", R, N, inplace)
    for r in range(R):
        g = Gpu(r, N, N, (R - 1) * K)
        peers = [p for p in range(R) if p != r]
        sends = [g.tb(send=p) for p in peers]
        recvs = [g.tb(recv=p) for p in peers]
        red = g.tb()
        mine = ("i", r * K) if inplace else ("o", r * K)
        first = []
        for p, st in zip(peers, sends):
            st.add("s", src=("i", p * K), cnt=K)
        for j, rt in enumerate(recvs):
            first.append(rt.add("r", dst=("s", j * K), cnt=K))
        if not inplace:
            red.add("cpy", src=("i", r * K), dst=mine, cnt=K)
        for j in range(R - 2):
            red.add("nop", dep=(recvs[j], first[j]))
        last = None
        for j in range(R - 1):
            dep = (recvs[-1], first[-1]) if j == 0 else None
            last = red.add("re", src=("s", j * K), dst=mine, cnt=K, dep=dep)
        for st in sends:
            st.add("s", src=mine, cnt=K, dep=(red, last))
        for p, rt in zip(peers, recvs):
            rt.add("r", dst=("o", p * K), cnt=K)
        a.gpus.append(g)
    return a


def default_groups(R):
    """2 for even R, else R's smallest prime factor (so a prime R has groups of one rank)."""
    if R % 2 == 0:
        return 2
    p = 3
    while R % p:
        p += 2
    return p


def hier_allreduce(R, K, inplace, G=None):
    """Ranks r = g*M + m: group g of G, position m of M = R/G. Shard m is chunks
    [m*2GK, (m+1)*2GK); piece q of channel h of a shard is its chunks [(h*G + q)*K, +K).
    tb 0 (intra ring: send (g, m+1), recv (g, m-1)): reduce-scatter of the shards, s / rrs, its
    last step an rrc into scratch [0, 2GK) (hasdep); with M = 1 a cpy of the rank's shard into
    scratch instead (no peers). tb 1 and tb 2 (channels 0 and 1, send (g+1, m), recv (g-1, m)):
    ring all-reduce of the scratch shard's G pieces across the groups, s / rrs / rrcs into the
    output / rcs / r; each first step waits (depid) for tb 0's last phase-1 step, each last step
    is waited on. tb 0 then (M >= 2) runs the intra ring all-gather of the shards: a nop waiting
    for tb 1, the first send waiting for tb 2, then rcs / r."""
    G = G or default_groups(R)
    if G < 2 or R % G:
        raise SystemExit(f"--groups {G} must be at least 2 and divide {R}")
    M = R // G
    S = 2 * G * K  # chunks per shard
    N = M * S
    if S > MAX_CNT:
        raise SystemExit(f"a shard of {S} chunks would exceed cnt {MAX_CNT}: use a smaller --chunks or --groups")
    a = Algo(f"hier-allreduce-r{R}-g{G}-k{K}", "allreduce", R, N, inplace)
    ob = "i" if inplace else "o"
    for r in range(R):
        gi, m = divmod(r, M)
        rank = lambda gg, mm: (gg % G) * M + (mm % M)
        g = Gpu(r, N, N, S)
        if M >= 2:
            ta = g.tb(send=rank(gi, m + 1), recv=rank(gi, m - 1), chan=0)
            sh = lambda x: (x % M) * S
            ta.add("s", src=("i", sh(m - 1)), cnt=S)
            for j in range(1, M - 1):
                ta.add("rrs", src=("i", sh(m - j - 1)), cnt=S)
            a_last = ta.add("rrc", src=("i", sh(m)), dst=("s", 0), cnt=S)
        else:
            ta = g.tb()
            a_last = ta.add("cpy", src=("i", m * S), dst=("s", 0), cnt=S)
        bs, b_last = [], []
        for h in range(2):
            tb_ = g.tb(send=rank(gi + 1, m), recv=rank(gi - 1, m), chan=h)
            pc = lambda q: (h * G + q % G) * K
            tb_.add("s", src=("s", pc(gi - 1)), cnt=K, dep=(ta, a_last))
            for j in range(1, G - 1):
                tb_.add("rrs", src=("s", pc(gi - j - 1)), cnt=K)
            tb_.add("rrcs", src=("s", pc(gi)), dst=(ob, m * S + pc(gi)), cnt=K)
            for j in range(1, G - 1):
                tb_.add("rcs", dst=(ob, m * S + pc(gi - j)), cnt=K)
            b_last.append(tb_.add("r", dst=(ob, m * S + pc(gi + 1)), cnt=K))
            bs.append(tb_)
        if M >= 2:
            sh = lambda x: (x % M) * S
            ta.add("nop", dep=(bs[0], b_last[0]))
            ta.add("s", src=(ob, sh(m)), cnt=S, dep=(bs[1], b_last[1]))
            for j in range(1, M - 1):
                ta.add("rcs", dst=(ob, sh(m - j)), cnt=S)
            ta.add("r", dst=(ob, sh(m + 1)), cnt=S)
        a.gpus.append(g)
    return a


def tree_allreduce(R, K, inplace):
    """Binomial tree on the whole buffer (K chunks, every step cnt K). Rank r's parent is
    r - lowbit(r), its children r + d for d = 1, 2, 4, ... below lowbit(r) (any d for rank 0)
    while r + d < R. One tb per tree edge (send = recv = the peer): children's tbs first (d
    ascending), then the parent's. Child tb k: rrc of the child's partial into the rank's buffer
    (the first reads the input; the later ones wait for the previous child tb's rrc), then a send
    of the result down, which waits for the parent tb's receive (rank 0: the last child's rrc).
    Parent tb: send the partial up (waiting for the last child's rrc), then receive the result."""
    N = K
    a = Algo(f"tree-allreduce-r{R}-k{K}", "allreduce", R, N, inplace)
    ob = "i" if inplace else "o"
    for r in range(R):
        g = Gpu(r, N, N)
        low = r & -r if r else 1 << R.bit_length()
        kids = []
        d = 1
        while d < low and r + d < R:
            kids.append(r + d)
            d *= 2
        ktbs = [g.tb(send=c, recv=c) for c in kids]
        reds = []
        for k, t in enumerate(ktbs):
            src = ("i", 0) if k == 0 else (ob, 0)
            dep = (ktbs[k - 1], reds[k - 1]) if k else None
            reds.append(t.add("rrc", src=src, dst=(ob, 0), cnt=K, dep=dep))
        final = (ktbs[-1], reds[-1]) if kids else None
        if r:
            p = r - low
            pt = g.tb(send=p, recv=p)
            pt.add("s", src=(ob, 0) if kids else ("i", 0), cnt=K, dep=final)
            final = (pt, pt.add("r", dst=(ob, 0), cnt=K))
        for k, t in enumerate(ktbs):
            dep = None if (r == 0 and k == len(ktbs) - 1) else final
            t.add("s", src=(ob, 0), cnt=K, dep=dep)
        a.gpus.append(g)
    return a


def renumbered(t, drop=None, swap=None):
    if drop is not None:
        del t.steps[drop]
    if swap is not None:
        i, j = swap
        t.steps[i], t.steps[j] = t.steps[j], t.steps[i]


def defect(name, R, K, C, inplace):
    if name == "cycle":
        a = Algo(f"defect-cycle-r{R}", "allreduce", R, R, inplace)
        for r in range(R):
            g = Gpu(r, R, R)
            t0 = g.tb(recv=(r - 1) % R)
            t1 = g.tb(send=(r + 1) % R)
            rx = t0.add("r", dst=("o", (r - 1) % R))
            t1.add("s", src=("i", r), dep=(t0, rx))
            a.gpus.append(g)
        return a
    a = ring_allreduce(R, K, C, inplace)
    a.name = f"defect-{name}-r{R}"
    t = a.gpus[0].tbs[0]
    recv_pos = [i for i, st in enumerate(t.steps) if st.type in RECVS]
    if name == "unmatched-send":
        renumbered(t, drop=recv_pos[-1])
    elif name == "reordered-recv":
        renumbered(t, swap=(recv_pos[0], recv_pos[1]))
    elif name == "offset":
        t.steps[0].src = ("i", a.gpus[0].i_chunks)
    elif name == "unknown-type":
        t.steps[1].type = "rrx"
    elif name == "missing-attr":
        t.steps[1].omit = ("cnt",)
    else:
        raise SystemExit(f"unknown defect {name} (one of {', '.join(DEFECTS)})")
    return a


def build(algo, R, K=1, C=1, inplace=False, groups=None, defect_name=None):
    """The schedule as an Algo (call .to_xml() for the text)."""
    if not 2 <= R <= 64:
        raise SystemExit(f"RANKS {R}: 2..=64")
    if K < 1 or C < 1 or C > 32:
        raise SystemExit("--chunks >= 1, --channels 1..=32")
    if defect_name:
        if algo != "ring-allreduce":
            raise SystemExit(f"--defect edits ring-allreduce, not {algo}")
        return defect(defect_name, R, K, C, inplace)
    if C != 1 and not algo.startswith("ring-"):
        raise SystemExit(f"--channels applies to the ring algorithms, not {algo}")
    if algo == "ring-allreduce":
        return ring_allreduce(R, K, C, inplace)
    if algo == "ring-reducescatter":
        return ring_reducescatter(R, K, C, inplace)
    if algo == "ring-allgather":
        return ring_allgather(R, K, C, inplace)
    if algo == "allpairs-allreduce":
        return allpairs_allreduce(R, K, inplace)
    if algo == "hier-allreduce":
        return hier_allreduce(R, K, inplace, groups)
    if algo == "tree-allreduce":
        return tree_allreduce(R, K, inplace)
    raise SystemExit(f"unknown algorithm {algo} (one of {', '.join(ALGOS)})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("algo", help=", ".join(ALGOS) + " (--defect takes ring-allreduce)")
    ap.add_argument("ranks", type=int)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--inplace", action="store_true")
    mode.add_argument("--outofplace", action="store_true", help="the default")
    ap.add_argument("--chunks", type=int, default=1, metavar="K", help="chunks per rank (per channel)")
    ap.add_argument("--channels", type=int, default=1, metavar="C", help="ring channels")
    ap.add_argument("--groups", type=int, default=None, metavar="G", help="hier-allreduce's groups")
    ap.add_argument("--defect", choices=DEFECTS)
    ap.add_argument("-o", dest="out", metavar="FILE")
    args = ap.parse_args(argv)
    text = build(args.algo, args.ranks, args.chunks, args.channels, args.inplace, args.groups,
                 args.defect).to_xml()
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
