//! `cce_api::dtype_value` on vectors checked by hand (each value's bits and digits worked out
//! on paper from the formats' definitions, not from the library): bf16 1.3, ties to even, the
//! fp8 ends, subnormals, the zeros, integers and their refusals.

use cce_api::dtype_value::{DtypeValue, InputKind, Stored, ValueClass};
use cce_api::{ApiError, NumType, Tag, dtype_value, value_bits};

fn dv(dtype: &str, text: &str) -> DtypeValue {
    dtype_value(dtype, text, false).unwrap()
}

fn at(s: &Option<Stored>) -> Option<(&str, &str)> {
    s.as_ref().map(|s| (s.bits_hex.as_str(), s.exact.as_str()))
}

fn refusal(dtype: &str, text: &str) -> String {
    match dtype_value(dtype, text, false) {
        Err(ApiError::Input(m)) => m,
        other => panic!("{dtype} {text}: {other:?}"),
    }
}

#[test]
fn bf16_one_point_three() {
    // 1.3 = 1.0100110011… in binary; bf16 keeps 7 fraction bits: 1.0100110|011… → 1.0100110 =
    // 1 + 38/128 = 1.296875 (0x3f80 | 38 = 0x3fa6), the discarded 0.011… < half an ulp.
    let v = dv("bf16", "1.3");
    assert_eq!((v.stored.bits, v.stored.bits_hex.as_str(), v.stored.exact.as_str()), (0x3fa6, "0x3fa6", "1.296875"));
    assert_eq!(
        (v.dtype, v.tag, v.input_kind, v.class),
        (NumType::Bf16, Tag::High, InputKind::Value, ValueClass::Normal)
    );
    assert_eq!(v.value, Some(1.296875));
    assert_eq!(v.input_exact.as_deref(), Some("1.3000000000000000444089209850062616169452667236328125"));
    let f: Vec<_> = v.fields.iter().map(|f| (f.name, f.hi, f.lo, f.value, f.unbiased)).collect();
    assert_eq!(f, [("sign", 15, 15, 0, None), ("exponent", 14, 7, 127, Some(0)), ("mantissa", 6, 0, 38, None)]);
    assert_eq!(at(&v.next_down), Some(("0x3fa5", "1.2890625")));
    assert_eq!(at(&v.next_up), Some(("0x3fa7", "1.3046875")));
    assert_eq!(v.ulp.as_deref(), Some("0.0078125"));
    let rne = v.rne.as_ref().unwrap();
    assert!(rne.inexact);
    // The f64 1.3 minus 1.296875.
    assert_eq!(rne.error.as_deref(), Some("0.0031250000000000444089209850062616169452667236328125"));
    // SR: the discarded part over the ulp 2^-7: 0.0031250000000000444… · 128 =
    // 0.400000000000005684341886080801486968994140625 = 14073748835533 / 2^45.
    let sr = v.sr.as_ref().unwrap();
    assert_eq!((sr.down.to.bits, sr.up.to.bits), (0x3fa6, 0x3fa7));
    assert_eq!(sr.up.p, 14073748835533.0 / 35184372088832.0);
    assert_eq!(sr.down.p, 1.0 - sr.up.p);
    assert_eq!(sr.p32_up, 1717986918.0 / 4294967296.0);
    assert!(sr.engine_uses);
    // The conversions: exact into fp32, MED between floats, MODEL into integers (rounds to 1).
    let conv = |t: NumType| v.conversions.iter().find(|c| c.dtype == t).unwrap();
    assert_eq!((conv(NumType::F32).to.bits, conv(NumType::F32).tag), (0x3fa6_0000, Tag::Med));
    assert_eq!((conv(NumType::I32).to.exact.as_str(), conv(NumType::I32).tag), ("1", Tag::Model));
    // 1.296875 in e4m3 (3 fraction bits): 1.0100110 → 1.010|0110 rounds to 1.010 = 1.25 = 0x3a.
    assert_eq!(conv(NumType::F8E4M3).to.bits_hex, "0x3a");
    assert_eq!(v.conversions.len(), NumType::ALL.len() - 1);
    assert!(v.conversions.iter().all(|c| c.dtype != NumType::Bf16));
    assert_eq!(value_bits(NumType::Bf16, "1.3").unwrap(), 0x3fa6);
}

#[test]
fn ties_go_to_even() {
    // 1 + 2^-8 lies halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81).
    let v = dv("bf16", "1.00390625");
    assert_eq!(v.stored.bits, 0x3f80);
    assert_eq!(v.rne.as_ref().unwrap().error.as_deref(), Some("0.00390625"));
    let sr = v.sr.as_ref().unwrap();
    assert_eq!((sr.down.p, sr.up.p, sr.p32_up), (0.5, 0.5, 0.5));
    // 1 + 3·2^-8 lies halfway between 0x3f81 and 0x3f82 (even): up.
    assert_eq!(value_bits(NumType::Bf16, "1.01171875").unwrap(), 0x3f82);
    assert_eq!(value_bits(NumType::Bf16, "-1.01171875").unwrap(), 0xbf82);
    // Just above the first tie: the f64 1 + 2^-8 + 2^-40 rounds up (one rounding, not two).
    assert_eq!(value_bits(NumType::Bf16, "1.0039062500009095").unwrap(), 0x3f81);
}

