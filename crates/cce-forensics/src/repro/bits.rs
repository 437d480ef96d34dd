//! Outputs compared bit for bit: a 128-bit digest of each rank's output (with the digests of
//! its prefixes, taken in the same pass), the exact comparison of two runs' outputs element by
//! element, and the distance of two values in units in the last place. Bytes in, counts out:
//! nothing here knows what made the outputs.
//!
//! ## Guarantees
//! - [`Digest`] is MurmurHash3 x64_128 (seed 0) of the bytes, streamed: the digest of any
//!   prefix is taken in the pass over the whole ([`prefix_digests`]), and equals the digest of
//!   that prefix alone, whatever the pieces the bytes came in. It is not cryptographic: two
//!   different outputs that nobody crafted share a digest with a probability of about 2⁻¹²⁸.
//! - [`compare`] is exact: it reads every byte of both outputs over the compared elements.
//!   `differ` counts the elements at which some rank's bytes differ, `positions` the (rank,
//!   element) pairs that differ, and `first` is the lowest such element, at its lowest rank.
//! - [`ulp_distance`] of two float values is the number of representable values of the type
//!   one steps over to go from one to the other (+0 and −0 are the same step; NaN has none);
//!   of two integers, their difference.

use cce_numerics::NumType;

/// A 128-bit digest of bytes (MurmurHash3 x64_128, seed 0).
pub type Digest = u128;

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// MurmurHash3 x64_128 over bytes given in pieces ([`Hasher::update`]); [`Hasher::digest`]
/// is the digest of everything given so far, and the hasher goes on.
#[derive(Clone, Debug, Default)]
pub struct Hasher {
    h1: u64,
    h2: u64,
    len: u64,
    tail: [u8; 16],
    tail_len: usize,
}

impl Hasher {
    /// A hasher over no bytes (seed 0).
    pub fn new() -> Hasher {
        Hasher::default()
    }

    /// A hasher over no bytes with MurmurHash3's `seed`.
    pub fn with_seed(seed: u32) -> Hasher {
        Hasher { h1: u64::from(seed), h2: u64::from(seed), ..Hasher::default() }
    }

    fn block(&mut self, b: &[u8]) {
        let k1 = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let k2 = u64::from_le_bytes(b[8..16].try_into().unwrap_or_default());
        self.h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        self.h1 = self.h1.rotate_left(27).wrapping_add(self.h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        self.h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        self.h2 = self.h2.rotate_left(31).wrapping_add(self.h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    /// Adds `data` after the bytes given so far.
    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.tail_len > 0 {
            let take = (16 - self.tail_len).min(data.len());
            self.tail[self.tail_len..self.tail_len + take].copy_from_slice(&data[..take]);
            self.tail_len += take;
            data = &data[take..];
            if self.tail_len < 16 {
                return;
            }
            let tail = self.tail;
            self.block(&tail);
            self.tail_len = 0;
        }
        let mut blocks = data.chunks_exact(16);
        for b in &mut blocks {
            self.block(b);
        }
        let rest = blocks.remainder();
        self.tail[..rest.len()].copy_from_slice(rest);
        self.tail_len = rest.len();
    }

    /// The digest of every byte given so far.
    pub fn digest(&self) -> Digest {
        let (mut h1, mut h2) = (self.h1, self.h2);
        let word = |from: usize| {
            let mut b = [0u8; 8];
            let n = self.tail_len.saturating_sub(from).min(8);
            b[..n].copy_from_slice(&self.tail[from..from + n]);
            u64::from_le_bytes(b)
        };
        if self.tail_len > 8 {
            h2 ^= word(8).wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        }
        if self.tail_len > 0 {
            h1 ^= word(0).wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        }
        h1 ^= self.len;
        h2 ^= self.len;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        (u128::from(h2) << 64) | u128::from(h1)
    }
}

/// The digest of `bytes`.
pub fn digest(bytes: &[u8]) -> Digest {
    let mut h = Hasher::new();
    h.update(bytes);
    h.digest()
}

/// The digests of `bytes[..b]` for every `b` of `boundaries` (ascending, each at most the
/// length; others are left out), then of the whole, in one pass.
pub fn prefix_digests(bytes: &[u8], boundaries: &[usize]) -> Vec<Digest> {
    let mut h = Hasher::new();
    let mut at = 0;
    let mut out = Vec::with_capacity(boundaries.len() + 1);
    for &b in boundaries.iter().filter(|&&b| b <= bytes.len()) {
        if b < at {
            continue;
        }
        h.update(&bytes[at..b]);
        at = b;
        out.push(h.digest());
    }
    h.update(&bytes[at..]);
    out.push(h.digest());
    out
}

/// Every rank's digests of one run's outputs at each size asked for up to its own: what a
/// run leaves behind once its outputs are dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Digests {
    /// (size, one digest per rank), ascending sizes; the last is the whole output.
    at: Vec<(u64, Vec<Digest>)>,
}

impl Digests {
    /// The digests of `outputs` (one per rank, each `elems` elements of `size` bytes) at every
    /// size of `sizes` below `elems` and at `elems`, the ranks spread over up to `threads`
    /// threads.
    pub fn of(outputs: &[Vec<u8>], sizes: &[u64], elems: u64, size: usize, threads: usize) -> Digests {
        let smaller: Vec<u64> = sizes.iter().copied().filter(|&s| s < elems).collect();
        let bounds: Vec<usize> = smaller.iter().map(|&s| s as usize * size).collect();
        let per_thread = outputs.len().div_ceil(threads.clamp(1, outputs.len().max(1))).max(1);
        let mut per_rank: Vec<Vec<Digest>> = vec![Vec::new(); outputs.len()];
        std::thread::scope(|s| {
            for (t, chunk) in per_rank.chunks_mut(per_thread).enumerate() {
                let bounds = &bounds;
                s.spawn(move || {
                    for (k, slot) in chunk.iter_mut().enumerate() {
                        *slot = prefix_digests(&outputs[t * per_thread + k], bounds);
                    }
                });
            }
        });
        let at = smaller
            .iter()
            .chain([&elems])
            .enumerate()
            .map(|(k, &s)| (s, per_rank.iter().map(|d| d[k]).collect()))
            .collect();
        Digests { at }
    }

