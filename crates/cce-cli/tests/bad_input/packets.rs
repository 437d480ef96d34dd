//! Matrix rows for crafted ring dumps: packet-convention and engine-fault messages (see
//! `bad_input.rs`). Each row builds a valid ring with `cce build`, edits a few descriptor words
//! of a copy (through `cce_format::ringfile`: counts, doorbells and checksum follow) and runs it: `cce run` faults the packet
//! before any write and exits 1 with "1 queue(s) faulted: queue 0: packet at … : <reason>".
//! It also prints its per-queue report on stdout, as it does for every run (the report is the
//! point of `cce run`; see `run_reports_a_faulted_queue` in ring_cli.rs), so these exit-1 rows
//! pass only where the matrix does not demand an empty stdout of exit-1 rows.

use cce_format::ringfile::{QueueRings, RingFile, ring_size_for};

use crate::common::{cce, tmp};
use crate::{Files, Row, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    // cce-format: errors that the CLI never surfaces on stderr.
    (
        "Unsupported data type!: ",
        "kbin_dtype_to_sdma_dtype only sees cce_info dtypes the CLI fills itself (scale: kbin fp32; constant: a \
         remap-table entry after the supported-dtype check); `cce decode cce-info` prints the refusal inside its \
         JSON on stdout",
    ),
    (
        "{0} is not an SDMA dtype",
        "SdmaDtype::from_value has no caller outside cce-format: every CLI dtype goes through values::parse_dtype, \
         which refuses values above 15 with its own message, then from_nibble",
    ),
    (
        "data descriptor length {0} out of range",
        "LenCtrl::with_byte_len is only called by Packet::emit, which discards the error (unwrap_or_default); \
         `cce encode m2s-data` sets the raw 16-bit length field",
    ),
    (
        "{what} needs {expected} bytes",
        "every caller passes the exact size: bytes_to_words gets 16-byte slices, CceInfo::from_bytes runs after \
         parse_hex_bytes has demanded 280 hex digits, codec::decode gets layout.words words from parse_words",
    ),
    (
        "not a {layout}: word ",
        "NotThisLayout only comes from the layouts' parse; `cce decode` never refuses words (it prints the \
         problem inside its JSON on stdout) and parse_packet maps every parse error to its own message",
    ),
    ("lacks the fixed bits", "a NotThisLayout problem: see \"not a {layout}: word \""),
    ("has bits no field explains", "a NotThisLayout problem: see \"not a {layout}: word \""),
    ("has a partial sub-descriptor pattern", "a NotThisLayout problem: see \"not a {layout}: word \""),
    ("has an out-dt without use-const", "a NotThisLayout problem: see \"not a {layout}: word \""),
    ("has the 0x4000000 bit disagreeing with the mode", "a NotThisLayout problem: see \"not a {layout}: word \""),
    ("has a const-dt without the constant sub-descriptor", "a NotThisLayout problem: see \"not a {layout}: word \""),
    // cce-format packet parser: checks an earlier check always pre-empts.
    (
        "data descriptor after the LAST one",
        "parse_packet ends the packet at the first data descriptor with LAST (plus the replication descriptors \
         after it, which are compute descriptors), so no data descriptor follows a LAST one inside a packet",
    ),
    (
        "bad seed-init",
        "a descriptor is only taken as a seed-init when tx_kinds found SeedInitDescriptor::parse succeeds \
         (otherwise \"does not fit its place\"), so the second parse cannot fail",
    ),
    (
        "bad min-max descriptor",
        "a descriptor is only taken as MIN/MAX when tx_kinds found MinMaxDescriptor::parse succeeds \
         (otherwise \"does not fit its place\"), so the second parse cannot fail",
    ),
    (
        "bad FMA descriptor",
        "a descriptor is only taken as FMA when tx_kinds found FmaDescriptor::parse succeeds (otherwise \
         \"does not fit its place\"), so the second parse cannot fail",
    ),
    (
        "bad replication descriptor",
        "a descriptor is only taken as replication when tx_kinds found ReplicationDescriptor::parse succeeds \
         (otherwise \"does not fit its place\"), so the second parse cannot fail",
    ),
    (
        "a copy packet has exactly one data descriptor",
        "a copy's meta-control reads as last, so a first copy data descriptor without LAST fails \"meta-control \
         last bit disagrees with LAST\" and one with LAST ends the packet",
    ),
    // cce-engine: API errors run_programs cannot cause, and faults parse_packet pre-empts.
    (
        "queue {0}: no such queue",
        "RingFile::parse refuses queue ids above 15 and duplicates before run_programs adds the queues",
    ),
    (
        "queue {queue}: ring size {size} is not a multiple of 16 of at least 32, or phase above 3",
        "RingFile::parse refuses such ring sizes and phases first (its own \"ring size\" / \"phase above 3\" \
         messages)",
    ),
    (
        "queue {queue}: doorbell of {count} descriptors overruns",
        "feed_all rings the doorbell only for the slots it found free (free = ring size − pending)",
    ),
    (
        "not supported by the engine model: ",
        "its only two reasons are unreachable: see \"FMA source without operands\" and \"EXT as a packet op\"",
    ),
    (
        "FMA source without operands",
        "parse_packet refuses an FMA source without its FMA descriptor (\"FMA source without its FMA \
         descriptor\") before exec::resolve",
    ),
    (
        "EXT as a packet op",
        "op_of names no op for an EXT sub-op, so parse_packet reports \"unknown op in meta_ctrl\" first",
    ),
];

