//! The packet convention round-trips: emit(packet) parses back to the same packet, with the
//! right kinds, for every op and shape; and parsing any words never panics.

use cce_format::bits::UInt;
use cce_format::descriptor::FmaOperand;
use cce_format::packet::{self, Clamp, DataFlags, DescKind, FmaOperands, Gce, GceMode, Packet, PacketOp, Source};
use cce_format::{SdmaCceType, SdmaDtype};
use proptest::prelude::*;

fn sized_dtype() -> impl Strategy<Value = SdmaDtype> {
    prop::sample::select(SdmaDtype::ALL.iter().copied().filter(|d| d.bytes() > 0).collect::<Vec<_>>())
}

fn accum_dtype() -> impl Strategy<Value = SdmaDtype> {
    prop::sample::select(SdmaDtype::ALL[1..].to_vec())
}

fn op() -> impl Strategy<Value = PacketOp> {
    prop_oneof![
        Just(PacketOp::Copy),
        Just(PacketOp::Cce(SdmaCceType::Add)),
        Just(PacketOp::Cce(SdmaCceType::Fma)),
        Just(PacketOp::Cce(SdmaCceType::Min)),
        Just(PacketOp::Cce(SdmaCceType::Max)),
        Just(PacketOp::Cce(SdmaCceType::Gce)),
    ]
}

