use cce_numerics::internals::floor::*;

/// Every output block holds the sum the doc says, whatever the order the blocks were visited
/// in (one source: four stretches; four sources: in order) and however the threads split
/// them: the loop reads and writes the bytes it counts. Unsupported shapes are refused.
#[test]
fn floor_sums_the_lanes_it_counts() {
    // Source k, 32-bit lane i: i + k.
    let src: Vec<Vec<u8>> = (0..4u32).map(|k| (0..4096u32).flat_map(|i| (i + k).to_le_bytes()).collect()).collect();
    for n in [1usize, 4] {
        let srcs: Vec<&[u8]> = src[..n].iter().map(|s| &s[..]).collect();
        let k_sum = (n * (n - 1) / 2) as u32;
        for (out_len, threads) in [(16384usize, 1usize), (16384, 2), (32768, 2), (8192, 3)] {
            let mut buf = std::vec![0xa5u8; out_len + 64];
            let head = buf.as_ptr().align_offset(64);
            let out = &mut buf[head..head + out_len];
            for (level, p) in levels().into_iter().flat_map(|l| PREFETCHES.map(|p| (l, p))) {
                out.fill(0xa5);
                let bytes = pass_at(level, &srcs, out, p, threads).unwrap();
                let in_block = 64 * 16384 / out_len;
                assert_eq!(bytes, (out_len + n * 16384) as u64);
                let lane = |j: usize| u32::from_le_bytes(out[4 * j..4 * j + 4].try_into().unwrap());
                for b in 0..out_len / 64 {
                    // Lane 0 of block b: source lanes (in_block / 4) b (and + 16 with 128-byte
                    // source blocks, whose four loads go to two accumulators).
                    let i = (in_block / 4 * b) as u32;
                    let once = n as u32 * i + k_sum;
                    let want = if in_block == 128 { 2 * once + n as u32 * 16 } else { once };
                    assert_eq!(lane(16 * b), want, "{level:?}, {n} sources, block {b} of {out_len}, {threads} threads");
                }
            }
        }
    }
    let one: &[&[u8]] = &[&src[0]];
    assert_eq!(floor_pass(one, &mut [0u8; 1000], Prefetch::T0Near, 1), None);
    assert_eq!(floor_pass(&[], &mut [0u8; 1024], Prefetch::T0Near, 1), None);
    assert_eq!(floor_pass(&[&src[0], &src[1][..64]], &mut [0u8; 1024], Prefetch::T0Near, 1), None);
}
