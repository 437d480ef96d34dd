//! The host producer stack against the study: worked examples §9.1 and §9.2 descriptor for
//! descriptor, every dispatcher rule, every special path, chunking and ring phases.

use SdmaDtype::*;
use cce_format::descriptor::{FmaOperand, MAX_DATA_DESC_BYTES};
use cce_format::dtype::KbinDtype;
use cce_format::limits::PrioCaps;
use cce_format::meta_ctrl::MetaCtrl;
use cce_format::packet::{self, DescKind, PacketOp, RingGeometry};
use cce_format::ringfile::RingFile;
use cce_format::{FormatError, KbinOp, SdmaCceType, SdmaDtype};
use cce_host::{CopyRequest, HostError, MinMaxConstant, ReduceDtypes, ReduceRequest, Rings, Rounding, plan, plan_copy};

/// bf16 in and out, fp32 accumulate.
const BF16_VIA_FP32: ReduceDtypes = ReduceDtypes { in_dt: Bf16, accum_dt: Fp32, out_dt: Bf16 };

fn words(bytes: &[u8]) -> Vec<[u32; 4]> {
    bytes
        .chunks_exact(16)
        .map(|c| core::array::from_fn(|i| u32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap())))
        .collect()
}

fn rings(req: &ReduceRequest) -> Rings {
    plan(req).unwrap().to_rings(None).unwrap()
}

fn add(n: usize, elems: u64) -> ReduceRequest {
    let srcs = (0..n as u64).map(|i| 0x1000_0000 * (i + 1)).collect();
    ReduceRequest::new(KbinOp::Add.value(), srcs, vec![0xD000_0000], elems, BF16_VIA_FP32, 3)
}

#[test]
fn worked_example_9_1_three_source_bf16_add() {
    let r = rings(&add(3, 1024));
    let tx = words(&r.tx);
    let rx = words(&r.rx);
    // 3 tx M2S (one per source) + 1 rx S2M; add_meta_ctrl(in=bf16, accum=fp32), LAST (bit 7) on the third.
    // len_ctrl: FIRST 0x04000000 / LAST 0x08000000 | ring id 1 << 24 | 2048 bytes.
    assert_eq!(tx.len(), 3);
    assert_eq!(tx[0], [0x0500_0800, 0x020A_6000, 0x1000_0000, 0]);
    assert_eq!(tx[1], [0x0100_0800, 0x020A_6000, 0x2000_0000, 0]);
    assert_eq!(tx[2], [0x0900_0800, 0x020A_6080, 0x3000_0000, 0]);
    // rx: ring id 1 | 2048 bytes, no FIRST / LAST (the public driver's S2M, GAPS.md §12); out
    // dtype bf16 in W1[15:12] (MODEL).
    assert_eq!(rx, vec![[0x0100_0800, 0x6000, 0xD000_0000, 0]]);
    let p = packet::parse_packet(&tx, &rx).unwrap().packet;
    assert_eq!(
        (p.op, p.in_dt, p.accum_dt, p.out_dt, p.elems),
        (PacketOp::Cce(SdmaCceType::Add), Bf16, Fp32, Bf16, 1024)
    );
}

#[test]
fn worked_example_9_2_weighted_average_fma() {
    let req = ReduceRequest::new(KbinOp::Fma.value(), vec![0x1000, 0x9000], vec![0x20000], 16, BF16_VIA_FP32, 3)
        .with_fma_scales(&[0.5, 0.5])
        .unwrap();
    let tx = words(&rings(&req).tx);
    assert_eq!(tx.len(), 4);
    // Both FMA descriptors: W3 = 0x3F000000, selectors a=1 b=2 c=0 (W2 = 0x09000000), base 0x2100000.
    for (i, d) in [tx[0], tx[2]].into_iter().enumerate() {
        assert_eq!(d[0], 0x0080_0000 | (i as u32) << 24);
        assert_eq!(d[1], 0x0210_0001); // FMA op tag + sub-op 1 (SDMA_CCETYPE_FMA)
        assert_eq!(d[2], 0x0900_0000);
        assert_eq!(d[3], 0x3F00_0000);
    }
    // fma_meta_ctrl(sub=1, in=bf16, scale=fp32, accum=fp32): last (f4, bit 7) only on the second.
    assert_eq!(tx[1][1], 0x021A_A601);
    assert_eq!(tx[3][1], 0x021A_A681);
    let kinds = packet::parse_packet(&tx, &words(&rings(&req).rx)).unwrap().tx_kinds;
    assert_eq!(kinds, [DescKind::Fma, DescKind::M2sData, DescKind::Fma, DescKind::M2sData]);
}