prop_compose! {
    fn any_packet()(op in op(), in_dt in sized_dtype(), accum_dt in accum_dtype(), out_dt in sized_dtype(),
                    elems in 1u32..=2048, n in 1usize..=32, m in 1usize..=4,
                    addrs in prop::collection::vec(any::<u64>(), 36), sels in prop::collection::vec((0u32..4, 0u32..4, 0u32..4, any::<u32>()), 32),
                    clamp in prop::option::of((0u32..8, any::<u32>())), seed in prop::option::of(any::<u32>()),
                    dmb: bool, write_barrier: bool, int_en: bool, strong_order: bool,
                    gce in prop::option::of((any::<bool>(), any::<u32>(), sized_dtype()))) -> Packet {
        let copy = op == PacketOp::Copy;
        let fma = op == PacketOp::Cce(SdmaCceType::Fma);
        let minmax = matches!(op, PacketOp::Cce(SdmaCceType::Min | SdmaCceType::Max));
        let (in_dt, accum_dt, out_dt) = if copy { (SdmaDtype::U8, SdmaDtype::U8, SdmaDtype::U8) } else { (in_dt, accum_dt, out_dt) };
        let gradient_packet = op == PacketOp::Cce(SdmaCceType::Gce);
        // A gradient packet always has its gradient descriptor (either mode, one destination,
        // no seed); a reduce op may be the EXT + GCE combo (compress only); a copy never.
        let gce = match (gradient_packet, gce) {
            (true, g) => {
                let (compress, header, _) = g.unwrap_or((true, 0, in_dt));
                let mode = if compress { GceMode::Compress } else { GceMode::Decompress };
                Some(Gce { mode, header, mid_dt: in_dt })
            }
            (false, Some((_, header, mid_dt))) if !copy => Some(Gce { mode: GceMode::Compress, header, mid_dt }),
            _ => None,
        };
        let n = if copy { 1 } else { n };
        let m = if copy || gradient_packet { 1 } else { m };
        let elems = if copy { elems * 32 } else { elems };
        let sources = (0..n).map(|i| Source {
            addr: addrs[i],
            fma: fma.then(|| FmaOperands { a: FmaOperand::from_bits(sels[i].0), b: FmaOperand::from_bits(sels[i].1), c: FmaOperand::from_bits(sels[i].2), scale_bits: sels[i].3 }),
            meta_aux: sels[i].3 & packet::aux_mask(op),
            int_en: sels[i].3 & (1 << 9) != 0,
        }).collect();
        Packet {
            op, in_dt, accum_dt, out_dt, elems, sources,
            dests: addrs[32..32 + m].to_vec(),
            clamp: clamp.filter(|_| minmax).map(|(d, bits)| Clamp { const_dt: UInt::new("c", d as u64).unwrap(), bits }),
            seed: seed.filter(|_| !copy && !gradient_packet),
            flags: DataFlags { dmb, write_barrier, int_en, strong_order },
            gce,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn emit_then_parse_is_identity(p in any_packet()) {
        let (mut tx, mut rx) = (Vec::new(), Vec::new());
        p.emit(&mut tx, &mut rx);
        prop_assert_eq!(tx.len(), p.tx_count());
        prop_assert_eq!(rx.len(), p.dests.len());
        let parsed = packet::parse_packet(&tx, &rx).map_err(|e| TestCaseError::fail(format!("{e}: {p:?}")))?;
        prop_assert_eq!(&parsed.packet, &p);
        prop_assert_eq!(parsed.tx_kinds.len(), tx.len());
        prop_assert_eq!(parsed.rx_used, rx.len());
        let data = parsed.tx_kinds.iter().filter(|k| **k == DescKind::M2sData).count();
        prop_assert_eq!(data, p.sources.len());
        // Each descriptor's own kinds include the one the packet gave it.
        for (w, k) in tx.iter().zip(&parsed.tx_kinds) {
            prop_assert!(packet::tx_kinds(*w).contains(k));
        }
    }

    /// Two packets back to back parse one after the other.
    #[test]
    fn packets_parse_in_sequence(a in any_packet(), b in any_packet()) {
        let (mut tx, mut rx) = (Vec::new(), Vec::new());
        a.emit(&mut tx, &mut rx);
        b.emit(&mut tx, &mut rx);
        let pa = packet::parse_packet(&tx, &rx).unwrap();
        let pb = packet::parse_packet(&tx[pa.tx_kinds.len()..], &rx[pa.rx_used..]).unwrap();
        prop_assert_eq!(pa.packet, a);
        prop_assert_eq!(pb.packet, b);
    }

    /// Any words: parse never panics, and a packet it accepts re-emits to the same words.
    #[test]
    fn parse_any_words_never_panics(tx in prop::collection::vec(prop::array::uniform4(any::<u32>()), 0..40),
                                    rx in prop::collection::vec(prop::array::uniform4(any::<u32>()), 0..6)) {
        if let Ok(p) = packet::parse_packet(&tx, &rx) {
            let (mut t2, mut r2) = (Vec::new(), Vec::new());
            p.packet.emit(&mut t2, &mut r2);
            prop_assert_eq!(t2.len(), p.tx_kinds.len());
        }
    }

    /// A corrupted word of an emitted packet is either refused or parses to a packet that
    /// re-emits to exactly the corrupted words (no bit is silently ignored).
    #[test]
    fn corruption_is_never_ignored(p in any_packet(), pick: usize, bit in (0u32..128).prop_filter("ring-id bits are the engine's to check", |b| !(24..26).contains(b))) {
        let (mut tx, mut rx) = (Vec::new(), Vec::new());
        p.emit(&mut tx, &mut rx);
        let total = tx.len() + rx.len();
        let at = pick % total;
        let w = (bit / 32) as usize;
        if at < tx.len() { tx[at][w] ^= 1 << (bit % 32); } else { rx[at - tx.len()][w] ^= 1 << (bit % 32); }
        if let Ok(q) = packet::parse_packet(&tx, &rx) {
            let (mut t2, mut r2) = (Vec::new(), Vec::new());
            q.packet.emit(&mut t2, &mut r2);
            prop_assert_eq!(&t2[..], &tx[..q.tx_kinds.len()]);
            prop_assert_eq!(&r2[..], &rx[..q.rx_used]);
        }
    }
}

#[test]
fn faults_are_named() {
    let p = Packet::copy(0x1000, 0x2000, 64);
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    p.emit(&mut tx, &mut rx);
    // No rx descriptor.
    assert!(matches!(packet::parse_packet(&tx, &[]), Err(packet::PacketError::NoRx(0))));
    // No LAST before the ring ends.
    let mut t = tx.clone();
    t[0][0] &= !(1 << 27);
    assert!(matches!(packet::parse_packet(&t, &rx), Err(packet::PacketError::NoLast(1))));
    // Lengths that disagree.
    let mut r = rx.clone();
    r[0][0] = (r[0][0] & !0xFFFF) | 63;
    assert!(matches!(packet::parse_packet(&tx, &r), Err(packet::PacketError::Length { .. })));
    // An unknown op.
    let mut t = tx.clone();
    t[0][1] = 0x0200_0005;
    assert!(matches!(packet::parse_packet(&t, &rx), Err(packet::PacketError::UnknownOp { .. })));
}

#[test]
fn ring_phase_advances_on_wrap() {
    assert_eq!(packet::phase(0, 32, 1), 1);
    assert_eq!(packet::phase(31, 32, 1), 1);
    assert_eq!(packet::phase(32, 32, 1), 2);
    assert_eq!(packet::phase(96, 32, 1), 0);
    let w = packet::with_phase([0x0C00_0040, 0, 0, 0], 3);
    assert_eq!(w[0], 0x0F00_0040);
}

mod ringfile {
    use cce_format::ringfile::{self, QueueRings, RingFile, RingFileError};
    use proptest::prelude::*;

    fn sample(tx: &[u8], rx: &[u8]) -> Vec<u8> {
        RingFile {
            arch: 3,
            queues: vec![QueueRings {
                queue: 2,
                ring_size: 64,
                initial_phase: 1,
                tx_doorbell: (tx.len() / 16) as u32,
                rx_doorbell: (rx.len() / 16) as u32,
                tx,
                rx,
            }],
        }
        .to_bytes()
    }

    #[test]
    fn round_trip_and_every_refusal() {
        let tx = [7u8; 48];
        let rx = [9u8; 16];
        let bytes = sample(&tx, &rx);
        let f = RingFile::parse(&bytes).unwrap();
        assert_eq!((f.arch, f.queues.len(), f.queues[0].tx, f.queues[0].rx), (3, 1, &tx[..], &rx[..]));
        assert_eq!(f.to_bytes(), bytes);
        assert_eq!(RingFile::parse(b"ELF\x7f....................................."), Err(RingFileError::Magic));
        assert!(matches!(RingFile::parse(&bytes[..bytes.len() - 1]), Err(RingFileError::Truncated { .. })));
        assert!(matches!(RingFile::parse(&bytes[..5]), Err(RingFileError::Truncated { .. })));
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(RingFile::parse(&longer), Err(RingFileError::Trailing(1)));
        let mut v3 = bytes.clone();
        v3[8] = 3;
        assert_eq!(RingFile::parse(&v3), Err(RingFileError::Version(3)));
        assert_eq!(ringfile::upgrade(&v3), Err(RingFileError::Version(3)));
        // Version 1 is read only through `upgrade`, which clears FIRST / LAST on the rx side.
        let mut v1 = sample(&tx, &[0x0du8, 0x10, 0, 0x0d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        v1[8] = 1;
        let body = v1.len() - 8;
        let sum = ringfile::fnv1a64(&v1[..body]);
        v1[body..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(RingFile::parse(&v1), Err(RingFileError::Version(1)));
        let up = ringfile::upgrade(&v1).unwrap();
        let f1 = RingFile::parse(&up).unwrap();
        assert_eq!(f1.queues[0].rx[..4], [0x0d, 0x10, 0, 0x01], "bits 26 and 27 cleared, the rest kept");
        assert_eq!(f1.queues[0].tx, &tx[..]);
        assert!(matches!(ringfile::upgrade(&bytes).unwrap(), std::borrow::Cow::Borrowed(_)));
        let mut corrupt = bytes.clone();
        corrupt[40 + 32] ^= 1;
        assert_eq!(RingFile::parse(&corrupt), Err(RingFileError::Checksum));
        for bad in [16u32, 40, 0] {
            let mut b = bytes.clone();
            b[36..40].copy_from_slice(&bad.to_le_bytes());
            assert!(matches!(RingFile::parse(&b), Err(RingFileError::RingSize { .. })), "{bad}");
        }
        // A huge descriptor count is a truncation, not an allocation.
        let mut huge = bytes.clone();
        huge[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(RingFile::parse(&huge), Err(RingFileError::Truncated { .. })));
        assert_eq!(ringfile::ring_size_for(1), 32);
        assert_eq!(ringfile::ring_size_for(33), 48);
    }

    proptest! {
        #[test]
        fn parse_any_bytes_never_panics(b in prop::collection::vec(any::<u8>(), 0..200), keep in 0usize..64) {
            let _ = RingFile::parse(&b);
            // And with a valid header prefix spliced in, too.
            let mut s = sample(&[1u8; 32], &[2u8; 16]);
            s.truncate(keep.min(s.len()));
            s.extend_from_slice(&b);
            let _ = RingFile::parse(&s);
        }
    }
}

/// A packet cut anywhere before its end reads as "the ring ends before the packet" (NoLast /
/// NoRx), never as a malformed packet: the engine waits for more descriptors then.
#[test]
fn a_cut_off_packet_is_never_malformed() {
    let mut p = Packet::copy(0x1000, 0x9000, 64);
    p.op = PacketOp::Cce(SdmaCceType::Add);
    p.in_dt = SdmaDtype::Bf16;
    p.accum_dt = SdmaDtype::Fp32;
    p.out_dt = SdmaDtype::Bf16;
    p.elems = 32;
    p.sources.push(Source { addr: 0x2000, fma: None, meta_aux: 0, int_en: false });
    p.dests = vec![0x9000, 0xA000, 0xB000];
    p.seed = Some(3);
    let (mut tx, mut rx) = (Vec::new(), Vec::new());
    p.emit(&mut tx, &mut rx);
    for t in 0..tx.len() {
        for r in 0..=rx.len() {
            let e = packet::parse_packet(&tx[..t], &rx[..r]).unwrap_err();
            assert!(matches!(e, packet::PacketError::NoLast(_) | packet::PacketError::NoRx(_)), "tx {t} rx {r}: {e}");
        }
    }
    for r in 0..rx.len() {
        let e = packet::parse_packet(&tx, &rx[..r]).unwrap_err();
        assert!(matches!(e, packet::PacketError::NoRx(_)), "rx {r}: {e}");
    }
    assert_eq!(packet::parse_packet(&tx, &rx).unwrap().packet, p);
}

/// Fuzz finding (ring_file): a valid dump without the checksum flag parses, and writing it back
/// (which adds the checksum) gives a file that parses to the same queues.
#[test]
fn a_dump_without_checksum_round_trips_structurally() {
    use cce_format::ringfile::RingFile;
    let bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/ring_file/no-checksum.ring")).unwrap();
    assert_eq!(&bytes[12..16], &[0, 0, 0, 0], "flags: no checksum");
    let f = RingFile::parse(&bytes).unwrap();
    let again = f.to_bytes();
    assert_ne!(again, bytes);
    assert_eq!(RingFile::parse(&again).unwrap(), f);
    // Its version-1 form (the file as first found) reads through `upgrade` as the same file.
    let mut v1 = bytes.clone();
    v1[8] = 1;
    assert_eq!(RingFile::parse(&cce_format::ringfile::upgrade(&v1).unwrap()).unwrap().queues, f.queues);
}

/// Words that fill the packet bound without a LAST data descriptor read as a packet that
/// exceeds it; fewer read as one cut off by the end of the words.
#[test]
fn a_packet_without_last_within_the_bound_is_too_long() {
    let m2s = |first: bool| {
        let mut w = [0u32; 4];
        w[0] = 32 | if first { 1 << 26 } else { 0 };
        w
    };
    let rx = [[0u32; 4]];
    let mut tx: Vec<[u32; 4]> = (0..packet::MAX_PACKET_DESCRIPTORS).map(|i| m2s(i == 0)).collect();
    assert!(matches!(packet::parse_packet(&tx, &rx), Err(packet::PacketError::TooLong(128))));
    tx.pop();
    assert!(matches!(packet::parse_packet(&tx, &rx), Err(packet::PacketError::NoLast(127))));
}

/// `check_arch`, entry by entry: every arch's descriptors-per-packet limits (128 / 128 up to
/// arch 2, 65 tx / 60 rx on 3 and 4; companion chapter "The 16-Byte UDMA Descriptor") at the
/// limit and one past it, and replication (an EXT combo) only from arch 3 (study §5.1). Arch 0
/// (a dump that does not say) is arch 3.
#[test]
fn check_arch_holds_each_arch_to_its_limits() {
    use packet::{DescKind, PacketError, Parsed, check_arch};
    let parsed = |tx: usize, rx: usize, combo: bool| {
        let mut kinds = vec![DescKind::M2sData; tx];
        if combo {
            kinds[tx - 1] = DescKind::Replication;
        }
        Parsed { packet: Packet::copy(0x1000, 0x2000, 64), tx_kinds: kinds, rx_used: rx }
    };
    for (arch, max_tx, max_rx, combos) in
        [(0, 65, 60, true), (1, 128, 128, false), (2, 128, 128, false), (3, 65, 60, true), (4, 65, 60, true)]
    {
        let shown = if arch == 0 { 3 } else { arch };
        assert_eq!(check_arch(&parsed(max_tx, max_rx, false), arch), Ok(()), "arch {arch}");
        let over = |tx, rx| Err(PacketError::ArchDescriptors { arch: shown, tx, rx, max_tx, max_rx });
        assert_eq!(check_arch(&parsed(max_tx + 1, 1, false), arch), over(max_tx + 1, 1), "arch {arch}");
        assert_eq!(check_arch(&parsed(1, max_rx + 1, false), arch), over(1, max_rx + 1), "arch {arch}");
        let combo = check_arch(&parsed(3, 2, true), arch);
        assert_eq!(combo, if combos { Ok(()) } else { Err(PacketError::ArchConcatenation(arch)) }, "arch {arch}");
    }
}
