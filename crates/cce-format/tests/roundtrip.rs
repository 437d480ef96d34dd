//! Property tests: every typed value round-trips through its decoder, the typed encoders agree
//! with the runtime's raw formulas, and decoding any bits never panics.

use cce_format::bits::UInt;
use cce_format::descriptor::{
    self, Descriptor, FmaDescriptor, FmaOperand, GradientDescriptor, LenCtrl, M2sDataDescriptor, MinMaxDescriptor,
    ReplicationDescriptor, S2mDataDescriptor, SeedInitDescriptor,
};
use cce_format::layout;
use cce_format::meta_ctrl::{
    self, AddMetaCtrl, CopyMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl,
    ReplicationMetaCtrl, raw,
};
use cce_format::{SdmaDtype, cce_info::CceInfo};
use proptest::prelude::*;

fn u<const B: u8>() -> impl Strategy<Value = UInt<B>> {
    (0..=UInt::<B>::MAX).prop_map(|v| UInt::new("f", v as u64).unwrap())
}
fn dt() -> impl Strategy<Value = SdmaDtype> {
    (0u32..16).prop_map(SdmaDtype::from_nibble)
}
fn sel() -> impl Strategy<Value = FmaOperand> {
    (0u32..4).prop_map(FmaOperand::from_bits)
}