#[test]
fn fp8_ends() {
    // e4m3fn: max 448 = 0x7e (1.110 · 2^8); 0x7f is NaN; 464 is halfway to the 480 the format
    // lacks, so it ties to even 448; above it overflows to NaN (no inf).
    let v = dv("fp8e4fn", "448");
    assert_eq!((v.stored.bits, v.dtype.name(), v.tag), (0x7e, "fp8e4fn", Tag::Med));
    assert_eq!(at(&v.next_up), None);
    assert_eq!(v.ulp, None);
    assert!(v.sr.is_none());
    assert_eq!(value_bits(NumType::F8E4M3Fn, "464").unwrap(), 0x7e);
    assert_eq!(value_bits(NumType::F8E4M3Fn, "465").unwrap(), 0x7f);
    assert_eq!(value_bits(NumType::F8E4M3Fn, "-inf").unwrap(), 0xff);
    let inf = dv("e4m3fn", "inf");
    assert_eq!((inf.class, inf.stored.exact.as_str()), (ValueClass::Nan, "nan"));
    assert!(inf.rne.as_ref().unwrap().inexact && inf.rne.as_ref().unwrap().error.is_none());
    let sat = dtype_value("fp8e4fn", "1000", true).unwrap();
    assert_eq!((sat.stored.bits, sat.rne.as_ref().unwrap().error.as_deref()), (0x7e, Some("552")));
    // e4m3 (fp8e4): max 240 = 0x77 (1.111 · 2^7), then inf at 0x78.
    let v = dv("fp8e4", "240");
    assert_eq!(at(&v.next_up), Some(("0x78", "inf")));
    assert_eq!(v.ulp, None);
    assert_eq!(at(&v.next_down), Some(("0x76", "224")));
    let inf = dv("fp8e4", "0x78");
    assert_eq!((inf.input_kind, inf.class, inf.value), (InputKind::Bits, ValueClass::Inf, None));
    assert!(inf.rne.is_none() && inf.sr.is_none() && inf.next_up.is_none());
    assert_eq!(at(&inf.next_down), Some(("0x77", "240")));
    // Saturating conversions: 240 into e5m2 is exact; e3m4's max is 15.5 (0x6f).
    let s = dtype_value("fp8e4", "240", true).unwrap();
    let e3 = s.conversions.iter().find(|c| c.dtype == NumType::F8E3M4).unwrap();
    assert_eq!((e3.to.bits_hex.as_str(), e3.to.exact.as_str()), ("0x6f", "15.5"));
    let e3 = dv("fp8e4", "240").conversions.into_iter().find(|c| c.dtype == NumType::F8E3M4).unwrap();
    assert_eq!(e3.to.exact, "inf");
}

#[test]
fn subnormals_and_zeros() {
    // fp16's smallest subnormal: 2^-24.
    let v = dv("fp16", "0x0001");
    assert_eq!((v.class, v.stored.exact.as_str()), (ValueClass::Subnormal, "0.000000059604644775390625"));
    assert_eq!(v.fields[1].unbiased, Some(-14));
    assert_eq!(at(&v.next_down), Some(("0x0000", "0")));
    assert_eq!(v.ulp.as_deref(), Some("0.000000059604644775390625"));
    // A third of it rounds to +0, two thirds to the subnormal; SR's fractions are exact.
    let v = dv("fp16", "4e-8");
    assert_eq!(v.stored.bits, 0x0001);
    let sr = v.sr.as_ref().unwrap();
    assert_eq!((sr.down.to.exact.as_str(), sr.up.to.bits), ("0", 0x0001));
    // The zeros: nextUp of either is the smallest subnormal, nextDown its negation.
    let z = dv("bf16", "-0");
    assert_eq!((z.stored.bits, z.stored.exact.as_str(), z.class), (0x8000, "-0", ValueClass::Zero));
    assert_eq!(at(&z.next_up).unwrap().0, "0x0001");
    assert_eq!(at(&z.next_down).unwrap().0, "0x8001");
    // -2^-133 steps up to -0.
    assert_eq!(at(&dv("bf16", "0x8001").next_up), Some(("0x8000", "-0")));
    // bf16's smallest subnormal 2^-133: 133 digits after the point, ending in 5.
    let e = dv("bf16", "0x0001").stored.exact;
    assert!(e.starts_with("0.0000000000000000000000000000000000000000918354961") && e.len() == 135);
    // NaN keeps its sign; its payload is not a value.
    let n = dv("fp32", "-nan");
    assert_eq!((n.stored.bits, n.stored.exact.as_str(), n.value), (0xffc0_0000, "-nan", None));
    assert!(n.next_up.is_none() && n.next_down.is_none() && n.sr.is_none());
    // fp32 SR is reported, but the engine never uses it into fp32.
    assert!(!dv("fp32", "0.1").sr.unwrap().engine_uses);
}

