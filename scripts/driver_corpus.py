#!/usr/bin/env python3
"""A corpus of DMA rings laid out the way the public Neuron driver lays out plain copies.

Usage: driver_corpus.py OUTDIR

Writes every case's files into OUTDIR and a list of cases to OUTDIR/manifest.json:
    [{"name": str, "about": str, "args": [...], "checks": [{"dump": path, "expect": path}]}, ...]
"args" are the arguments that follow `cce run` (the word "run" itself is left out). Every path
in the manifest is relative to OUTDIR, so `cce run` must be started with OUTDIR as its working
directory. After a run that exits 0, each "dump" file must equal its "expect" file byte for byte.
OUTDIR must be missing or empty. The script creates OUTDIR/dumps/ (empty) for the dump files. It uses the Python standard library
only.

Where the bits come from
------------------------
The descriptor bits below come only from what GAPS.md §12 of this project says about the public
driver (GitHub aws-neuron/aws-neuron-driver, files udma/udma.h and udma/udma_m2m.c), in the form
the corpus brief gave them. This script was written without reading the engine's code
(crates/cce-engine, crates/cce-format/src/packet.rs). It checks the engine against the driver,
not against the engine.

  * A descriptor is 16 bytes, four little-endian u32 words W0..W3.
  * M2S (tx): W0 = len_ctrl, W1 = meta_ctrl, W2/W3 = source address low/high 32 bits.
    len_ctrl: length [15:0] (65,536 is written as 0, more does not fit), ring id [25:24],
    FIRST 26, LAST 27, INT_EN 28, DMB 30. A copy descriptor always has FIRST|LAST, so each
    chunk is a packet of one descriptor. meta_ctrl of a plain copy is 0x01080003. With the write
    barrier (meta_ctrl bit 26) it is 0x05080003.
  * S2M (rx): W0 = length [15:0] (65,536 as 0) | ring id [25:24] | INT_EN 28 when asked for.
    It has no FIRST and no LAST. W1 = 0. W2/W3 = destination address low/high.
  * A copy of B bytes is cut into chunks of at most 65,536 bytes. Each chunk is one M2S and one
    S2M of the same length, and source and destination move on by the chunk size.
  * The barrier goes on the last chunk of a copy only. It depends on the NeuronCore arch: arch 1
    uses DMB (tx len_ctrl bit 30). Arch 2 and 3 use the write barrier (meta_ctrl 0x05080003),
    and arch 4 is treated like arch 3. The driver's "page-list path" puts DMB on the last chunk
    on every arch. This script reads that as DMB *instead of* the write barrier, so the
    meta_ctrl stays plain.
  * Ring ids: the first lap of a ring uses ring id 1 and each wrap adds 1 (mod 4). Descriptor k
    of a program on an N-slot ring goes in slot k % N and carries ring id (initial + k // N) % 4.
    The tx ring and the rx ring each follow this on their own.

The two ways `cce run` takes rings (the CLI's contract)
-------------------------------------------------------
  * Raw ring memory, one lap per queue:
    --tx TX.bin --rx RX.bin --ring-size N [--tx-tail T] [--rx-tail T] [--phase P], then the
    case's --arch A once. Repeating the group adds queues 0, 1, ... The ring id written into
    the descriptors is the lap's phase P.
  * A "CCERING" ring dump, version 2, for programs longer than one lap. It holds the
    descriptors in program order with each lap's ring id, and ends in a 64-bit FNV-1a checksum
    (flags bit 0). See ring_dump() for the exact layout.

Source data is deterministic pseudo-random bytes (BLAKE2b run in counter mode over a per-buffer
label). Before the run, every destination is loaded with the bitwise NOT of the bytes meant to
land there, so it differs from the source in every byte. It also gets 64 guard bytes on each
side, and every dump covers those guard bytes, so a copy that is too long or lands in the wrong
place shows up. The expected bytes come from a small simulation in this script: the loaded
memory, with each descriptor pair that should run copied over it (the first T pairs of a
raw ring with tail T, every pair of a ring dump).
"""
import hashlib
import json
import os
import struct
import sys

