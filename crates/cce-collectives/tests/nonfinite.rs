//! Elements with a NaN or an infinity among their inputs are listed in `nonfinite` and left out
//! of `wrong` and the error measures; a finite element that is wrong is still counted beside them.

use cce_collectives::collective::{Algo, Config, RedOp};
use cce_collectives::metrics::{self, Nonfinite};
use cce_format::SdmaDtype;

fn fp32s(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn nonfinite_inputs_are_listed_and_a_wrong_finite_element_still_counts() {
    let cfg = Config::new(2, Algo::Ring, RedOp::Add, SdmaDtype::Fp32, 4);
    // Element 1: a NaN input; element 3: +inf and −inf (their sum is NaN).
    let inputs = vec![fp32s(&[1.0, f32::NAN, 2.0, f32::INFINITY]), fp32s(&[1.0, 1.0, 2.0, f32::NEG_INFINITY])];
    // Exact outputs on the finite elements, whatever an engine made of the others.
    let good = fp32s(&[2.0, f32::NAN, 4.0, 7.0]);
    let m = metrics::measure(&cfg, &inputs, &[good.clone(), good.clone()]);
    assert_eq!(m.wrong, 0);
    assert_eq!(m.nonfinite, Nonfinite { count: 2, first: vec![1, 3] });
    assert_eq!((m.max_abs_err, m.max_ulp_err), (0.0, 0.0));

    // Element 2 off by 1 on rank 1 alone: counted once; the non-finite ones still are not.
    let off = fp32s(&[2.0, 0.0, 5.0, f32::INFINITY]);
    let m = metrics::measure(&cfg, &inputs, &[good, off]);
    assert_eq!(m.wrong, 1);
    assert_eq!(m.max_abs_err, 1.0);
    assert_eq!(m.nonfinite.count, 2);
}

#[test]
fn the_list_holds_the_first_twenty_of_many() {
    let n = 3 * metrics::CHECK_BLOCK as u64;
    let cfg = Config::new(2, Algo::Ring, RedOp::Add, SdmaDtype::Fp32, n);
    // A NaN at every 1000th element, across the check's blocks.
    let with_nans: Vec<f32> = (0..n).map(|i| if i % 1000 == 0 { f32::NAN } else { 0.5 }).collect();
    let inputs = vec![fp32s(&with_nans), fp32s(&vec![0.25; n as usize])];
    let out: Vec<f32> = (0..n).map(|i| if i % 1000 == 0 { f32::NAN } else { 0.75 }).collect();
    let out = fp32s(&out);
    let m = metrics::measure(&cfg, &inputs, &[out.clone(), out]);
    assert_eq!(m.wrong, 0);
    assert_eq!(m.nonfinite.count, n.div_ceil(1000));
    assert_eq!(m.nonfinite.first, (0..20).map(|k| k * 1000).collect::<Vec<u64>>());
}
