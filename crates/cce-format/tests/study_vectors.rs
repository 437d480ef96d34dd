//! Every constant, table entry and worked value the study gives, checked entry by entry.
//! Expected words are worked out by hand from the study's formulas; each comment shows the sum.
//! The raw encoders' vectors are in the shared table `tests/data/encoder-vectors.txt`
//! (`vector_table.rs`), which the C library's test reads too.

use cce_format::cce_info::{CCE_INFO_BYTES, CceInfo, field};
use cce_format::descriptor::{self, DEFAULT_FMA_SELECTORS, Descriptor, FmaDescriptor, FmaOperand, MinMaxDescriptor};
use cce_format::dtype::{self, CSWTCH_19, KBIN_DTYPE_REMAP, SDMA_DTYPES};
use cce_format::limits::{self, PrioCaps};
use cce_format::meta_ctrl;
use cce_format::op::{self, CSWTCH_21};
use cce_format::{FormatError, KbinDtype, KbinOp, SdmaCceType, SdmaDtype, Tag, UInt};

#[test]
fn op_enums_match_enums_json() {
    let kbin = [
        (KbinOp::Invalid, u64::MAX),
        (KbinOp::Copy, 0),
        (KbinOp::Fma, 1),
        (KbinOp::Add, 2),
        (KbinOp::Min, 3),
        (KbinOp::Max, 4),
        (KbinOp::Transpose, 5),
        (KbinOp::Num, 6),
    ];
    for (op, v) in kbin {
        assert_eq!(op.value(), v, "{op:?}");
        assert_eq!(KbinOp::from_value(v), Some(op));
    }
    let sdma = [
        (SdmaCceType::Add, 0),
        (SdmaCceType::Fma, 1),
        (SdmaCceType::Max, 2),
        (SdmaCceType::Min, 3),
        (SdmaCceType::Ext, 4),
        (SdmaCceType::Gce, 5),
    ];
    for (op, v) in sdma {
        assert_eq!(op.value(), v, "{op:?}");
    }
    assert!(!SdmaCceType::Ext.has_kbin_op() && !SdmaCceType::Gce.has_kbin_op());
}

#[test]
fn cce_op_remap_is_cswtch_21() {
    // CSWTCH.21 bytes: 01 00 00 00 | 00 00 00 00 | 03 00 00 00 | 02 00 00 00.
    assert_eq!(CSWTCH_21, [1, 0, 3, 2]);
    assert_eq!(op::kbin_cce_op_to_sdma_cce_op(1), Ok(SdmaCceType::Fma));
    assert_eq!(op::kbin_cce_op_to_sdma_cce_op(2), Ok(SdmaCceType::Add));
    assert_eq!(op::kbin_cce_op_to_sdma_cce_op(3), Ok(SdmaCceType::Min));
    assert_eq!(op::kbin_cce_op_to_sdma_cce_op(4), Ok(SdmaCceType::Max));
    for bad in [0u64, 5, 6, 7, 1000] {
        let err = op::kbin_cce_op_to_sdma_cce_op(bad).unwrap_err();
        assert_eq!(err.to_string(), format!("Unsupported CCE Op! {bad}"));
    }
    // INVALID = (u64)-1 is truncated to 32 bits by the runtime before printing.
    assert_eq!(op::kbin_cce_op_to_sdma_cce_op(u64::MAX).unwrap_err().to_string(), "Unsupported CCE Op! 4294967295");
}