/// An edit of a dump's tx and rx descriptors (4 words each).
type Edit = dyn Fn(&mut Vec<[u32; 4]>, &mut Vec<[u32; 4]>);

/// The dtype flags of an fp32 reduce.
const FP32: &str = "--in fp32 --accum fp32 --out-dtype fp32";

/// Runs `cce build --arch 3 <args> -o <tmp(name)>` (`args` split at whitespace) and returns the
/// dump's bytes.
pub(crate) fn built(name: &str, args: &str) -> Vec<u8> {
    let path = tmp(name);
    let mut argv = vec!["build", "--arch", "3"];
    argv.extend(args.split_whitespace());
    argv.extend_from_slice(&["-o", path.to_str().unwrap()]);
    let o = cce(&argv);
    assert_eq!(o.status.code(), Some(0), "{argv:?}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&path).unwrap()
}

/// Writes a copy of the one-queue `dump` with `edit` applied to its tx and rx descriptors,
/// through the project's ring-file codec: counts and doorbells follow the edited lists, the
/// ring grows to hold them (every descriptor stays on the first lap, so its ring-id phase stays
/// right) and the checksum is recomputed. Returns its path.
pub(crate) fn crafted(name: &str, dump: &[u8], edit: impl FnOnce(&mut Vec<[u32; 4]>, &mut Vec<[u32; 4]>)) -> String {
    let file = RingFile::parse(dump).expect("a valid dump");
    let q = &file.queues[0];
    let mut tx: Vec<[u32; 4]> = (0..q.tx_len()).filter_map(|i| q.tx_words(i)).collect();
    let mut rx: Vec<[u32; 4]> = (0..q.rx_len()).filter_map(|i| q.rx_words(i)).collect();
    edit(&mut tx, &mut rx);
    let bytes = |d: &[[u32; 4]]| d.iter().flatten().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let (txb, rxb) = (bytes(&tx), bytes(&rx));
    let need = ring_size_for(tx.len().max(rx.len()) as u64) as u32;
    let edited = QueueRings {
        ring_size: q.ring_size.max(need),
        tx_doorbell: tx.len() as u32,
        rx_doorbell: rx.len() as u32,
        tx: &txb,
        rx: &rxb,
        ..q.clone()
    };
    let p = tmp(name);
    std::fs::write(&p, RingFile { arch: file.arch, queues: vec![edited] }.to_bytes()).unwrap();
    p.display().to_string()
}

/// `cce run <ring>` (no memory: every row faults before the bounds check unless it says so).
fn run(ring: &str) -> Vec<String> {
    sv(&["run", ring])
}

// len_ctrl (W0) bits of a data descriptor.
const FIRST: u32 = 1 << 26;
const LAST: u32 = 1 << 27;
const INT_EN: u32 = 1 << 28;
const CONCAT: u32 = 1 << 31;
const STRONG_ORDER: u32 = 1 << 29;
const DMB: u32 = 1 << 30;
/// W2 bit 30 of a compute descriptor: more descriptors of the combo follow.
const MORE: u32 = 1 << 30;
/// An FMA descriptor (source 0, selectors input, scale, stored, scale 1.0).
const FMA_DESC: [u32; 4] = [0x0080_0000, 0x0210_0001, 0x0900_0000, 0x3f80_0000];
/// A replication descriptor of a one-destination "combo": mode 1, count 1, no more-bit.
const REP_DESC_1: [u32; 4] = [0x0080_0000, 0x24a0_0001, 0, 0x024a_a000];

/// The dumps the rows edit, each built by `cce build` (or the shared fixture).
struct Dumps {
    /// tx [m2s], rx [s2m]: one fp32 ADD source (the shared fixture).
    add: Vec<u8>,
    /// tx [m2s, m2s], rx [s2m].
    add2: Vec<u8>,
    /// tx [fma, m2s], rx [s2m].
    fma: Vec<u8>,
    /// tx [seed-init, m2s], rx [s2m].
    sr: Vec<u8>,
    /// tx [min-max (bf16 constant 1.0), m2s, m2s], rx [s2m]; bf16 in and out, fp32 accumulate.
    min: Vec<u8>,
    /// Two packets of the EXT combo: tx [m2s, rep, rep] × 2, rx [s2m, s2m] × 2.
    combo: Vec<u8>,
    /// tx [m2s × 32], rx [s2m]: the most sources a packet may have.
    wide: Vec<u8>,
}

/// Builds the dumps of [`Dumps`].
fn dumps(f: &Files) -> Dumps {
    let add = std::fs::read(&f.ring).unwrap();
    let add2 = built("p-add2.ring", &format!("{FP32} --op add --elems 8 --src 0x1000 0x1100 --dst 0x2000"));
    let fma = built("p-fma.ring", &format!("{FP32} --op fma --elems 8 --src 0x1000 --dst 0x2000"));
    let sr =
        built("p-sr.ring", &format!("{FP32} --op add --elems 8 --src 0x1000 --dst 0x2000 --rounding sr --seed 42"));
    let min = built(
        "p-min.ring",
        "--op min --in bf16 --accum fp32 --out-dtype bf16 --const 1 --const-dtype bf16 --elems 16 \
         --src 0x1000 0x1100 --dst 0x2000",
    );
    let combo = built("p-combo.ring", &format!("{FP32} --op add --elems 16 --cap 32 --src 0x1000 --dst 0x2000 0x3000"));
    let srcs: Vec<String> = (0..32).map(|i| format!("0x{:x}", 0x1000 + 0x100 * i)).collect();
    let wide = built("p-wide.ring", &format!("{FP32} --op add --elems 8 --dst 0x9000 --src {}", srcs.join(" ")));
    Dumps { add, add2, fma, sr, min, combo, wide }
}

/// A row: `cce run` on a copy of `dump` with `edit` applied faults with `want` (exit 1).
fn push_fault(rows: &mut Vec<Row>, name: &str, dump: &[u8], want: &'static str, edit: &Edit) {
    rows.push((run(&crafted(name, dump, edit)), want, 1));
}

pub(crate) fn rows(f: &Files) -> Vec<Row> {
    let d = dumps(f);
    let mut rows = memory_rows(f);
    extent_rows(&d, &mut rows);
    tx_rows(&d, &mut rows);
    compute_rows(&d, &mut rows);
    clamp_replication_rows(&d, &mut rows);
    rx_rows(&d, &mut rows);
    rows
}

/// The rows of memory (--load ranges), the bounds check and packet sizing.
fn memory_rows(f: &Files) -> Vec<Row> {
    let a = f.a.display().to_string();
    let ring = f.ring.display().to_string();
    vec![
        // Memory: --load ranges that wrap 64 bits, or sit on the rings' placement (E10).
        (sv(&["run", &ring, "--load", &format!("0xFFFFFFFFFFFFFFF0={a}")]), "overflows 64 bits", 2),
        (
            sv(&["run", &ring, "--load", &format!("0xFFFF000000000000={a}")]),
            "queue 0: ring not in memory: region 0xffff000000000000",
            2,
        ),
        // A valid packet whose source is not mapped: the bounds check faults it.
        (
            run(&ring),
            "1 queue(s) faulted: queue 0: packet at tx descriptor 0 / rx descriptor 0: address range 0x1000+32 is outside every memory region",
            1,
        ),
        // Packet sizing: elements × dtype size overflows 64 bits.
        (sv(&["packet-size", "--dtype", "u64", "--elems", "0xFFFFFFFFFFFFFFFF", "--prio", "0"]), "size overflow", 2),
    ]
}

/// The rows of the packet's extent, its op, scale dtype and sources (P9, E7, P3, P1).
fn extent_rows(d: &Dumps, rows: &mut Vec<Row>) {
    let mut fault = |name: &str, dump: &[u8], want: &'static str, edit: &Edit| push_fault(rows, name, dump, want, edit);
    // Packet extent (P9, E7).
    // No LAST on the tx ring: the packet is cut off, and closing the queue faults it.
    fault(
        "p-nolast.ring",
        &d.add,
        "tx descriptor 1: the ring ends before the packet's LAST data descriptor",
        &|tx, _| tx[0][0] &= !LAST,
    );
    // 200 sources' data descriptors and no LAST: the engine's 128-descriptor window fills
    // without the packet ending.
    fault("p-long.ring", &d.add, "tx descriptor 128: packet exceeds 128 descriptors", &|tx, _| {
        tx[0][0] &= !LAST;
        let mut next = tx[0];
        next[0] &= !FIRST;
        tx.extend(std::iter::repeat_n(next, 199));
    });
    // No S2M descriptor at all.
    fault("p-norx.ring", &d.add, "rx descriptor 0: missing or incomplete S2M descriptors", &|_, rx| rx.clear());
    // A combo's final replication descriptor keeps the more-bit while the next packet follows.
    fault("p-chain.ring", &d.combo, "tx descriptor 3: replication chain broken", &|tx, _| tx[2][2] |= MORE);
    // The op (P3): sub-op 4 (EXT) is no packet op.
    fault("p-op.ring", &d.add, "tx descriptor 0: unknown op in meta_ctrl 0x020aa084", &|tx, _| tx[0][1] |= 4);
    // FMA scale dtype u32 instead of fp32.
    fault("p-scale.ring", &d.fma, "tx descriptor 1: dtype non-fp32 not valid as scale", &|tx, _| {
        tx[1][1] = (tx[1][1] & !0xF000) | 0x9000
    });
    // 33 sources (P1: at most 32).
    fault("p-33.ring", &d.wide, "packet has 33 sources (at most 32)", &|tx, _| tx.insert(1, tx[1]));
}

/// The rows of tx data descriptors, the per-arch limits and ring-id phases (P6, P10, P12).
fn tx_rows(d: &Dumps, rows: &mut Vec<Row>) {
    let mut fault = |name: &str, dump: &[u8], want: &'static str, edit: &Edit| push_fault(rows, name, dump, want, edit);
    // Tx data descriptors (P6, P10).
    // Strong-order (W0 bit 29) is an S2M flag (B10).
    fault("p-m2s.ring", &d.add, "tx descriptor 0: not a valid M2S data descriptor", &|tx, _| tx[0][0] |= STRONG_ORDER);
    fault("p-first.ring", &d.add, "tx descriptor 0: FIRST must be set on the first data descriptor only", &|tx, _| {
        tx[0][0] &= !FIRST
    });
    // CONCAT (bit 31): the Annapurna HAL's, not the public driver's; INT_EN (bit 28) on an M2S
    // data descriptor is the driver's (udma.h) and runs (tests/int_en.rs).
    fault("p-txconcat.ring", &d.add, "tx descriptor 0: CONCAT / META set on a tx data descriptor", &|tx, _| {
        tx[0][0] |= CONCAT
    });
    fault(
        "p-dmb.ring",
        &d.add2,
        "tx descriptor 0: DMB on a data descriptor that is not the packet's LAST",
        &|tx, _| tx[0][0] |= DMB,
    );
    // ADD meta-control last flag (bit 7) cleared on the LAST source.
    fault("p-mlast.ring", &d.add, "tx descriptor 0: meta-control last bit disagrees with LAST", &|tx, _| {
        tx[0][1] &= !0x80
    });
    // Source 1 accumulates in u32, source 0 in fp32.
    fault("p-accum.ring", &d.add2, "tx descriptor 1: sources disagree on in / accum dtype", &|tx, _| {
        tx[1][1] = (tx[1][1] & !0xF_0000) | 0x9_0000
    });
    // Rx length of 64 bytes for 8 fp32 elements.
    fault("p-len.ring", &d.add, "rx descriptor 0: length 64 bytes disagrees with 32", &|_, rx| {
        rx[0][0] = (rx[0][0] & !0xFFFF) | 64
    });
    // Per-arch limits (packet::check_arch): the same combo in a dump that says arch 2, where
    // the host refuses to build it.
    let arch2 = {
        let mut f = RingFile::parse(&d.combo).expect("a valid dump");
        f.arch = 2;
        f.to_bytes()
    };
    fault(
        "p-arch2.ring",
        &arch2,
        "CCE concatenation not supported: a combo packet on arch 2 (replication needs arch 3 or later)",
        &|_, _| {},
    );
    // The combo widened to 61 destinations (61 S2M descriptors: arch 3 allows 60 per packet).
    fault(
        "p-arch-rx.ring",
        &d.combo,
        "packet uses 62 tx / 61 rx descriptors: arch 3 allows at most 65 / 60",
        &|tx, rx| {
            let mut p = cce_format::packet::parse_packet(tx, rx).expect("the combo").packet;
            p.dests = (0..61).map(|j| 0x10_0000 + j * 0x1000).collect();
            tx.clear();
            rx.clear();
            p.emit(tx, rx);
            for d in tx.iter_mut().chain(rx.iter_mut()).filter(|d| d[0] & cce_format::packet::META_BIT == 0) {
                *d = cce_format::packet::with_phase(*d, 1);
            }
        },
    );
    // Ring-id 2 in a first-lap slot of phase 1 (P12).
    fault("p-phase.ring", &d.add, "tx descriptor 0: ring-id 2, expected phase 1 (corrupt ring index)", &|tx, _| {
        tx[0][0] += 1 << 24
    });
}

/// The rows of compute descriptors (P1, P7, P11).
fn compute_rows(d: &Dumps, rows: &mut Vec<Row>) {
    let mut fault = |name: &str, dump: &[u8], want: &'static str, edit: &Edit| push_fault(rows, name, dump, want, edit);
    // Compute descriptors (P1, P7).
    fault("p-nofma.ring", &d.fma, "tx descriptor 0: FMA source without its FMA descriptor", &|tx, _| {
        tx.remove(0);
    });
    fault("p-where.ring", &d.add, "tx descriptor 0: compute descriptor where the packet has none", &|tx, _| {
        tx.insert(0, FMA_DESC)
    });
    // An FMA descriptor with an unexplained W1 bit is no FMA descriptor.
    fault(
        "p-fit.ring",
        &d.fma,
        "tx descriptor 0: compute descriptor does not fit its place in the packet",
        &|tx, _| tx[0][1] |= 1 << 12,
    );
    // Seed-init W1 without the 0x6000000 seed-enable pattern.
    fault("p-seed.ring", &d.sr, "tx descriptor 0: seed-init without seed-enable", &|tx, _| tx[0][1] = 0);
    // MIN/MAX descriptor W1 without the constant sub-descriptor and its const-dt.
    fault(
        "p-mmconst.ring",
        &d.min,
        "tx descriptor 0: min-max descriptor without the constant sub-descriptor",
        &|tx, _| tx[0][1] = 0,
    );
    fault("p-fma2.ring", &d.fma, "tx descriptor 1: two FMA descriptors for one source", &|tx, _| tx.insert(0, tx[0]));
    // Meta-idx 5 on source 0's FMA descriptor: the re-emitted packet writes 0 (P11).
    fault(
        "p-conv.ring",
        &d.fma,
        "tx descriptor 0 word 0: bits 0x05000000 differ from the packet convention",
        &|tx, _| tx[0][0] |= 5 << 24,
    );
    // A one-destination packet with a replication descriptor of count 1: parsed, but the
    // convention emits none for one destination.
    fault("p-count.ring", &d.add, "tx descriptor 1: descriptor count differs from the packet convention", &|tx, _| {
        tx.push(REP_DESC_1)
    });
}

/// The rows of the MIN/MAX clamp (P1, H4, E9) and replication (P9).
fn clamp_replication_rows(d: &Dumps, rows: &mut Vec<Row>) {
    let mut fault = |name: &str, dump: &[u8], want: &'static str, edit: &Edit| push_fault(rows, name, dump, want, edit);
    // MIN/MAX clamp (P1, H4, E9).
    // Source 1's meta-control const-dt u16, source 0's bf16.
    fault("p-clampf.ring", &d.min, "tx descriptor 2: sources disagree on the clamp fields", &|tx, _| {
        tx[2][1] = (tx[2][1] & !0x70_0000) | 0x50_0000
    });
    fault(
        "p-useconst.ring",
        &d.min,
        "tx descriptor 0: use-const in meta-control without the constant descriptor",
        &|tx, _| {
            tx.remove(0);
        },
    );
    // The descriptor's const-dt u16 against the meta-control's bf16.
    fault(
        "p-constdt.ring",
        &d.min,
        "tx descriptor 0: constant dtype disagrees between descriptor and meta-control",
        &|tx, _| tx[0][1] = (tx[0][1] & !0x70_0000) | 0x50_0000,
    );
    // S2M out dtype fp16 (same size) against the clamped meta-control's bf16.
    fault(
        "p-mmout.ring",
        &d.min,
        "tx descriptor 1: MIN/MAX meta-control out dtype disagrees with the S2M",
        &|_, rx| rx[0][1] = 0x7000,
    );
    // Const-dt 1 (u64) everywhere, consistently: the engine has no u64 clamp constant.
    fault("p-clampdt.ring", &d.min, "dtype u64 cannot be the clamp constant dtype", &|tx, _| {
        for d in &mut tx[..3] {
            d[1] = (d[1] & !0x70_0000) | 0x10_0000;
        }
    });
    // FMA operand selector 3 (a-sel, W2 [25:24]).
    fault("p-sel.ring", &d.fma, "FMA operand selector 3 names no operand", &|tx, _| tx[0][2] |= 3 << 24);

    // Replication (P9).
    fault("p-repn.ring", &d.combo, "tx descriptor 2: replication descriptors disagree on the count", &|tx, _| {
        tx[2][1] += 1
    });
    fault("p-repd.ring", &d.combo, "tx descriptor 2: replication descriptors do not match their count", &|tx, _| {
        tx[1][1] += 1;
        tx[2][1] += 1;
    });
}

/// The rows of rx descriptors (P5, P8, P10).
fn rx_rows(d: &Dumps, rows: &mut Vec<Row>) {
    let mut fault = |name: &str, dump: &[u8], want: &'static str, edit: &Edit| push_fault(rows, name, dump, want, edit);
    // Rx descriptors (P5, P8, P10).
    // len_ctrl bit 16 is no field of the S2M layout.
    fault("p-s2m.ring", &d.add, "rx descriptor 0: not a valid S2M data descriptor", &|_, rx| rx[0][0] |= 1 << 16);
    // The public driver's S2M carries no FIRST / LAST (GAPS.md §12), nor DMB.
    for (name, bit) in [("p-rxdmb.ring", DMB), ("p-rxfirst.ring", FIRST), ("p-rxlast.ring", LAST)] {
        fault(
            name,
            &d.add,
            "rx descriptor 0: FIRST / LAST / CONCAT / META / DMB on an S2M descriptor",
            &move |_, rx| rx[0][0] |= bit,
        );
    }
    fault("p-rxint.ring", &d.combo, "rx descriptor 0: INT_EN on an S2M that is not the packet's last", &|_, rx| {
        rx[0][0] |= INT_EN
    });
    // The driver's write barrier (meta_ctrl bit 26) on the first of two sources.
    fault(
        "p-wbar.ring",
        &d.add2,
        "tx descriptor 0: write barrier (meta_ctrl bit 26) on a data descriptor that is not the packet's LAST",
        &|tx, _| tx[0][1] |= 1 << 26,
    );
    // A copy word with validate-crc (bit 14): the engine executes only the driver's two words.
    fault(
        "p-crc.ring",
        &d.add,
        "tx descriptor 0: copy meta_ctrl 0x01084003 sets CRC, byte-swap or block fields",
        &|tx, _| tx[0][1] = 0x0108_4003,
    );
    // The FMA descriptor's more-bit says "combo", but no replication descriptor follows the
    // packet's LAST (the next packet starts there instead).
    fault(
        "p-morepend.ring",
        &d.fma,
        "tx descriptor 2: more-bit set in the packet but no replication descriptor follows its LAST",
        &|tx, rx| {
            tx[0][2] |= MORE;
            let next = tx[1];
            tx.push(next);
            let _ = rx;
        },
    );
    fault("p-sow.ring", &d.combo, "rx descriptor 1: strong-order set on some destinations only", &|_, rx| {
        rx[1][0] |= STRONG_ORDER
    });
    fault("p-w1.ring", &d.add, "rx descriptor 0: unexpected bits in the S2M W1 slot", &|_, rx| rx[0][1] |= 1);
    // The copy meta-control word on the tx side, an fp32 out dtype on the rx side.
    fault("p-copy.ring", &d.add, "rx descriptor 0: a copy S2M carries no output dtype", &|tx, _| {
        tx[0][1] = 0x0108_0003
    });
    // The second destination's out dtype u32 (same size) against fp32.
    fault("p-outdt.ring", &d.combo, "rx descriptor 1: destinations disagree on the output dtype", &|_, rx| {
        rx[1][1] = 0x9000
    });
}