    /// The digests of the first `n` elements of every rank, if `n` is one of the sizes.
    pub fn at(&self, n: u64) -> Option<&[Digest]> {
        self.at.iter().find(|(s, _)| *s == n).map(|(_, d)| d.as_slice())
    }

    /// The digests of the whole outputs (none for a run not digested).
    pub fn whole(&self) -> &[Digest] {
        self.at.last().map_or(&[], |(_, d)| d.as_slice())
    }
}

/// How two runs' outputs differ over their first `compared` elements ([`compare`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Difference {
    /// Elements compared per rank.
    pub compared: u64,
    /// Elements at which some rank's output differs.
    pub differ: u64,
    /// (rank, element) pairs that differ.
    pub positions: u64,
    /// The first differing element, and the lowest rank that differs there.
    pub first: Option<(u64, usize)>,
}

/// Elements per block of [`compare`]: blocks whose bytes are equal at every rank are passed
/// over by one slice comparison each.
const COMPARE_BLOCK: usize = 4096;

/// Compares the first `elems` elements of size `size` of every rank's output of `a` with
/// `b`'s (one slice per rank; the ranks both runs have).
pub fn compare(a: &[&[u8]], b: &[&[u8]], size: usize, elems: usize) -> Difference {
    let ranks = a.len().min(b.len());
    let mut d = Difference { compared: elems as u64, ..Difference::default() };
    // Per element of a block: how many ranks differ there.
    let mut marks = vec![0u16; COMPARE_BLOCK];
    let mut start = 0;
    while start < elems {
        let end = (start + COMPARE_BLOCK).min(elems);
        let bytes = start * size..end * size;
        let marks = &mut marks[..end - start];
        let mut any = false;
        for r in 0..ranks {
            let (x, y) = (&a[r][bytes.clone()], &b[r][bytes.clone()]);
            if x == y {
                continue;
            }
            if !any {
                marks.fill(0);
                any = true;
            }
            mark_differing(x, y, size, marks);
        }
        if any {
            d.differ += marks.iter().filter(|&&m| m > 0).count() as u64;
            d.positions += marks.iter().map(|&m| u64::from(m)).sum::<u64>();
            if d.first.is_none() {
                let i = start + marks.iter().position(|&m| m > 0).unwrap_or(0);
                let e = i * size..(i + 1) * size;
                let rank = (0..ranks).find(|&r| a[r][e.clone()] != b[r][e.clone()]).unwrap_or(0);
                d.first = Some((i as u64, rank));
            }
        }
        start = end;
    }
    d
}

/// Adds one to `marks[i]` for every element i at which `x` and `y` differ.
fn mark_differing(x: &[u8], y: &[u8], size: usize, marks: &mut [u16]) {
    fn fixed<const N: usize>(x: &[u8], y: &[u8], marks: &mut [u16]) {
        for ((p, q), m) in x.chunks_exact(N).zip(y.chunks_exact(N)).zip(marks) {
            let (p, q): (Option<[u8; N]>, Option<[u8; N]>) = (p.try_into().ok(), q.try_into().ok());
            *m += u16::from(p != q);
        }
    }
    match size {
        1 => fixed::<1>(x, y, marks),
        2 => fixed::<2>(x, y, marks),
        4 => fixed::<4>(x, y, marks),
        8 => fixed::<8>(x, y, marks),
        _ => {
            for ((p, q), m) in x.chunks_exact(size.max(1)).zip(y.chunks_exact(size.max(1))).zip(marks) {
                *m += u16::from(p != q);
            }
        }
    }
}