#[test]
fn sdma_dtype_table_entry_by_entry() {
    // (value, name, sdma_data_type_size, data_type_sizes.0, tag) per GAPS.md §2 and study §1.2.
    let expected: [(u32, &str, u8, u8, Tag); 16] = [
        (0, "invalid", 0, 0, Tag::Med),
        (1, "u64", 8, 8, Tag::Med),
        (2, "i8", 1, 1, Tag::Med),
        (3, "u8", 1, 1, Tag::Med),
        (4, "i16", 2, 2, Tag::Med),
        (5, "u16", 2, 2, Tag::Med),
        (6, "bf16", 2, 2, Tag::High),
        (7, "fp16", 2, 2, Tag::Med),
        (8, "i32", 4, 4, Tag::Med),
        (9, "u32", 4, 4, Tag::Med),
        (10, "fp32", 4, 4, Tag::High),
        (11, "fp32r", 0, 4, Tag::High),
        (12, "i64", 8, 8, Tag::High),
        (13, "fp8e3", 1, 1, Tag::Med),
        (14, "fp8e4", 1, 1, Tag::Med),
        (15, "fp8e5", 1, 1, Tag::Med),
    ];
    for (i, (v, name, bytes, kbin_bytes, tag)) in expected.into_iter().enumerate() {
        let row = &SDMA_DTYPES[i];
        assert_eq!(row.dtype.value(), v);
        assert_eq!(row.name, name);
        assert_eq!(row.bytes, bytes, "{name}");
        assert_eq!(row.kbin_bytes, kbin_bytes, "{name}");
        assert_eq!(row.tag, tag, "{name}");
        assert_eq!(SdmaDtype::from_name(name), Some(row.dtype));
        assert_eq!(SdmaDtype::from_nibble(v), row.dtype);
    }
    // The study's correction: fp32r is 0 bytes, its neighbours 4 and 8.
    assert_eq!(SdmaDtype::Fp32r.bytes(), 0);
    assert_eq!(SdmaDtype::Fp32.bytes(), 4);
    assert_eq!(SdmaDtype::I64.bytes(), 8);
    assert_eq!(SdmaDtype::from_value(16), Err(FormatError::NotAnSdmaDtype(16)));
}

#[test]
fn kbin_dtype_remap_is_cswtch_19() {
    assert_eq!(CSWTCH_19, [13, 14, 15, 7, 10, 11, 6, 3, 5, 9, 1, 2, 4, 8, 12]);
    let expected = [
        (KbinDtype::Fp8E3, SdmaDtype::Fp8E3),
        (KbinDtype::Fp8E4, SdmaDtype::Fp8E4),
        (KbinDtype::Fp8E5, SdmaDtype::Fp8E5),
        (KbinDtype::Fp16, SdmaDtype::Fp16),
        (KbinDtype::Fp32, SdmaDtype::Fp32),
        (KbinDtype::Fp32r, SdmaDtype::Fp32r),
        (KbinDtype::Bf16, SdmaDtype::Bf16),
        (KbinDtype::U8, SdmaDtype::U8),
        (KbinDtype::U16, SdmaDtype::U16),
        (KbinDtype::U32, SdmaDtype::U32),
        (KbinDtype::U64, SdmaDtype::U64),
        (KbinDtype::I8, SdmaDtype::I8),
        (KbinDtype::I16, SdmaDtype::I16),
        (KbinDtype::I32, SdmaDtype::I32),
        (KbinDtype::I64, SdmaDtype::I64),
    ];
    for (i, (k, s)) in expected.into_iter().enumerate() {
        assert_eq!(k.value(), i as u32 + 1);
        assert_eq!(KBIN_DTYPE_REMAP[i].kbin, k);
        assert_eq!(KBIN_DTYPE_REMAP[i].sdma, s);
        assert_eq!(dtype::kbin_dtype_to_sdma_dtype(k.value()), Ok(s));
    }
    for bad in [0u32, 16, 17, u32::MAX] {
        let err = dtype::kbin_dtype_to_sdma_dtype(bad).unwrap_err();
        assert!(err.to_string().starts_with("Unsupported data type!"), "{err}");
    }
    // The scale-dtype assert of §3.2 holds for kbin FP32 (5) only.
    assert_eq!(dtype::kbin_dtype_to_sdma_dtype(5), Ok(SdmaDtype::Fp32));
    // kbin_get_dtype_size goes through the remap and data_type_sizes.0 (fp32r = 4 there).
    assert_eq!(dtype::kbin_get_dtype_size(1), 1);
    assert_eq!(dtype::kbin_get_dtype_size(6), 4);
    assert_eq!(dtype::kbin_get_dtype_size(11), 8);
    assert_eq!(dtype::kbin_get_dtype_size(0), 0);
}