#[test]
fn dispatcher_rules_carry_the_study_messages() {
    let base = add(2, 64);
    let msg = |r: &ReduceRequest| plan(r).unwrap_err().to_string();
    for (op, n) in [(KbinOp::Copy, 0), (KbinOp::Transpose, 5)] {
        assert_eq!(msg(&ReduceRequest { op: op.value(), ..base.clone() }), format!("Unsupported CCE Op! {n}"));
    }
    // FMA without cce_info (vring.c:0x3B8).
    let fma = ReduceRequest { op: KbinOp::Fma.value(), ..base.clone() };
    assert_eq!(plan(&fma).unwrap_err(), HostError::MissingCceInfo);
    assert!(msg(&fma).contains("0x3B8"));
    // FMA scale dtype not fp32 (vring.c:0x3BA), and an invalid kbin scale dtype.
    let mut info = fma.clone().with_fma_scales(&[1.0, 1.0]).unwrap().cce_info.unwrap();
    info.set_scale_dtype(KbinDtype::Bf16.value());
    let bad = ReduceRequest { cce_info: Some(info), ..fma.clone() };
    assert_eq!(plan(&bad).unwrap_err(), HostError::ScaleNotFp32("bf16"));
    assert!(msg(&bad).contains("0x3BA"));
    info.set_scale_dtype(0);
    assert_eq!(
        plan(&ReduceRequest { cce_info: Some(info), ..fma.clone() }).unwrap_err(),
        HostError::Format(FormatError::UnsupportedDataType(0))
    );
    // More than 32 sources.
    assert_eq!(plan(&add(33, 64)).unwrap_err(), HostError::TooManySources(33));
    // num_dests > 1 on arch 2.
    let rep = ReduceRequest { dsts: vec![0xA000, 0xB000], arch: 2, ..base.clone() };
    assert_eq!(msg(&rep), "CCE replication not supported for v1/v2 archs");
    // Combo overflow: 32 FMA sources (64 tx) + seed + 2 replication descriptors > 65.
    let big = ReduceRequest::new(
        KbinOp::Fma.value(),
        (0..32).map(|i| i * 0x10000).collect(),
        vec![0xA00_0000, 0xB00_0000],
        64,
        BF16_VIA_FP32,
        3,
    )
    .with_fma_scales(&[1.0; 32])
    .unwrap();
    let big = ReduceRequest { rounding: Rounding::Stochastic { seed: 1 }, ..big };
    assert_eq!(msg(&big), "CCE concatenation not supported");
    // The combo builder itself refuses arch 2.
    let p = plan(&ReduceRequest { dsts: vec![0xA000, 0xB000], ..base.clone() }).unwrap().packet(0).unwrap();
    assert_eq!(cce_host::combo_packet(p, 2).unwrap_err(), HostError::Concatenation);
    // Unsupported MIN/MAX constant dtype.
    let mm = ReduceRequest { op: KbinOp::Max.value(), ..base.clone() };
    let fp32c = mm.clone().with_min_max_constant(MinMaxConstant { kbin_dtype: KbinDtype::Fp32.value(), bits: 0 });
    assert_eq!(msg(&fp32c), "Unsupported data type for min/max op fp32");
    // Packet sizing of a size-0 dtype (fp32r).
    let r = ReduceRequest { in_dt: Fp32r, ..base.clone() };
    assert_eq!(plan(&r).unwrap_err(), HostError::Format(FormatError::ZeroSizeDtype("fp32r")));
    // Priority class > 4, unknown arch.
    assert_eq!(
        plan(&ReduceRequest { prio: 5, ..base.clone() }).unwrap_err(),
        HostError::Format(FormatError::PriorityClass(5))
    );
    assert_eq!(
        plan(&ReduceRequest { arch: 5, ..base.clone() }).unwrap_err(),
        HostError::Format(FormatError::UnsupportedArch(5))
    );
    // ADD, MIN and MAX accept no cce_info; fp32r is fine as an accumulator.
    assert!(plan(&base).is_ok());
    assert!(plan(&mm).is_ok());
    assert!(plan(&ReduceRequest { op: KbinOp::Min.value(), ..base.clone() }).is_ok());
    assert!(plan(&ReduceRequest { accum_dt: Fp32r, ..base.clone() }).is_ok());
    // Counts in cce_info must match the address lists.
    let mut info = fma.clone().with_fma_scales(&[1.0, 1.0]).unwrap().cce_info.unwrap();
    info.set_num_sources(3);
    assert!(matches!(
        plan(&ReduceRequest { cce_info: Some(info), ..fma }).unwrap_err(),
        HostError::CountMismatch { .. }
    ));
    // Empty lists, zero elements, address overflow, bad out / accum dtypes.
    assert_eq!(plan(&add(0, 64)).unwrap_err(), HostError::Empty("source"));
    assert_eq!(plan(&ReduceRequest { dsts: vec![], ..base.clone() }).unwrap_err(), HostError::Empty("destination"));
    assert_eq!(plan(&ReduceRequest { elems: 0, ..base.clone() }).unwrap_err(), HostError::Empty("element"));
    assert!(matches!(
        plan(&ReduceRequest { dsts: vec![u64::MAX - 4], ..base.clone() }).unwrap_err(),
        HostError::AddressOverflow { .. }
    ));
    assert!(matches!(
        plan(&ReduceRequest { out_dt: Fp32r, ..base.clone() }).unwrap_err(),
        HostError::Dtype { role: "out", .. }
    ));
    assert!(matches!(
        plan(&ReduceRequest { accum_dt: Invalid, ..base.clone() }).unwrap_err(),
        HostError::Dtype { role: "accum", .. }
    ));
    // A cap below the 32-byte granule.
    let caps = PrioCaps::default().with_cap(0, 16);
    assert_eq!(plan(&ReduceRequest { caps, ..base.clone() }).unwrap_err(), HostError::CapTooSmall(16));
    // Ring sizes.
    assert_eq!(plan(&base).unwrap().to_rings(Some(40)).unwrap_err(), HostError::RingSize(40));
    assert_eq!(plan(&base).unwrap().to_rings(Some(16)).unwrap_err(), HostError::RingSize(16));
}

