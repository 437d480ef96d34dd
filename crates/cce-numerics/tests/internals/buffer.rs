use cce_numerics::buffer::*;

#[test]
fn buffers_are_zero_at_every_size() {
    for len in [0, 1, HUGE_MIN - 1, HUGE_MIN, 3 * HUGE_MIN + 12_345] {
        let v = zeroed(len);
        assert_eq!(v.len(), len);
        assert!(v.iter().all(|&b| b == 0), "{len}");
        let mut w = with_capacity(len);
        assert!(w.is_empty() && w.capacity() >= len, "{len}");
        w.extend((0..len).map(|i| i as u8));
        assert!(w.iter().enumerate().all(|(i, &b)| b == i as u8), "{len}");
    }
}