# ---- descriptor bits (GAPS.md §12; udma/udma.h, udma/udma_m2m.c) ----
LEN_MASK = 0xFFFF
RING_ID_SHIFT = 24
FIRST = 1 << 26
LAST = 1 << 27
INT_EN = 1 << 28
DMB = 1 << 30
META_COPY = 0x01080003
META_WRITE_BARRIER = 1 << 26
META_COPY_WB = META_COPY | META_WRITE_BARRIER
assert META_COPY_WB == 0x05080003
MAX_CHUNK = 65536
INITIAL_RING_ID = 1

GUARD = 64  # guard bytes loaded on each side of every destination and included in its dump
NOT_TABLE = bytes(255 - i for i in range(256))


def len_field(n):
    assert 1 <= n <= MAX_CHUNK, n
    return n & LEN_MASK  # 65,536 -> 0


def tx_words(length, src, ring_id, dmb=False, write_barrier=False, int_en=False):
    w0 = len_field(length) | ((ring_id & 3) << RING_ID_SHIFT) | FIRST | LAST
    if int_en:
        w0 |= INT_EN
    if dmb:
        w0 |= DMB
    w1 = META_COPY_WB if write_barrier else META_COPY
    return (w0, w1, src & 0xFFFFFFFF, src >> 32)


def rx_words(length, dst, ring_id, int_en=False):
    w0 = len_field(length) | ((ring_id & 3) << RING_ID_SHIFT)
    if int_en:
        w0 |= INT_EN
    return (w0, 0, dst & 0xFFFFFFFF, dst >> 32)


def pack(words):
    assert all(0 <= w <= 0xFFFFFFFF for w in words), words
    return struct.pack("<4I", *words)


class Pair:
    """One chunk: an M2S and an S2M of the same length (ring id filled in when placed)."""

    def __init__(self, src, dst, length, dmb, write_barrier, rx_int):
        self.src, self.dst, self.length = src, dst, length
        self.dmb, self.write_barrier, self.rx_int = dmb, write_barrier, rx_int

    def tx(self, ring_id):
        return pack(tx_words(self.length, self.src, ring_id, self.dmb, self.write_barrier))

    def rx(self, ring_id):
        return pack(rx_words(self.length, self.dst, ring_id, self.rx_int))


def plan_copy(src, dst, nbytes, arch, barrier="arch", rx_int="none"):
    """The descriptor pairs of one copy: chunks of at most 64 KiB, with the barrier on the last.

    barrier: "arch" (DMB on arch 1; write barrier on arch 2, 3 and 4), "page-list" (DMB on every
    arch). rx_int: "none", "last" (INT_EN on the last chunk's S2M) or "all" (on every S2M).
    """
    assert nbytes >= 1 and arch in (1, 2, 3, 4) and barrier in ("arch", "page-list")
    assert rx_int in ("none", "last", "all")
    pairs = []
    off = 0
    while off < nbytes:
        n = min(MAX_CHUNK, nbytes - off)
        last = off + n == nbytes
        dmb = last and (barrier == "page-list" or arch == 1)
        wb = last and barrier == "arch" and arch in (2, 3, 4)
        intr = rx_int == "all" or (rx_int == "last" and last)
        pairs.append(Pair(src + off, dst + off, n, dmb, wb, intr))
        off += n
    return pairs