#[test]
fn stochastic_rounding_puts_seed_init_first_in_every_packet() {
    let req = ReduceRequest { rounding: Rounding::Stochastic { seed: 0xC0FFEE }, ..add(2, 5000) };
    let r = rings(&req);
    let (tx, rx) = (words(&r.tx), words(&r.rx));
    let geo = RingGeometry { ring_size: r.ring_size, initial_phase: r.initial_phase };
    let found: Vec<_> = packet::walk(&tx, &rx, geo, 3).collect::<Result<_, _>>().unwrap();
    assert_eq!(found.len(), 3);
    for f in &found {
        assert_eq!(f.parsed.tx_kinds[0], DescKind::SeedInit);
        assert_eq!(tx[f.tx_start][1], 0x0600_0000);
        assert_eq!(tx[f.tx_start][3], 0xC0FFEE);
        assert_eq!(f.parsed.packet.seed, Some(0xC0FFEE));
    }
}

#[test]
fn u8_lanes_are_promoted_to_u16() {
    // Single source, u8 in and out: tx meta and rx dtype become u16 (study §4.2).
    let req = ReduceRequest::new(
        KbinOp::Add.value(),
        vec![0x1000],
        vec![0x8000],
        100,
        ReduceDtypes { in_dt: U8, accum_dt: U8, out_dt: U8 },
        3,
    );
    let prog = plan(&req).unwrap();
    let p = prog.packet(0).unwrap();
    // 100 bytes → packets of 96 (32-byte granule) and 4 bytes: 48 and 2 u16 lanes.
    assert_eq!((p.in_dt, p.out_dt, p.accum_dt, p.elems), (U16, U16, U16, 48));
    assert_eq!(prog.packet(1).unwrap().elems, 2);
    let r = prog.to_rings(None).unwrap();
    let tx = words(&r.tx);
    assert_eq!(tx[0][1] >> 12 & 0xF, U16.value());
    assert_eq!(words(&r.rx)[0][1] >> 12 & 0xF, U16.value());
    // Two sources, or different in/out, or an odd byte count: no promotion.
    assert_eq!(
        plan(&ReduceRequest { srcs: vec![0x1000, 0x2000], ..req.clone() }).unwrap().packet(0).unwrap().in_dt,
        U8
    );
    assert_eq!(plan(&ReduceRequest { out_dt: I8, ..req.clone() }).unwrap().packet(0).unwrap().in_dt, U8);
    let odd = plan(&ReduceRequest { elems: 101, ..req.clone() }).unwrap();
    assert_eq!((odd.packet(0).unwrap().in_dt, odd.packet(1).unwrap().in_dt), (U16, U8));
}