#[test]
fn worked_example_9_2_fma_descriptors() {
    // §9.2: both FMA descriptors carry W3 = 0x3F000000 (0.5f), selectors a=1 b=2 c=0, base 0x2100000.
    assert_eq!(0.5f32.to_bits(), 0x3F00_0000);
    let [a, b, c] = DEFAULT_FMA_SELECTORS;
    assert_eq!((a, b, c), (FmaOperand::Input, FmaOperand::Scale, FmaOperand::Stored));
    assert_eq!((a.bits(), b.bits(), c.bits()), (1, 2, 0));
    let w = descriptor::raw::fma_descriptor(0, 1, 2, 0, 0x3F00_0000, 0, 0, 0, 0, 0);
    // W2 = 1 << 24 | 2 << 26 = 0x1000000 + 0x8000000.
    assert_eq!(w, [0x0080_0000, 0x0210_0000, 0x0900_0000, 0x3F00_0000]);
    let d = FmaDescriptor { a_sel: a, b_sel: b, c_sel: c, scale_bits: 0.5f32.to_bits(), ..Default::default() };
    assert_eq!(d.emit(), w);
    assert_eq!(d.scale(), 0.5);
}

#[test]
fn fma_descriptor_vectors() {
    // meta_idx 0x12, wb 0x345, sema 0xABCDEF, a=1 b=2 c=0, a8=5, sub=3, a10=1, scale -1.5:
    // W0 = 0x345 | 0x800000 | 0x12 << 24
    // W1 = 3 | 1 << 26 | 5 << 29 | 0x2100000 = 3 + 0x4000000 + 0xA0000000 + 0x2100000
    // W2 = 0xABCDEF | 1 << 24 | 2 << 26
    assert_eq!((-1.5f32).to_bits(), 0xBFC0_0000);
    let w = descriptor::raw::fma_descriptor(0x12, 1, 2, 0, 0xBFC0_0000, 0xABCDEF, 0x345, 5, 3, 1);
    assert_eq!(w, [0x1280_0345, 0xA610_0003, 0x09AB_CDEF, 0xBFC0_0000]);
    // Ring bytes are W0..W3 little-endian.
    let d = FmaDescriptor::parse(w).unwrap();
    assert_eq!(&d.to_bytes()[..4], &[0x45, 0x03, 0x80, 0x12]);
}

#[test]
fn min_max_descriptor_vectors() {
    // use_const: W1 = 6 << 20 | 0x6000000; W2 = 2048 | 0x2000000; W3 = constant.
    let w = descriptor::raw::min_max_descriptor(1, 0x7F7F_FFFF, 2048, 1, 6, 0);
    assert_eq!(w, [0x0180_0000, 0x0660_0000, 0x0200_0800, 0x7F7F_FFFF]);
    let typed = MinMaxDescriptor {
        meta_idx: UInt::new("meta-idx", 1).unwrap(),
        use_const: true,
        const_dt: UInt::new("const-dt", 6).unwrap(),
        length: UInt::new("length", 2048).unwrap(),
        constant: 0x7F7F_FFFF,
        ..Default::default()
    };
    assert_eq!(typed.emit(), [0x0180_0000, 0x0660_0000, 0x0200_0800, 0x7F7F_FFFF]);
}

#[test]
fn typed_fields_refuse_out_of_range() {
    let err = UInt::<3>::new("sub", 8).unwrap_err();
    assert_eq!(err.to_string(), "sub: 8 does not fit 3 bits (0..=7)");
    assert!(UInt::<24>::new("length", 0xFF_FFFF).is_ok());
    assert!(UInt::<24>::new("length", 0x100_0000).is_err());
    assert!(UInt::<1>::new("last", 2).is_err());
}