def ring_ids(count, ring_size, initial):
    return [(initial + k // ring_size) % 4 for k in range(count)]


# ---- data ----
def prng(label, n):
    """n deterministic pseudo-random bytes named by label (BLAKE2b in counter mode)."""
    key = hashlib.blake2b(label.encode(), digest_size=32).digest()
    out = bytearray()
    ctr = 0
    while len(out) < n:
        out += hashlib.blake2b(ctr.to_bytes(8, "little"), key=key, digest_size=64).digest()
        ctr += 1
    return bytes(out[:n])


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def ring_dump(arch, queues):
    """A version-2 "CCERING" ring dump. queues: [(queue id, ring size, initial phase, pairs)].

    Layout (little-endian): magic b"CCERING\\0"; u16 version 2; u16 header bytes 32; u32 flags (1:
    checksum present); u32 arch; u32 queue count; 8 zero bytes. Then one 32-byte entry per
    queue: u32 queue id, u32 ring size, u32 tx count, u32 rx count, u8 initial phase, 3 zero
    bytes, u32 tx doorbell (= tx count), u32 rx doorbell (= rx count), u32 zero. Then each
    queue's tx descriptors and then its rx descriptors, in program order, each carrying the ring
    id of its lap. Last comes the FNV-1a 64 checksum of every byte before it.
    """
    assert 1 <= len(queues) <= 16
    assert len({q[0] for q in queues}) == len(queues)
    out = bytearray(b"CCERING\0")
    out += struct.pack("<HHIII", 2, 32, 1, arch, len(queues))
    out += bytes(8)
    assert len(out) == 32
    for qid, size, initial, pairs in queues:
        assert 0 <= qid <= 15 and 0 <= initial <= 3 and size % 16 == 0 and size >= 32
        n = len(pairs)
        entry = struct.pack("<IIIIB3xIII", qid, size, n, n, initial, n, n, 0)
        assert len(entry) == 32
        out += entry
    for qid, size, initial, pairs in queues:
        ids = ring_ids(len(pairs), size, initial)
        for p, r in zip(pairs, ids):
            out += p.tx(r)
        for p, r in zip(pairs, ids):
            out += p.rx(r)
    out += struct.pack("<Q", fnv1a64(out))
    return bytes(out)


# ---- cases ----
class Corpus:
    def __init__(self, outdir):
        self.outdir = outdir
        self.cases = []
        self.blobs = {}  # sha256 -> relative path: identical data is written once

    def blob(self, label, data):
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.blobs:
            rel = f"blobs/{label}-{digest[:12]}.bin"
            with open(os.path.join(self.outdir, rel), "wb") as f:
                f.write(data)
            self.blobs[digest] = rel
        return self.blobs[digest]

    def write(self, rel, data):
        path = os.path.join(self.outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return rel


class Case:
    """Memory loads, queues of descriptor pairs, and the ranges to dump and check."""

    def __init__(self, name, about, arch=3):
        self.name, self.about, self.arch = name, about, arch
        self.loads = []  # (addr, label, bytes)
        self.dumps = []  # (addr, len)
        self.queues = []  # dicts: pairs, size, phase, tail, qid
        self.extra_dumps = []  # (addr, len) checked too, named for the reader

    def load(self, addr, label, data):
        for a, _, d in self.loads:
            assert addr + len(data) <= a or a + len(d) <= addr, f"{self.name}: loads overlap"
        self.loads.append((addr, label, data))

    def region(self, src, dst, nbytes, label):
        """Loads nbytes of source at src and the NOT of it (with guards) around dst; dumps dst."""
        data = prng(f"src-{label}", nbytes)
        self.load(src, f"src-{label}", data)
        guard = prng(f"guard-{label}", 2 * GUARD)
        self.load(dst - GUARD, f"dst-{label}", guard[:GUARD] + data.translate(NOT_TABLE) + guard[GUARD:])
        self.dumps.append((dst - GUARD, nbytes + 2 * GUARD))
        return data

    def queue(self, pairs, size, phase=None, tail=None, qid=None):
        self.queues.append(dict(pairs=pairs, size=size, phase=phase, tail=tail, qid=qid))

    def read_initial(self, addr, n):
        for a, _, d in self.loads:
            if a <= addr and addr + n <= a + len(d):
                return d[addr - a : addr - a + n]
        raise AssertionError(f"{self.name}: {addr:#x}+{n} is not inside one load")

    def expected(self, addr, n, executed):
        buf = bytearray(self.read_initial(addr, n))
        for p in executed:
            lo, hi = max(addr, p.dst), min(addr + n, p.dst + p.length)
            if lo < hi:
                buf[lo - addr : hi - addr] = self.read_initial(p.src + (lo - p.dst), hi - lo)
        return bytes(buf)

    def executed(self, form):
        out = []
        for q in self.queues:
            pairs = q["pairs"]
            if form == "raw" and q["tail"] is not None:
                pairs = pairs[: q["tail"]]
            out.extend(pairs)
        # Sources never overlap destinations, and no two running destinations overlap, so the
        # order the engine runs them in cannot change the result.
        spans = sorted((p.dst, p.dst + p.length) for p in out)
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a1 <= b0, f"{self.name}: destinations overlap"
        for p in out:
            for d0, d1 in spans:
                assert p.src + p.length <= d0 or d1 <= p.src, f"{self.name}: a source overlaps a destination"
        return out

    def emit(self, corpus, form):
        """Writes the case's files and returns its manifest entry. form: "raw" or "dump"."""
        name = self.name
        args = []
        if form == "raw":
            for key in ("phase", "tail"):
                given = [q[key] is not None for q in self.queues]
                assert all(given) or not any(given), f"{name}: --{key} for some queues only"
            for i, q in enumerate(self.queues):
                pairs, size = q["pairs"], q["size"]
                assert len(pairs) <= size, f"{name}: a raw ring holds one lap"
                rid = INITIAL_RING_ID if q["phase"] is None else q["phase"]
                tx = corpus.write(f"cases/{name}/q{i}-tx.bin", b"".join(p.tx(rid) for p in pairs))
                rx = corpus.write(f"cases/{name}/q{i}-rx.bin", b"".join(p.rx(rid) for p in pairs))
                args += ["--tx", tx, "--rx", rx, "--ring-size", str(size)]
                if q["tail"] is not None:
                    assert 0 <= q["tail"] <= len(pairs)
                    args += ["--tx-tail", str(q["tail"]), "--rx-tail", str(q["tail"])]
                if q["phase"] is not None:
                    args += ["--phase", str(q["phase"])]
            # A capture does not say its arch: the command line does (per-arch packet limits).
            args += ["--arch", str(self.arch)]
        else:
            queues = []
            for i, q in enumerate(self.queues):
                assert q["tail"] is None
                qid = i if q["qid"] is None else q["qid"]
                initial = INITIAL_RING_ID if q["phase"] is None else q["phase"]
                queues.append((qid, q["size"], initial, q["pairs"]))
            args.append(corpus.write(f"cases/{name}/ring.cce", ring_dump(self.arch, queues)))
        for addr, label, data in self.loads:
            args += ["--load", f"{addr:#x}={corpus.blob(label, data)}"]
        executed = self.executed(form)
        checks = []
        for i, (addr, n) in enumerate(self.dumps + self.extra_dumps):
            dump = f"dumps/{name}.{i}.bin"
            args += ["--dump", f"{addr:#x}:{n}={dump}"]
            exp = self.expected(addr, n, executed)
            checks.append({"dump": dump, "expect": corpus.blob(f"expect-{n}", exp)})
        # A no-op engine must fail the case: some check must differ from the loaded bytes.
        assert any(
            self.expected(a, n, executed) != self.read_initial(a, n) for a, n in self.dumps + self.extra_dumps
        ), f"{name}: nothing to see"
        return {"name": name, "about": self.about, "args": args, "checks": checks}


SRC = 0x1000_0000
DST = 0x4000_0000
KIB, MIB = 1024, 1024 * 1024


def copy_case(name, about, nbytes, arch, src=SRC, dst=DST, label=None, **kw):
    c = Case(name, about, arch)
    c.region(src, dst, nbytes, label or f"{nbytes}")
    pairs = plan_copy(src, dst, nbytes, arch, **kw)
    return c, pairs


def raw_size(count):
    """The smallest valid ring size (a multiple of 16, at least 32) holding count descriptors."""
    return max(32, -(-count // 16) * 16)


def many_copies(c, count, label, seed_sizes, max_size, arch, src=SRC, dst=DST, barrier="arch"):
    """count back-to-back copies of 1..max_size bytes each (one chunk each, so each has its
    barrier), out of one source buffer into one destination buffer."""
    sizes = [1 + b % max_size for b in struct.unpack(f"<{count}I", prng(seed_sizes, 4 * count))]
    total = sum(sizes)
    c.region(src, dst, total, label)
    pairs, off = [], 0
    for n in sizes:
        pairs += plan_copy(src + off, dst + off, n, arch, barrier=barrier)
        off += n
    return pairs, sizes


def build(corpus):
    out = []

    def add(case, form):
        out.append(case.emit(corpus, form))

    # 1. Single copies (one chunk): 1, 4, 4096, 65,535 and 65,536 bytes (length field 0).
    for n in (1, 4, 4096, 65535, 65536):
        for arch in (1, 2, 3, 4):
            c, pairs = copy_case(
                f"single-{n}-a{arch}", f"one {n}-byte copy, arch {arch} barrier, raw ring", n, arch
            )
            assert len(pairs) == 1
            c.queue(pairs, 32)
            add(c, "raw")

    # 2. Chunked copies: barrier on the last chunk only.
    for n in (65537, 1 * MIB, 3 * MIB + 12345, 4 * MIB):
        for arch in (1, 2, 3, 4):
            c, pairs = copy_case(
                f"chunked-{n}-a{arch}",
                f"one {n}-byte copy in {-(-n // MAX_CHUNK)} chunks, arch {arch} barrier on the last, raw ring",
                n,
                arch,
            )
            c.queue(pairs, raw_size(len(pairs)))
            add(c, "raw")

    # 3. INT_EN on S2M descriptors.
    for n, arch, mode in (
        (1, 1, "last"),
        (3 * MIB + 12345, 2, "last"),
        (3 * MIB + 12345, 4, "last"),
        (65536, 1, "all"),
        (1 * MIB + 1, 3, "all"),
    ):
        c, pairs = copy_case(
            f"int-{mode}-{n}-a{arch}", f"{n}-byte copy, INT_EN on {mode} S2M, arch {arch}", n, arch, rx_int=mode
        )
        c.queue(pairs, raw_size(len(pairs)))
        add(c, "raw")

    # 4. The page-list path: DMB on the last chunk on every arch.
    for n in (200_000, 4096):
        for arch in (1, 2, 3, 4):
            c, pairs = copy_case(
                f"pagelist-{n}-a{arch}", f"{n}-byte copy, page-list path (DMB on the last chunk), arch {arch}",
                n, arch, barrier="page-list",
            )
            c.queue(pairs, raw_size(len(pairs)))
            add(c, "raw")

    # 5. Addresses: odd alignment, and copies that cross 4 GiB so W3 changes between chunks.
    c, pairs = copy_case("unaligned-777-a3", "777 bytes from an odd source to an odd destination", 777, 3,
                         src=SRC + 1, dst=DST + 3, label="u777")
    c.queue(pairs, 32)
    add(c, "raw")
    c, pairs = copy_case("unaligned-200001-a1", "200,001 bytes, odd addresses, 4 chunks", 200_001, 1,
                         src=SRC + 5, dst=DST + 0x11, label="u200001")
    c.queue(pairs, 32)
    add(c, "raw")
    c, pairs = copy_case(
        "above-4g-1m-a3",
        "1 MiB from 0x1_FFFC_0000 to 0xFFFE_0000: source and destination both cross 4 GiB",
        1 * MIB, 3, src=0x1_FFFC_0000, dst=0xFFFE_0000, label="hi1m",
    )
    assert {p.src >> 32 for p in pairs} == {1, 2} and {p.dst >> 32 for p in pairs} == {0, 1}
    c.queue(pairs, 32)
    add(c, "raw")

    # 6. Raw rings at phases 0..3 with a tail shorter than the file: what lies past the tail
    #    must not run. Each ring holds copies of mixed sizes (some of several chunks).
    for phase, size, count, tail in ((0, 32, 12, 7), (1, 32, 20, 13), (2, 48, 40, 25), (3, 64, 33, 32)):
        c = Case(f"raw-phase{phase}-tail{tail}", f"raw ring, phase {phase}, {count} pairs in the file, tail {tail}")
        pattern = [4096, 1, 70000, 65536, 300, 131072 + 5, 12, 4097]
        # Copies back to back until the file holds count descriptor pairs; where the next copy
        # would not fit, one-chunk copies of 4 KiB fill up.
        pairs_sizes, npairs = [], 0
        while npairs < count:
            n = pattern[len(pairs_sizes) % len(pattern)]
            if npairs + -(-n // MAX_CHUNK) > count:
                n = 4096
            pairs_sizes.append(n)
            npairs += -(-n // MAX_CHUNK)
        total = sum(pairs_sizes)
        c.region(SRC, DST, total, f"phase{phase}")
        pairs, off = [], 0
        for n in pairs_sizes:
            pairs += plan_copy(SRC + off, DST + off, n, 3)
            off += n
        assert len(pairs) == count, (len(pairs), count)
        skipped = pairs[tail:]
        lo, hi = skipped[0].dst, skipped[-1].dst + skipped[-1].length
        c.extra_dumps.append((lo, hi - lo))  # only descriptors past the tail write here
        c.queue(pairs, size, phase=phase, tail=tail)
        add(c, "raw")

    # A tail that cuts one copy between its chunks (the barrier chunk is past the tail).
    c, pairs = copy_case("raw-tail-mid-copy", "a 5-chunk copy with tail 2: chunks 3..5 stay unwritten",
                         5 * MAX_CHUNK - 100, 2, label="mid")
    c.extra_dumps.append((pairs[2].dst, sum(p.length for p in pairs[2:])))
    c.queue(pairs, 32, phase=1, tail=2)
    add(c, "raw")

    # A ring whose file fills every slot (32 descriptors in a 32-slot ring), no tail given.
    c = Case("raw-full-lap-a2", "32 copies filling a 32-slot ring", 2)
    pairs, _ = many_copies(c, 32, "full32", "full32-sizes", 4096, 2)
    c.queue(pairs, 32)
    add(c, "raw")

    # 7. Two queues as raw rings in one run.
    c = Case("raw-two-queues", "queue 0: ring 32, phase 2, tail 10 of 10; queue 1: ring 64, phase 0, tail 30 of 40")
    q0, _ = many_copies(c, 10, "rq0", "rq0-sizes", 8192, 3, src=SRC, dst=DST)
    q1, _ = many_copies(c, 40, "rq1", "rq1-sizes", 8192, 3, src=SRC + 64 * MIB, dst=DST + 64 * MIB)
    assert len(q0) == 10 and len(q1) == 40
    c.extra_dumps.append((q1[30].dst, q1[-1].dst + q1[-1].length - q1[30].dst))
    c.queue(q0, 32, phase=2, tail=10)
    c.queue(q1, 64, phase=0, tail=30)
    add(c, "raw")
    c = Case("raw-two-queues-defaults", "two raw queues, rings 32 and 48, no tail or phase flags", 1)
    q0, _ = many_copies(c, 20, "rd0", "rd0-sizes", 4096, 1, src=SRC, dst=DST)
    q1 = plan_copy(SRC + 64 * MIB, DST + 64 * MIB, 10 * MAX_CHUNK + 7, 1)
    c.region(SRC + 64 * MIB, DST + 64 * MIB, 10 * MAX_CHUNK + 7, "rd1")
    c.queue(q0, 32)
    c.queue(q1, 48)
    add(c, "raw")

    # 8. Ring dumps (version 2): programs longer than one lap, ring ids advancing per lap.
    c = Case("dump-wrap-200-r32-a3", "200 one-chunk copies on a 32-slot ring: 6.25 laps, ring ids 1,2,3,0,1,2,3", 3)
    pairs, _ = many_copies(c, 200, "wrap200", "wrap200-sizes", 4096, 3)
    assert len(pairs) == 200 and len(set(ring_ids(200, 32, 1))) == 4
    c.queue(pairs, 32)
    add(c, "dump")
    c = Case("dump-wrap-250-r48-p0-a1", "250 one-chunk copies on a 48-slot ring starting at ring id 0: 5.2 laps", 1)
    pairs, _ = many_copies(c, 250, "wrap250", "wrap250-sizes", 8192, 1)
    c.queue(pairs, 48, phase=0)
    add(c, "dump")
    c = Case("dump-wrap-170-r32-p3-pagelist-a2", "170 page-list copies (DMB) on a 32-slot ring from ring id 3", 2)
    pairs, _ = many_copies(c, 170, "wrap170", "wrap170-sizes", 4096, 2, barrier="page-list")
    c.queue(pairs, 32, phase=3)
    add(c, "dump")
    c, pairs = copy_case("dump-4m-r32-a4", "a 4 MiB copy (64 chunks) on a 32-slot ring: two laps, ring ids 1, 2",
                         4 * MIB, 4)
    c.queue(pairs, 32)
    add(c, "dump")
    c, pairs = copy_case("dump-3m12345-r32-p3-a2", "3 MiB + 12,345 (49 chunks) on a 32-slot ring from ring id 3: ids 3, 0",
                         3 * MIB + 12345, 2)
    c.queue(pairs, 32, phase=3)
    add(c, "dump")
    c, pairs = copy_case("dump-1m-one-lap-a1", "1 MiB copy as a ring dump of one lap", 1 * MIB, 1)
    c.queue(pairs, 32)
    add(c, "dump")
    c = Case("dump-two-queues", "ring dump, queue 7 (ring 32, from id 2, 4 MiB copy, 2 laps) listed before "
             "queue 0 (ring 32, 180 one-chunk copies, 5.6 laps)", 3)
    q7 = plan_copy(SRC + 64 * MIB, DST + 64 * MIB, 4 * MIB, 3)
    c.region(SRC + 64 * MIB, DST + 64 * MIB, 4 * MIB, str(4 * MIB))
    q0, _ = many_copies(c, 180, "dq0", "dq0-sizes", 4096, 3)
    c.queue(q7, 32, phase=2, qid=7)
    c.queue(q0, 32, qid=0)
    add(c, "dump")
    c = Case("dump-16-queues", "ring dump with 16 queues (ids in a shuffled table order), each 40 copies on a "
             "32-slot ring from ring id qid % 4", 2)
    for i in range(16):
        qid = (i * 5) % 16
        q, _ = many_copies(c, 40, f"q16-{qid}", f"q16-{qid}-sizes", 1024, 2,
                           src=SRC + qid * 4 * MIB, dst=DST + qid * 4 * MIB)
        c.queue(q, 32, phase=qid % 4, qid=qid)
    add(c, "dump")
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: driver_corpus.py OUTDIR")
    outdir = sys.argv[1]
    if os.path.exists(outdir) and os.listdir(outdir):
        sys.exit(f"driver_corpus.py: {outdir} exists and is not empty; remove it first")
    for sub in ("blobs", "cases", "dumps"):
        os.makedirs(os.path.join(outdir, sub))
    corpus = Corpus(outdir)
    cases = build(corpus)
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(outdir) for x in fs)
    print(f"driver_corpus: {len(cases)} cases, {total / MIB:.1f} MiB in {outdir}")


if __name__ == "__main__":
    main()