#[test]
fn integers() {
    let v = dv("i8", "0xff");
    assert_eq!((v.class, v.stored.exact.as_str(), v.value), (ValueClass::Integer, "-1", Some(-1.0)));
    let f: Vec<_> = v.fields.iter().map(|f| (f.name, f.hi, f.lo, f.value)).collect();
    assert_eq!(f, [("value", 7, 0, -1)]);
    assert_eq!((at(&v.next_up), v.ulp.as_deref()), (Some(("0x00", "0")), Some("1")));
    // Into u8: wraps without saturation, clamps with it (docs/MODEL.md, integer → integer).
    let u8_of = |v: &DtypeValue| v.conversions.iter().find(|c| c.dtype == NumType::U8).unwrap().to.bits;
    assert_eq!(u8_of(&v), 0xff);
    assert_eq!(u8_of(&dtype_value("i8", "-1", true).unwrap()), 0);
    let top = dv("u64", "18446744073709551615");
    assert_eq!(
        (top.stored.bits_hex.as_str(), top.next_up.is_none(), top.ulp.is_none()),
        ("0xffffffffffffffff", true, true)
    );
    assert_eq!(dv("i64", "-9223372036854775808").next_down, None);
    assert_eq!(value_bits(NumType::I16, "-2").unwrap(), 0xfffe);
    let r = dv("u16", "300").rne.unwrap();
    assert_eq!((r.inexact, r.error.as_deref()), (false, Some("0")));
}

#[test]
fn refusals_name_the_parameter() {
    assert_eq!(refusal("i8", "128"), "`value` '128': expected an integer in -128..=127 (a i8), or 0x and its bits");
    assert!(refusal("u8", "-1").contains("0..=255"));
    assert!(refusal("u8", "1.5").contains("0..=255"));
    assert_eq!(refusal("u8", "0x100"), "`value` '0x100' is wider than u8's 8 bits (at most 0xff)");
    assert_eq!(refusal("bf16", "0x"), "`value` '0x': expected 0x and hex digits (the bits of bf16)");
    assert!(refusal("bf16", "one").starts_with("`value` 'one': expected a decimal number"));
    assert!(refusal("bf16", "0x1ffff").contains("wider than bf16's 16 bits (at most 0xffff)"));
    assert!(refusal("fp64", "1").starts_with("`dtype` 'fp64': expected one of u8, i8,"));
    assert_eq!(
        refusal("fp32r", "1"),
        "`dtype` 'fp32r': sdma dtype fp32r (value 11) is not valid as an input or output dtype"
    );
}

#[test]
fn several_values_and_the_json() {
    let vs = cce_api::dtype_values("bf16", &["1", "2"], false).unwrap();
    let j = vs.to_json();
    assert_eq!(j["values"].as_array().map(Vec::len), Some(2));
    assert_eq!(j["values"][1]["exact"], "2");
    let one = cce_api::dtype_values("bf16", &["1.3"], false).unwrap().to_json();
    assert_eq!(one, dv("bf16", "1.3").to_json());
    let keys: Vec<&str> = one.as_object().unwrap().keys().map(String::as_str).collect();
    for k in [
        "dtype",
        "tag",
        "input",
        "input_kind",
        "bits",
        "bits_hex",
        "value",
        "exact",
        "class",
        "fields",
        "next_down",
        "next_up",
        "ulp",
        "rne",
        "sr",
        "saturate",
        "conversions",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert_eq!(
        one["fields"][1],
        serde_json::json!({"name": "exponent", "bits": "[14:7]", "value": 127, "unbiased": 0})
    );
    assert_eq!(one["sr"]["up"]["bits_hex"], "0x3fa7");
    assert_eq!(dv("bf16", "inf").to_json()["value"], serde_json::Value::Null);
}

#[test]
fn every_value_reads_back_from_its_digits_and_no_text_panics() {
    // Every pattern of the one-byte dtypes and every 61st of the two-byte ones: the bits are
    // kept, and the exact decimal of a number reads back as the same bits (a decimal of every
    // digit is the value itself, which rounds to itself).
    for t in NumType::ALL {
        let n: u64 = 1 << (8 * t.size().min(2));
        for bits in (0..n).step_by(if n > 256 { 61 } else { 1 }) {
            let v = dv(t.name(), &format!("{bits:#x}"));
            assert_eq!(v.stored.bits, bits);
            if v.value.is_some() {
                assert_eq!(value_bits(t, &v.stored.exact).unwrap(), bits, "{t} {}", v.stored.exact);
            }
        }
    }
    for text in ["", " ", "-", "+", ".", "e5", "0x", "0x-1", "1e", "--1", "1..2", "∞", "0x1_0", "nan(1)", "1 2"] {
        for t in NumType::ALL {
            assert!(dtype_value(t.name(), text, false).is_err(), "{t} {text:?}");
        }
    }
    for text in ["1e-400", "-1e400", "1e308", "+.5", "5.", "  7  ", "INF", "-Infinity", "0X7F", "-0.0"] {
        assert!(dtype_value("bf16", text, true).is_ok(), "{text:?}");
    }
}