prop_compose! {
    fn fma_mc()(sub in u::<3>(), in_dt in dt(), scale_dt in dt(), accum_dt in dt(), f4: bool, f5: bool, f6: bool, write_barrier: bool) -> FmaMetaCtrl {
        FmaMetaCtrl { sub, in_dt, scale_dt, accum_dt, f4, f5, f6, write_barrier }
    }
}
prop_compose! {
    fn min_max_mc()(sub in u::<3>(), const_dt in u::<3>(), in_dt in dt(), out in dt(), accum_dt in dt(),
                    notif: bool, wrbar: bool, use_const: bool, last: bool, write_barrier: bool) -> MinMaxMetaCtrl {
        // The out nibble exists only with use_const (the runtime drops it otherwise).
        let out_dt = if use_const { out } else { SdmaDtype::Invalid };
        MinMaxMetaCtrl { sub, const_dt, in_dt, out_dt, accum_dt, notif, wrbar, use_const, last, write_barrier }
    }
}
prop_compose! {
    fn fma_desc()(meta_idx in u::<8>(), wb in u::<23>(), sub in u::<3>(), a10: bool, a8 in u::<3>(), sema in u::<24>(),
                  a_sel in sel(), b_sel in sel(), c_sel in sel(), scale_bits: u32, more: bool) -> FmaDescriptor {
        FmaDescriptor { meta_idx, wb, sub, a10, a8, sema, a_sel, b_sel, c_sel, scale_bits, more }
    }
}
prop_compose! {
    fn len_ctrl(s2m: bool)(length_field in u::<16>(), meta: bool, ring_id in u::<2>(), first: bool, last: bool,
                           int_en: bool, sow: bool, dmb: bool, concat: bool) -> LenCtrl {
        LenCtrl { length_field, meta, ring_id, first, last, int_en, strong_order: sow && s2m, dmb, concat }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fma_meta_ctrl_round_trips(x in fma_mc()) {
        let w = x.emit();
        prop_assert_eq!(FmaMetaCtrl::parse(w), Ok(x));
        prop_assert!(FmaMetaCtrl::LAYOUT.fits(&[w]));
        // The runtime's formula, plus the driver's write barrier at bit 26.
        let formula = raw::fma_meta_ctrl(x.sub.get(), x.in_dt.value(), x.scale_dt.value(), x.accum_dt.value(), x.f4 as u32, x.f5 as u32, x.f6 as u32);
        prop_assert_eq!(w, formula | (x.write_barrier as u32) << 26);
    }

    #[test]
    fn min_max_meta_ctrl_round_trips(x in min_max_mc()) {
        prop_assert_eq!(MinMaxMetaCtrl::parse(x.emit()), Ok(x));
    }

    #[test]
    fn min_max_meta_ctrl_drops_out_dt_without_use_const(x in min_max_mc(), out in dt()) {
        let y = MinMaxMetaCtrl { use_const: false, out_dt: out, ..x };
        prop_assert_eq!(layout::MM_MC_OUT_DT.get(&[y.emit()]), 0);
    }

    #[test]
    fn add_meta_ctrl_round_trips(sub in u::<3>(), out_dt in dt(), accum_dt in dt(), last: bool, wrbar: bool, f: bool, write_barrier: bool) {
        let x = AddMetaCtrl { sub, out_dt, accum_dt, last, wrbar, f, write_barrier };
        prop_assert_eq!(AddMetaCtrl::parse(x.emit()), Ok(x));
    }

    #[test]
    fn gradient_meta_ctrl_round_trips(sub in u::<3>(), in_dt in dt(), scale_dt in dt(), accum_dt in dt(), wrbar: bool, f: bool, last: bool, write_barrier: bool) {
        let x = GradientMetaCtrl { sub, in_dt, scale_dt, accum_dt, wrbar, f, last, write_barrier };
        prop_assert_eq!(GradientMetaCtrl::parse(x.emit()), Ok(x));
    }

    #[test]
    fn ext_meta_ctrl_round_trips(sub in u::<3>(), mid_dt in dt(), accum_dt in dt()) {
        let x = ExtMetaCtrl { sub, mid_dt, accum_dt };
        prop_assert_eq!(ExtMetaCtrl::parse(x.emit()), Ok(x));
    }

    #[test]
    fn copy_meta_ctrl_round_trips(word: u32) {
        // Any word whose op field [25:23] is 2 is a copy word; every other bit is named.
        let w = (word & !(7 << 23)) | 2 << 23;
        let x = CopyMetaCtrl::parse(w).unwrap();
        prop_assert_eq!(x.emit(), w);
        prop_assert_eq!(x.is_plain(), w & !(1 << 26) == 0x0108_0003);
    }

    #[test]
    fn replication_meta_ctrl_round_trips(mode in u::<3>(), count in u::<16>()) {
        let x = ReplicationMetaCtrl { mode, count };
        prop_assert_eq!(ReplicationMetaCtrl::parse(x.emit()), Ok(x));
    }

    #[test]
    fn every_encoding_is_among_its_readings(x in fma_mc(), y in min_max_mc()) {
        prop_assert!(meta_ctrl::readings(x.emit()).contains(&meta_ctrl::Reading::Fma(x)));
        prop_assert!(meta_ctrl::readings(y.emit()).contains(&meta_ctrl::Reading::MinMax(y)));
    }

    #[test]
    fn fma_descriptor_round_trips(x in fma_desc()) {
        let w = x.emit();
        prop_assert_eq!(FmaDescriptor::parse(w), Ok(x));
        prop_assert_eq!(FmaDescriptor::from_bytes(&x.to_bytes()), Ok(x));
        let mut r = descriptor::raw::fma_descriptor(x.meta_idx.get(), x.a_sel.bits(), x.b_sel.bits(), x.c_sel.bits(),
            x.scale_bits, x.sema.get(), x.wb.get(), x.a8.get(), x.sub.get(), x.a10 as u32);
        r[2] |= (x.more as u32) << 30;
        prop_assert_eq!(w, r);
    }

    #[test]
    fn min_max_descriptor_round_trips(meta_idx in u::<8>(), wb in u::<23>(), use_const: bool, cdt in u::<3>(),
                                      length in u::<24>(), constant: u32, more: bool) {
        let const_dt = if use_const { cdt } else { UInt::ZERO };
        let x = MinMaxDescriptor { meta_idx, wb, use_const, const_dt, length, constant, more };
        prop_assert_eq!(MinMaxDescriptor::parse(x.emit()), Ok(x));
        let r = descriptor::raw::min_max_descriptor(meta_idx.get(), constant, length.get(), use_const as u32, cdt.get(), wb.get());
        prop_assert_eq!(&x.emit()[..2], &r[..2]);
    }

    #[test]
    fn seed_init_round_trips(meta_idx in u::<8>(), wb in u::<23>(), seed_en: bool, combo_member: bool, more: bool, seed: u32) {
        let x = SeedInitDescriptor { meta_idx, wb, seed_en, combo_member, more, seed };
        prop_assert_eq!(SeedInitDescriptor::parse(x.emit()), Ok(x));
        prop_assert_eq!(x.emit()[1], descriptor::raw::seed_init_descriptor(seed_en as u32)[1]);
    }

    #[test]
    fn replication_descriptor_round_trips(meta_idx in u::<8>(), wb in u::<23>(), mode in u::<3>(), count in u::<16>(), more: bool, ext_meta: u32) {
        let x = ReplicationDescriptor { meta_idx, wb, mode, count, more, ext_meta };
        prop_assert_eq!(ReplicationDescriptor::parse(x.emit()), Ok(x));
        prop_assert_eq!(x.emit()[1], raw::replication_meta_ctrl(mode.get(), count.get()));
    }

    #[test]
    fn gradient_descriptor_round_trips(meta_idx in u::<8>(), wb in u::<23>(), mode in u::<3>(), length in u::<24>(), more: bool, header: u32) {
        let x = GradientDescriptor { meta_idx, wb, mode, length, more, header };
        prop_assert_eq!(GradientDescriptor::parse(x.emit()), Ok(x));
    }

    #[test]
    fn data_descriptors_round_trip(lc in len_ctrl(false), lc2 in len_ctrl(true), meta_ctrl: u32, buf_ptr: u64, buf2: u32) {
        let m = M2sDataDescriptor { len_ctrl: lc, meta_ctrl, buf_ptr };
        prop_assert_eq!(M2sDataDescriptor::from_bytes(&m.to_bytes()), Ok(m));
        let s = S2mDataDescriptor { len_ctrl: lc2, buf2_ptr_lo: buf2, buf1_ptr: buf_ptr };
        prop_assert_eq!(S2mDataDescriptor::from_bytes(&s.to_bytes()), Ok(s));
        prop_assert!((1..=65536).contains(&lc.byte_len()));
    }

    #[test]
    fn data_length_accepts_exactly_1_to_65536(n in 0u64..200_000) {
        let r = LenCtrl::default().with_byte_len(n);
        prop_assert_eq!(r.is_ok(), (1..=65536).contains(&n));
        if let Ok(lc) = r {
            prop_assert_eq!(lc.byte_len() as u64, n);
        }
    }

    /// Decoding any 16 bytes, as any layout, never panics; a successful parse re-emits the
    /// same bytes; and the generic description explains exactly the bits the parse accepted.
    #[test]
    fn decoding_any_bytes_never_panics(bytes in proptest::array::uniform16(any::<u8>())) {
        let words = descriptor::bytes_to_words(&bytes).unwrap();
        fn check<D: Descriptor + PartialEq + core::fmt::Debug>(bytes: &[u8; 16]) -> Result<(), TestCaseError> {
            if let Ok(d) = D::from_bytes(bytes) {
                prop_assert_eq!(&d.to_bytes(), bytes);
            }
            Ok(())
        }
        check::<FmaDescriptor>(&bytes)?;
        check::<MinMaxDescriptor>(&bytes)?;
        check::<SeedInitDescriptor>(&bytes)?;
        check::<ReplicationDescriptor>(&bytes)?;
        check::<GradientDescriptor>(&bytes)?;
        check::<M2sDataDescriptor>(&bytes)?;
        check::<S2mDataDescriptor>(&bytes)?;
        for l in layout::DESCRIPTOR_LAYOUTS.iter().chain(layout::META_CTRL_LAYOUTS.iter()) {
            let fields = l.describe(&words);
            prop_assert_eq!(fields.len(), l.fields.len());
            let _ = (l.unexplained(&words), l.missing_fixed(&words));
        }
        let _ = CceInfo::from_bytes(&bytes);
    }

    #[test]
    fn decoding_any_word_never_panics(w: u32) {
        for r in meta_ctrl::readings(w) {
            prop_assert!(r.layout().fits(&[w]));
        }
        if let Ok(x) = FmaMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
        if let Ok(x) = MinMaxMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
        if let Ok(x) = AddMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
        if let Ok(x) = GradientMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
        if let Ok(x) = ExtMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
        if let Ok(x) = ReplicationMetaCtrl::parse(w) { prop_assert_eq!(x.emit(), w); }
    }

    #[test]
    fn cce_info_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        match CceInfo::from_bytes(&bytes) {
            Ok(info) => {
                prop_assert_eq!(bytes.len(), 140);
                prop_assert_eq!(&info.as_bytes()[..], &bytes[..]);
                for i in 0..32 { prop_assert!(info.scale_bits(i).is_some()); }
            }
            Err(_) => prop_assert_ne!(bytes.len(), 140),
        }
    }
}