#[test]
fn min_max_constant_becomes_the_constant_sub_descriptor() {
    let c = MinMaxConstant { kbin_dtype: KbinDtype::Bf16.value(), bits: 0x3F80 };
    let req = ReduceRequest { op: KbinOp::Min.value(), ..add(2, 64) }.with_min_max_constant(c);
    let tx = words(&rings(&req).tx);
    // MIN/MAX descriptor: W1 = bf16(6) << 20 | 0x6000000, W2 = 64 | 0x2000000, W3 = the constant.
    assert_eq!(tx[0], [0x0080_0000, 0x0660_0000, 0x0200_0040, 0x3F80]);
    // Meta-control: sub-op 3 (MIN), const-dt 6, use-const, out dtype forced to bf16.
    let mc = cce_format::meta_ctrl::MinMaxMetaCtrl::parse(tx[1][1]).unwrap();
    assert!(mc.use_const);
    assert_eq!((mc.sub.get(), mc.const_dt.get(), mc.out_dt), (3, 6, Bf16));
    // Without the constant: no compute descriptor at all.
    let plain = ReduceRequest { op: KbinOp::Max.value(), ..add(2, 64) };
    assert_eq!(words(&rings(&plain).tx).len(), 2);
}

#[test]
fn replication_builds_the_ext_combo() {
    let req = ReduceRequest {
        dsts: vec![0xA000_0000, 0xB000_0000, 0xC000_0000],
        rounding: Rounding::Stochastic { seed: 7 },
        ..add(2, 64)
    };
    let r = rings(&req);
    let (tx, rx) = (words(&r.tx), words(&r.rx));
    let parsed = packet::parse_packet(&tx, &rx).unwrap();
    use DescKind::*;
    assert_eq!(parsed.tx_kinds, [SeedInit, M2sData, M2sData, Replication, Replication, Replication]);
    assert_eq!(parsed.rx_used, 3);
    // Seed-init: combo-member flag 0x4000000 and the more-bit in W2 (MODEL).
    assert_eq!(tx[0][2], 0x4400_0000);
    // Replication: W1 = 0xA00000 | 3 | 0x4A00000 | 1 << 29; more-bit on all but the last; W3 = EXT word.
    for (j, d) in tx[3..].iter().enumerate() {
        assert_eq!(d[1], 0x24A0_0003);
        assert_eq!(d[2] >> 30 & 1, (j < 2) as u32);
        assert_eq!(d[3], cce_format::meta_ctrl::raw::ext_meta_ctrl(0, Bf16.value(), Fp32.value()));
    }
    assert_eq!(parsed.packet.dests, [0xA000_0000, 0xB000_0000, 0xC000_0000]);
}

#[test]
fn chunking_follows_the_packet_size_rule_and_max_elements() {
    // bf16 × 10000 at prio 0: min(20000, 64 KiB) & ~31 = 19968 bytes → 9984 elements → capped at 2048 (arch 3).
    let prog = plan(&add(2, 10_000)).unwrap();
    let ps: Vec<_> = prog.packets().collect();
    assert_eq!(ps.iter().map(|p| p.elems).collect::<Vec<_>>(), [2048, 2048, 2048, 2048, 1808]);
    // Arch 2: 1024 elements per packet.
    assert_eq!(plan(&ReduceRequest { arch: 2, ..add(2, 10_000) }).unwrap().packet_count(), 10);
    // A per-priority cap of 1000 bytes: 992 → 496 elements.
    let caps = PrioCaps::default().with_cap(1, 1000);
    let prog = plan(&ReduceRequest { prio: 1, caps, ..add(2, 10_000) }).unwrap();
    assert_eq!(prog.packet(0).unwrap().elems, 496);
    assert_eq!(prog.packet_count(), 21);
    // Packets are complete and contiguous; the whole ring walks back to them.
    let r = prog.to_rings(None).unwrap();
    let (tx, rx) = (words(&r.tx), words(&r.rx));
    let geo = RingGeometry { ring_size: r.ring_size, initial_phase: r.initial_phase };
    let found: Vec<_> = packet::walk(&tx, &rx, geo, 3).collect::<Result<_, _>>().unwrap();
    let mut next = 0x1000_0000u64;
    for (f, p) in found.iter().zip(prog.packets()) {
        assert_eq!(f.parsed.packet, p);
        assert_eq!(p.sources[0].addr, next);
        next += p.src_bytes();
        assert!(p.src_bytes() <= MAX_DATA_DESC_BYTES as u64);
    }
    assert_eq!(next, 0x1000_0000 + 20_000);
}

