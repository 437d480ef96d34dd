use cce_numerics::internals::any_dtype::*;

#[test]
fn min_max_zero_and_nan_rules() {
    assert!(fminmax(0.0, -0.0, false).is_sign_negative());
    assert!(fminmax(-0.0, 0.0, false).is_sign_negative());
    assert!(fminmax(0.0, -0.0, true).is_sign_positive());
    assert!(fminmax(-0.0, 0.0, true).is_sign_positive());
    assert!(fminmax(f64::NAN, 1.0, false).is_nan());
    assert!(fminmax(1.0, -f64::NAN, true).is_nan());
    assert!(fminmax(1.0, -f64::NAN, true).is_sign_positive());
    assert_eq!(fminmax(1.0, 2.0, false), 1.0);
    assert_eq!(fminmax(1.0, 2.0, true), 2.0);
}

#[test]
fn float_to_int_and_wrap() {
    assert_eq!(f2i(2.5, 8, true), 2);
    assert_eq!(f2i(3.5, 8, true), 4);
    assert_eq!(f2i(-2.5, 8, true), -2);
    assert_eq!(f2i(1e10, 8, true), 127);
    assert_eq!(f2i(-1e10, 8, false), 0);
    assert_eq!(f2i(f64::NAN, 32, true), 0);
    assert_eq!(f2i(f64::INFINITY, 64, false), i128::from(u64::MAX));
    assert_eq!(wrap(200, 8, true), -56);
    assert_eq!(wrap(-1, 16, false), 65535);
    assert_eq!(wrap(i128::from(u64::MAX) + 1, 64, false), 0);
}
