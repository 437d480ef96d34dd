//! Property tests: no input panics, and every bad shape is the right typed error.

use cce_format::dtype::SdmaDtype;
use cce_numerics::{
    AccumType, Exec, FmaSource, Isa, NumType, NumericsError, Op, Operand, ReduceSpec, Rounding, Scalar, convert,
    reduce_with,
};
use proptest::prelude::*;

fn num_type() -> impl Strategy<Value = NumType> {
    (0..NumType::ALL.len()).prop_map(|i| NumType::ALL[i])
}

fn accum_type() -> impl Strategy<Value = AccumType> {
    prop_oneof![num_type().prop_map(AccumType::Num), Just(AccumType::Fp32r)]
}

fn operand() -> impl Strategy<Value = Operand> {
    (0u8..3).prop_map(|v| Operand::from_bits(v).unwrap())
}

fn scalar() -> impl Strategy<Value = Option<Scalar>> {
    prop_oneof![
        Just(None),
        any::<f64>().prop_map(|v| Some(Scalar::F64(v))),
        any::<i64>().prop_map(|v| Some(Scalar::I64(v))),
        any::<u64>().prop_map(|v| Some(Scalar::U64(v))),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Add),
        proptest::collection::vec(
            (any::<u32>(), operand(), operand(), operand()).prop_map(|(s, a, b, c)| FmaSource {
                scale: f32::from_bits(s),
                a,
                b,
                c
            }),
            0..35
        )
        .prop_map(Op::Fma),
        scalar().prop_map(|clamp| Op::Min { clamp }),
        scalar().prop_map(|clamp| Op::Max { clamp }),
    ]
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![
        Just(Rounding::Rne),
        (any::<u64>(), any::<u64>()).prop_map(|(seed, stream)| Rounding::Stochastic { seed, stream })
    ]
}

