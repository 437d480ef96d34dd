//! `cce convert` on any bytes: any dtype pair, rounding and saturation; never a panic, and the
//! output has exactly one element per input element.
#![no_main]

use cce_numerics::{NumType, Rounding, convert_to_vec};
use libfuzzer_sys::fuzz_target;

const TYPES: [NumType; 15] = [
    NumType::U8, NumType::I8, NumType::U16, NumType::I16, NumType::U32, NumType::I32, NumType::U64, NumType::I64,
    NumType::F16, NumType::Bf16, NumType::F32, NumType::F8E3M4, NumType::F8E4M3, NumType::F8E5M2, NumType::F8E4M3Fn,
];

fuzz_target!(|data: &[u8]| {
    let [a, b, flags, rest @ ..] = data else { return };
    let from = TYPES[*a as usize % TYPES.len()];
    let to = TYPES[*b as usize % TYPES.len()];
    let rounding = if flags & 1 == 1 { Rounding::Stochastic { seed: *flags as u64, stream: 1 } } else { Rounding::Rne };
    let input = &rest[..rest.len() / from.size() * from.size()];
    if let Ok(out) = convert_to_vec(from, to, input, rounding, flags & 2 == 2) {
        assert_eq!(out.len() / to.size(), input.len() / from.size());
    }
});