/// Element `i` of a raw little-endian array of `size`-byte elements, as its bits.
pub fn bits_at(bytes: &[u8], size: usize, i: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
    u64::from_le_bytes(b)
}

/// The value of `bits` as an element of `t` (integers exactly up to 2⁵³).
pub fn value_of(t: NumType, bits: u64) -> Option<f64> {
    Some(match (t.float_format(), t.int_info()) {
        (Some(f), _) => cce_numerics::float::decode(f, bits as u32),
        (None, Some((width, true))) => ((bits << (64 - width)) as i64 >> (64 - width)) as f64,
        _ => bits as f64,
    })
}

/// The distance of two elements of `t` in units in the last place (see the module); `None`
/// when either is NaN.
pub fn ulp_distance(t: NumType, a: u64, b: u64) -> Option<u64> {
    let key = |x: u64| -> Option<i128> {
        match (t.float_format(), t.int_info()) {
            (Some(f), _) => {
                let x = x as u32;
                let mag = x & (f.sign_bit() - 1);
                if f.is_nan_mag(mag) {
                    return None;
                }
                let m = i128::from(mag);
                Some(if x & f.sign_bit() != 0 { -m } else { m })
            }
            (None, Some((width, true))) => Some(i128::from((x << (64 - width)) as i64 >> (64 - width))),
            _ => Some(i128::from(x)),
        }
    };
    let d = (key(a)? - key(b)?).unsigned_abs();
    u64::try_from(d).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_x64_128_passes_smhasher_verification() {
        // SMHasher's VerificationTest: key i is the bytes 0..i, hashed with seed 256 − i; the
        // 256 digests' bytes, hashed with seed 0, begin with 0x6384BA69 for MurmurHash3_x64_128.
        let key: Vec<u8> = (0..=255u8).collect();
        let mut all = Vec::new();
        for i in 0..256usize {
            let mut h = Hasher::with_seed(256 - i as u32);
            h.update(&key[..i]);
            all.extend_from_slice(&h.digest().to_le_bytes());
        }
        let fin = digest(&all).to_le_bytes();
        assert_eq!(u32::from_le_bytes([fin[0], fin[1], fin[2], fin[3]]), 0x6384_BA69);
        assert_eq!(digest(b""), 0);
    }

    #[test]
    fn streamed_and_prefix_digests_equal_the_whole() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for cut in [0, 1, 7, 8, 15, 16, 17, 100, 999, 1000] {
            let mut h = Hasher::new();
            for piece in bytes[..cut].chunks(13) {
                h.update(piece);
            }
            assert_eq!(h.digest(), digest(&bytes[..cut]), "cut {cut}");
        }
        let bounds = [3, 16, 40, 999, 1000, 2000];
        let got = prefix_digests(&bytes, &bounds);
        let want: Vec<Digest> =
            [3, 16, 40, 999, 1000].iter().map(|&b| digest(&bytes[..b])).chain([digest(&bytes)]).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn compare_counts_elements_and_positions() {
        let a0: Vec<u8> = (0..20_000u32).flat_map(|i| (i as u16).to_le_bytes()).collect();
        let a1 = a0.clone();
        let (mut b0, mut b1) = (a0.clone(), a1.clone());
        b1[2 * 5000] ^= 1; // element 5000, rank 1
        b0[2 * 7000 + 1] ^= 0x80; // element 7000, both ranks
        b1[2 * 7000] ^= 1;
        b0[2 * 19_999] ^= 1;
        let d = compare(&[&a0, &a1], &[&b0, &b1], 2, 20_000);
        assert_eq!(d, Difference { compared: 20_000, differ: 3, positions: 4, first: Some((5000, 1)) });
        let d = compare(&[&a0, &a1], &[&b0, &b1], 2, 5000);
        assert_eq!(d, Difference { compared: 5000, differ: 0, positions: 0, first: None });
    }

    #[test]
    fn ulp_distances() {
        let bf = NumType::Bf16;
        assert_eq!(ulp_distance(bf, 0x3f80, 0x3f81), Some(1));
        assert_eq!(ulp_distance(bf, 0x0001, 0x8001), Some(2));
        assert_eq!(ulp_distance(bf, 0x0000, 0x8000), Some(0));
        assert_eq!(ulp_distance(bf, 0x7fc0, 0x3f80), None);
        assert_eq!(ulp_distance(NumType::I8, 0x7f, 0x80), Some(255));
        assert_eq!(value_of(bf, 0xbf80), Some(-1.0));
        assert_eq!(value_of(NumType::I8, 0xff), Some(-1.0));
    }
}