fn spec() -> impl Strategy<Value = ReduceSpec> {
    (op(), num_type(), accum_type(), num_type(), rounding(), any::<bool>()).prop_map(
        |(op, in_type, accum_type, out_type, rounding, saturate)| ReduceSpec {
            op,
            in_type,
            accum_type,
            out_type,
            rounding,
            saturate,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn reduce_never_panics_and_errors_match_the_shape(
        spec in spec(),
        n in 0usize..40,
        nsrc in 0usize..35,
        nout in 0usize..4,
        skew in proptest::collection::vec(-2isize..3, 0..40),
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        first in prop_oneof![Just(u64::MAX), Just(u64::MAX - 3), any::<u64>(), 0u64..100],
        threads in 0usize..4,
        chunk in 0usize..9,
        isa in prop_oneof![Just(Isa::Portable), Just(Isa::Avx2), Just(Isa::Avx512)],
    ) {
        let isz = spec.in_type.size();
        let osz = spec.out_type.size();
        let len_of = |k: usize, base: usize| {
            let d = skew.get(k).copied().unwrap_or(0);
            if d == 0 { base } else { base.saturating_add_signed(d) }
        };
        let srcs: Vec<Vec<u8>> = (0..nsrc).map(|k| {
            (0..len_of(k, n * isz)).map(|j| bytes.get(j % bytes.len().max(1)).copied().unwrap_or(0x3c)).collect()
        }).collect();
        let refs: Vec<&[u8]> = srcs.iter().map(|v| &v[..]).collect();
        let mut outs: Vec<Vec<u8>> = (0..nout).map(|k| vec![0u8; len_of(k + 20, n * osz)]).collect();
        let mut out_refs: Vec<&mut [u8]> = outs.iter_mut().map(|v| &mut v[..]).collect();
        let exec = Exec { threads, chunk_elements: chunk, max_isa: isa };
        let r = reduce_with(&spec, &refs, &mut out_refs, first, &exec);

        // What the shape says, computed independently.
        let src_ok = (1..=32).contains(&nsrc)
            && srcs[0].len() % isz == 0
            && srcs.iter().all(|s| s.len() == srcs[0].len());
        let elems = if src_ok { srcs[0].len() / isz } else { 0 };
        let out_ok = nout >= 1 && outs.iter().all(|o| o.len() == elems * osz);
        let fma_ok = match &spec.op {
            Op::Fma(v) => v.len() == nsrc && spec.accum_type.num_type().is_float(),
            _ => true,
        };
        let idx_ok = first.checked_add(elems as u64).is_some();
        let valid = threads >= 1 && src_ok && out_ok && fma_ok && idx_ok;
        prop_assert_eq!(r.is_ok(), valid, "{:?}", r);
        if let Err(e) = r {
            prop_assert!(!e.to_string().is_empty());
            if threads == 0 {
                prop_assert_eq!(e, NumericsError::ZeroThreads(0));
            } else if !(1..=32).contains(&nsrc) {
                prop_assert_eq!(e, NumericsError::SourceCount(nsrc));
            } else if nout == 0 {
                prop_assert_eq!(e, NumericsError::NoOutputs);
            }
        }
    }

    #[test]
    fn convert_checks_lengths(from in num_type(), to in num_type(), len in 0usize..50, extra in 0usize..3, r in rounding(), sat in any::<bool>()) {
        let input = vec![0x41u8; len];
        let n = len / from.size();
        let mut out = vec![0u8; n * to.size() + extra];
        let res = convert(from, to, &input, &mut out, r, sat);
        if len % from.size() != 0 {
            let is_multiple_error = matches!(res, Err(NumericsError::NotElementMultiple { len: l, .. }) if l == len);
            prop_assert!(is_multiple_error, "{:?}", res);
        } else if extra != 0 {
            let is_output_error = matches!(res, Err(NumericsError::OutputLength { .. }));
            prop_assert!(is_output_error, "{:?}", res);
        } else {
            prop_assert!(res.is_ok());
        }
    }

    #[test]
    fn any_f32_converts_without_panicking(bits in proptest::collection::vec(any::<u32>(), 0..64), to in num_type(), r in rounding(), sat in any::<bool>()) {
        let input: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        let out = cce_numerics::convert_to_vec(NumType::F32, to, &input, r, sat).unwrap();
        prop_assert_eq!(out.len(), bits.len() * to.size());
    }
}

#[test]
fn sdma_dtype_roles() {
    for d in SdmaDtype::ALL {
        let n = NumType::from_sdma(d);
        let a = AccumType::from_sdma(d);
        match d {
            SdmaDtype::Invalid => {
                assert!(n.is_err() && a.is_err());
                assert!(n.unwrap_err().to_string().contains("invalid"), "message names the dtype");
            }
            SdmaDtype::Fp32r => {
                assert!(matches!(n, Err(NumericsError::UnsupportedDtype { value: 11, .. })));
                assert_eq!(a.unwrap(), AccumType::Fp32r);
                assert_eq!(AccumType::Fp32r.num_type(), NumType::F32);
            }
            _ => {
                let t = n.unwrap();
                assert_eq!(t.size(), usize::from(d.bytes()));
                assert_eq!(t.to_sdma(), Some(d));
                assert_eq!(a.unwrap(), AccumType::Num(t));
                assert_eq!(NumType::from_name(d.name()).unwrap(), t);
            }
        }
    }
    assert_eq!(NumType::F8E4M3Fn.to_sdma(), None);
    assert_eq!(NumType::from_name("fp8e4fn").unwrap(), NumType::F8E4M3Fn);
    assert!(NumType::from_name("fp64").is_err());
    assert_eq!(Operand::from_bits(3), Err(NumericsError::BadOperandSelector(3)));
}

#[test]
fn error_messages_name_the_values() {
    let spec = ReduceSpec::add(NumType::Bf16, NumType::F32, NumType::Bf16);
    let a = [0u8; 4];
    let b = [0u8; 6];
    let mut o = [0u8; 4];
    let e = reduce_with(&spec, &[&a, &b], &mut [&mut o], 0, &Exec::default()).unwrap_err();
    assert_eq!(e.to_string(), "source 1 has 6 bytes but source 0 has 4");
    let c = [0u8; 3];
    let e = reduce_with(&spec, &[&c], &mut [&mut o], 0, &Exec::default()).unwrap_err();
    assert_eq!(e.to_string(), "source 0 has 3 bytes, not a multiple of the bf16 element size 2");
    let mut short = [0u8; 2];
    let e = reduce_with(&spec, &[&a], &mut [&mut short], 0, &Exec::default()).unwrap_err();
    assert_eq!(e.to_string(), "output 0 has 2 bytes, expected 4");
    let fma = ReduceSpec::add(NumType::I8, NumType::I32, NumType::I8).with_op(Op::Fma(vec![FmaSource::scaled(1.0)]));
    let e = reduce_with(&fma, &[&a], &mut [&mut o], 0, &Exec::default()).unwrap_err();
    assert!(e.to_string().contains("fma needs a floating-point accumulate dtype"));
}