#[test]
fn ring_phase_changes_on_wrap_and_is_checked() {
    let prog = plan(&add(2, 100 * 2048)).unwrap();
    let r = prog.to_rings(Some(32)).unwrap();
    let (tx, rx) = (words(&r.tx), words(&r.rx));
    assert_eq!(tx.len(), 200);
    let phases: Vec<u32> = tx.iter().map(|w| w[0] >> 24 & 3).collect();
    assert_eq!(&phases[..32], &[1; 32]);
    assert_eq!(&phases[32..64], &[2; 32]);
    assert_eq!(&phases[96..128], &[0; 32]);
    let geo = RingGeometry { ring_size: 32, initial_phase: 1 };
    assert_eq!(packet::walk(&tx, &rx, geo, 3).filter(|r| r.is_ok()).count(), 100);
    // A descriptor in the wrong phase is a corrupt ring index.
    let mut bad = tx.clone();
    bad[40][0] ^= 1 << 24;
    let err = packet::walk(&bad, &rx, geo, 3).find_map(|r| r.err()).unwrap();
    assert!(matches!(err.error, packet::PacketError::Phase { .. }), "{err:?}");
    assert_eq!(err.tx_start, 40);
}

#[test]
fn copies_chunk_at_64_kib_with_the_barrier_on_the_last() {
    let v2 = plan_copy(&CopyRequest { src: 0x10_0000, dst: 0x90_0000, bytes: 3 * 65536 + 100, arch: 2 }).unwrap();
    let ps: Vec<_> = v2.packets().collect();
    assert_eq!(ps.iter().map(|p| p.elems).collect::<Vec<_>>(), [65536, 65536, 65536, 100]);
    assert_eq!(ps.iter().map(|p| p.flags.write_barrier).collect::<Vec<_>>(), [false, false, false, true]);
    assert!(ps.iter().all(|p| !p.flags.dmb && !p.flags.strong_order));
    let rings = v2.to_rings(None).unwrap();
    let (tx, rx) = (words(&rings.tx), words(&rings.rx));
    assert_eq!(tx[0][0] & 0xFFFF, 0, "65536 is written as length 0");
    // The public driver's words (GAPS.md §12): M2S FIRST | LAST with 0x01080003, the write
    // barrier 0x05080003 on the last chunk; S2M with the length and ring id only, W1 = 0.
    assert_eq!(tx[0][1], 0x0108_0003);
    assert_eq!(tx[3][1], 0x0508_0003);
    assert!(tx.iter().all(|w| w[0] & (3 << 26) == 3 << 26));
    assert!(rx.iter().all(|w| w[0] & !0x03ff_ffff == 0 && w[0] & 0x00ff_0000 == 0 && w[1] == 0));
    // v1: a DMB (len_ctrl bit 30) on the last chunk instead.
    let v1 = plan_copy(&CopyRequest { src: 0, dst: 0x1000, bytes: 65537, arch: 1 }).unwrap();
    let ps: Vec<_> = v1.packets().collect();
    assert_eq!(
        ps.iter().map(|p| (p.flags.dmb, p.flags.write_barrier)).collect::<Vec<_>>(),
        [(false, false), (true, false)]
    );
}

#[test]
fn ring_file_round_trips() {
    let r = rings(&add(3, 3000));
    let bytes = r.to_file_bytes(5, 3);
    let f = RingFile::parse(&bytes).unwrap();
    assert_eq!(f.arch, 3);
    let q = &f.queues[0];
    assert_eq!((q.queue, q.ring_size, q.initial_phase), (5, r.ring_size, 1));
    assert_eq!((q.tx, q.rx), (&r.tx[..], &r.rx[..]));
    assert_eq!((q.tx_doorbell, q.rx_doorbell), (r.tx_doorbell(), r.rx_doorbell()));
}

#[test]
fn selectors_are_carried() {
    let req = ReduceRequest {
        selectors: [FmaOperand::Stored, FmaOperand::Input, FmaOperand::Scale],
        ..ReduceRequest::new(
            KbinOp::Fma.value(),
            vec![0x1000],
            vec![0x2000],
            8,
            ReduceDtypes { in_dt: Fp32, accum_dt: Fp32, out_dt: Fp32 },
            4,
        )
    }
    .with_fma_scales(&[2.0])
    .unwrap();
    let p = plan(&req).unwrap().packet(0).unwrap();
    let f = p.sources[0].fma.unwrap();
    assert_eq!(
        (f.a, f.b, f.c, f.scale_bits),
        (FmaOperand::Stored, FmaOperand::Input, FmaOperand::Scale, 2.0f32.to_bits())
    );
}