/// Each layout's fields never overlap each other or the fixed bits — except the study's own
/// collision: MIN/MAX const-dt sits in [22:20], which the FMA/EXT/GCE bases use for the op type.
#[test]
fn layouts_do_not_overlap_themselves() {
    for l in layout::DESCRIPTOR_LAYOUTS.iter().chain(layout::META_CTRL_LAYOUTS.iter()) {
        let mut seen = l.fixed;
        for f in l.fields {
            let m = f.span.mask();
            assert_eq!(seen[f.word as usize] & m, 0, "{}: field {} overlaps", l.name, f.name);
            seen[f.word as usize] |= m;
        }
    }
}

/// Through the generic codec, for every layout: random in-range values for every input field
/// encode, decode exactly, and read back as given (conditional fields excepted: MIN/MAX out-dt
/// and const-dt exist only with use-const; M2S has no strong-order bit).
#[test]
fn codec_round_trips_every_layout() {
    use cce_format::codec;
    use cce_format::layout::FieldKind;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config::with_cases(3000));
    for l in codec::layouts() {
        let inputs: Vec<_> = l.fields.iter().filter(|f| f.is_input()).collect();
        let strat = proptest::collection::vec(any::<u64>(), inputs.len());
        runner
            .run(&strat, |raw| {
                let values: Vec<(&str, u64)> =
                    inputs.iter().zip(&raw).map(|(f, r)| (f.name, r % (f.input_max() + 1))).collect();
                let words = codec::encode(l, &values[..]).expect("in-range values encode");
                prop_assert_eq!(words.len(), l.words as usize);
                let d = codec::decode(l, &words);
                prop_assert!(d.exact.is_ok(), "{}: {:?}", l.name, d.exact);
                let get = |n: &str| values.iter().find(|(k, _)| *k == n).map_or(0, |(_, v)| *v);
                for fv in &d.fields {
                    if !fv.def.is_input() {
                        continue;
                    }
                    let given = get(fv.def.name);
                    let expected = match (l.name, fv.def.name) {
                        ("min-max-meta-ctrl", "out-dt") if get("use-const") == 0 => 0,
                        ("min-max-descriptor", "const-dt") if get("use-const") == 0 => 0,
                        _ if fv.def.kind == FieldKind::Pattern => given * fv.def.span.max() as u64,
                        _ => given,
                    };
                    prop_assert_eq!(fv.value as u64, expected, "{}.{}", l.name, fv.def.name);
                }
                Ok(())
            })
            .unwrap();
    }
    // Out of range is refused with the field's name.
    let err = codec::encode(&cce_format::layout::FMA_META_CTRL, &[("sub", 8u64)][..]).unwrap_err();
    assert!(err.to_string().starts_with("sub: 8"), "{err}");
}