#[test]
fn readings_keep_the_collisions_visible() {
    // An FMA base word also reads as MIN/MAX with const-dt 1 (GAPS.md §5), never as ADD.
    let r: Vec<_> = meta_ctrl::readings(0x0210_0000).iter().map(|r| r.layout().name).collect();
    assert_eq!(r, ["fma-meta-ctrl", "min-max-meta-ctrl"]);
    // ADD with last (bit 7) and an out dtype: MIN/MAX would need use-const for the out nibble.
    let r: Vec<_> = meta_ctrl::readings(0x020A_6080).iter().map(|r| r.layout().name).collect();
    assert_eq!(r, ["add-meta-ctrl"]);
    // A bare 0x2000000 is ADD or MIN/MAX.
    let r: Vec<_> = meta_ctrl::readings(0x0200_0000).iter().map(|r| r.layout().name).collect();
    assert_eq!(r, ["min-max-meta-ctrl", "add-meta-ctrl"]);
    // The driver's plain-copy words are copies only, no CCE word; 0x05080003 is the copy with
    // the write barrier (bit 26; GAPS.md §12), not an unknown op.
    for (word, barrier) in [(0x0108_0003, false), (0x0508_0003, true)] {
        let r = meta_ctrl::readings(word);
        assert_eq!(r.iter().map(|r| r.layout().name).collect::<Vec<_>>(), ["copy-meta-ctrl"], "{word:#x}");
        let meta_ctrl::Reading::Copy(c) = r[0] else { unreachable!() };
        assert!(c.is_plain() && c.write_barrier == barrier && c.first_block && c.last_block && c.copy_source_data);
    }
    // The write barrier rides on CCE words too: an ADD word with bit 26 reads as ADD.
    let r = meta_ctrl::readings(0x020A_6080 | 1 << 26);
    assert!(matches!(r[..], [meta_ctrl::Reading::Add(a)] if a.write_barrier && a.last));
}

#[test]
fn dtype_gate_truth_table() {
    use SdmaDtype::*;
    // Without compute every pair is valid.
    for a in SdmaDtype::ALL {
        for b in SdmaDtype::ALL {
            assert!(limits::dtype_gate_nc_v1(false, a.value(), b.value()));
        }
    }
    let band = [I32, U32, Fp32, Fp32r];
    for a in SdmaDtype::ALL {
        for b in SdmaDtype::ALL {
            let expected = band.contains(&a) == band.contains(&b);
            assert_eq!(limits::dtype_gate_nc_v1(true, a.value(), b.value()), expected, "{a:?} {b:?}");
        }
    }
    assert!(limits::dtype_gate_nc_v1(true, Bf16.value(), Fp8E4.value()));
    assert!(!limits::dtype_gate_nc_v1(true, Bf16.value(), Fp32.value()));
    // The runtime compares as u8: 264 wraps to 8 (int32).
    assert!(limits::dtype_gate_nc_v1(true, 264, 10));
}

#[test]
fn packet_size_examples() {
    let caps = PrioCaps::default();
    // bf16 × 1000 = 2000 bytes → 1984 (32-byte granular).
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Bf16, 1000, 0, &caps), Ok(1984));
    // fp32 × 100000 = 400000 > 64 KiB cap → 65536.
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Fp32, 100_000, 4, &caps), Ok(65_536));
    // cap 0 = no cap.
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Fp32, 100_000, 0, &PrioCaps([0; 5])), Ok(400_000));
    // Per-priority caps: priority 2 capped at 1000 → 992.
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Fp32, 100_000, 2, &PrioCaps([0, 0, 1000, 0, 0])), Ok(992));
    // 33 fp8 bytes → 32; 31 → 0.
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Fp8E4, 33, 0, &caps), Ok(32));
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Fp8E4, 31, 0, &caps), Ok(0));
    assert_eq!(limits::reduce_packet_size(SdmaDtype::Bf16, 10, 5, &caps), Err(FormatError::PriorityClass(5)));
    let e = limits::reduce_packet_size(SdmaDtype::Fp32r, 10, 0, &caps).unwrap_err();
    assert!(e.to_string().contains("fp32r"), "{e}");
    assert!(limits::reduce_packet_size(SdmaDtype::Invalid, 10, 0, &caps).is_err());
    assert!(limits::reduce_packet_size(SdmaDtype::I64, u64::MAX, 0, &caps).is_err());
}

#[test]
fn arch_limits() {
    assert_eq!(limits::max_cce_elements(2), Ok(1024));
    assert_eq!(limits::max_cce_elements(3), Ok(2048));
    assert_eq!(limits::max_cce_elements(4), Ok(2048));
    for bad in [0, 1, 5, 99] {
        assert_eq!(limits::max_cce_elements(bad), Err(FormatError::UnsupportedArch(bad)));
    }
    assert!(!limits::replication_allowed(2));
    assert!(limits::replication_allowed(3) && limits::replication_allowed(4));
}

#[test]
fn cce_info_layout_offsets() {
    assert_eq!(CCE_INFO_BYTES, 140);
    assert_eq!(field::NUM_SOURCES, 0..4);
    assert_eq!(field::UNION, 4..136);
    assert_eq!(field::UNION.len(), 132);
    assert_eq!(field::FMA_SCALE_DTYPE, 4..8);
    assert_eq!(field::FMA_SCALES, 8..136);
    assert_eq!(field::FMA_SCALES.len(), 32 * 4);
    assert_eq!(field::MM_USE_CONSTANT, 4..5);
    assert_eq!(field::MM_CONSTANT_DTYPE, 8..12);
    assert_eq!(field::MM_CONSTANT, 12..16);
    assert_eq!(field::NUM_DESTS, 136..140);

    let mut info = CceInfo::new();
    info.set_num_sources(3);
    info.set_num_dests(0x0102_0304);
    info.set_scale(31, -2.0).unwrap();
    assert_eq!(&info.as_bytes()[0..4], &[3, 0, 0, 0]);
    assert_eq!(&info.as_bytes()[136..140], &[4, 3, 2, 1]);
    assert_eq!(&info.as_bytes()[132..136], &(-2.0f32).to_le_bytes());
    assert!(info.set_scale(32, 1.0).is_err());
    assert_eq!(info.scale(32), None);
}

#[test]
fn cce_info_union_arms_alias() {
    // min_max_info.constant_dtype and fma_info.scale[0] are the same four bytes.
    let mut info = CceInfo::new();
    info.set_constant_dtype(5);
    assert_eq!(info.scale_bits(0), Some(5));
    info.set_scale(0, 0.5).unwrap();
    assert_eq!(info.constant_dtype(), 0x3F00_0000);
    // use_constant is the first byte of fma_info.scale_dtype.
    info.set_use_constant(true);
    assert_eq!(info.scale_dtype(), 1);
    info.set_scale_dtype(0x100);
    assert!(!info.use_constant());
    // constant is scale[1].
    info.set_constant(0xDEAD_BEEF);
    assert_eq!(info.scale_bits(1), Some(0xDEAD_BEEF));
    // Bytes survive a round trip.
    assert_eq!(CceInfo::from_bytes(info.as_bytes()).unwrap(), info);
    assert!(CceInfo::from_bytes(&[0; 139]).is_err());
}

#[test]
fn section_8_reduction_types_and_collective_codes() {
    use cce_format::collective::{LowersTo, PSEUDO_TRIGGER_COLLECTIVE, ReductionType};
    // enc_primitive::reduction_type_t {RING_2R1W = 0, RING_2R2W = 1, KANGARING_NR1W = 2}
    // (enums.json, HIGH), and the algorithm each is.
    let want = [
        (ReductionType::Ring2R1W, 0, "RING_2R1W", "ring"),
        (ReductionType::Ring2R2W, 1, "RING_2R2W", "ring-2r2w"),
        (ReductionType::KangaringNR1W, 2, "KANGARING_NR1W", "kangaring"),
    ];
    assert_eq!(ReductionType::ALL.len(), want.len());
    for ((t, value, name, algorithm), listed) in want.into_iter().zip(ReductionType::ALL) {
        assert_eq!(listed, t, "in the enum's order");
        assert_eq!((t.value(), t.name(), t.algorithm(), t.tag()), (value, name, algorithm, Tag::High));
        assert_eq!(ReductionType::of_algorithm(algorithm), Some(t));
    }
    for other in ["mesh", "rdh", "file", "auto", "RING_2R1W"] {
        assert_eq!(ReductionType::of_algorithm(other), None, "{other}");
    }
    // PSEUDO_TRIGGER_COLLECTIVE op ADD = 0x04, dtype FP32 = 0x0A → SDMA_CCETYPE_ADD reduce packets.
    let [op, dtype] = PSEUDO_TRIGGER_COLLECTIVE;
    assert_eq!((op.field, op.name, op.value, op.tag), ("op", "ADD", 0x04, Tag::Med));
    assert_eq!(op.lowers_to, LowersTo::Op(SdmaCceType::Add));
    assert_eq!(SdmaCceType::Add.value(), 0);
    assert_eq!((dtype.field, dtype.name, dtype.value, dtype.tag), ("dtype", "FP32", 0x0A, Tag::Med));
    assert_eq!(dtype.lowers_to, LowersTo::Dtype(SdmaDtype::Fp32));
    assert_eq!(SdmaDtype::Fp32.value(), 0x0A, "the compiler's FP32 code is the SDMA dtype's value");
}
