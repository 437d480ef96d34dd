//! The C entry points on arbitrary input, called as C calls them: no panic reaches the caller
//! (`CCE_ERR_INTERNAL` never comes back), a refused build leaves its output pointer untouched,
//! and every message is one non-empty line.

use std::ffi::CStr;
use std::ptr;

use cce::cce_status::*;
use cce::engine::*;
use cce::runtime::*;
use cce::{cce_last_error, cce_status};

/// xorshift64*: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn last_error() -> String {
    // SAFETY: cce_last_error returns a pointer into this thread's live message.
    unsafe { CStr::from_ptr(cce_last_error()) }.to_string_lossy().into_owned()
}

fn check(st: cce_status) {
    assert_ne!(st, CCE_ERR_INTERNAL, "a panic reached the boundary: {}", last_error());
    if st != CCE_OK {
        let m = last_error();
        assert!(!m.is_empty() && !m.contains('\n'), "message {m:?}");
    }
}

#[test]
fn random_build_requests_fail_cleanly_or_build() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut built = 0;
    for _ in 0..3000 {
        // Each field is usually a value the runtime takes and sometimes anything: most requests
        // then carry zero or one fault, which reaches the checks behind the first ones.
        let wild = |rng: &mut Rng| rng.below(8) == 0;
        let n_src = if wild(&mut rng) { rng.below(36) } else { 1 + rng.below(3) } as usize;
        let n_dst = if wild(&mut rng) { rng.below(4) } else { 1 } as usize;
        let srcs: Vec<u64> = (0..n_src).map(|i| 0x1000_0000 * (i as u64 + 1)).collect();
        let dsts: Vec<u64> = (0..n_dst).map(|i| 0xE000_0000 + 0x100_0000 * i as u64).collect();
        let scales: Vec<f32> = (0..rng.below(3)).map(|_| f32::from_bits(rng.next() as u32)).collect();
        let constants = [c"1.5".as_ptr(), c"0x7f".as_ptr(), c"x".as_ptr(), c"".as_ptr(), ptr::null()];
        let dtype = |rng: &mut Rng, usual: u32| if wild(rng) { rng.below(18) as u32 } else { usual };
        let mut r = cce_build_request_default();
        r.arch = if wild(&mut rng) { rng.below(7) as u32 } else { 3 };
        r.op = if wild(&mut rng) { rng.below(10) as u32 } else { rng.below(4) as u32 };
        r.in_dtype = dtype(&mut rng, 6);
        r.accum_dtype = dtype(&mut rng, 10);
        r.out_dtype = dtype(&mut rng, 6);
        let sizes = if wild(&mut rng) { 6 } else { 4 };
        r.elems = [1, 7, 1024, 4097, 0, 1 << 40][rng.below(sizes) as usize];
        (r.srcs, r.num_srcs) = (srcs.as_ptr(), srcs.len());
        (r.dsts, r.num_dsts) = (dsts.as_ptr(), dsts.len());
        if r.op == CCE_OP_FMA || wild(&mut rng) {
            (r.scales, r.num_scales) = (scales.as_ptr(), scales.len());
        }
        if wild(&mut rng) {
            r.constant = constants[rng.below(5) as usize];
            r.const_dtype = rng.below(20) as i32 - 2;
        }
        if wild(&mut rng) {
            r.rounding = rng.below(3) as u32;
            r.seed = rng.below(1 << 34) as i64 - 1;
        }
        if wild(&mut rng) {
            r.priority_class = rng.below(7) as u32;
            r.prio_pkt_size = [-1, 0, 31, 1000, 65536][rng.below(5) as usize];
        }
        r.no_cce_info = wild(&mut rng);
        if wild(&mut rng) {
            r.selectors = [rng.below(5) as u32, rng.below(5) as u32, rng.below(5) as u32];
        }
        if wild(&mut rng) {
            r.ring_size = [0, 16, 32, 48, 4096][rng.below(5) as usize];
            r.queue = rng.below(18) as u32;
        }
        if wild(&mut rng) {
            r.header = 0x5800_0000;
        }
        let sentinel = ptr::dangling_mut::<cce_rings>();
        let mut rings = sentinel;
        // SAFETY: every array in `r` is a live Vec of the length given, constants are C strings.
        let st = unsafe { cce_build(&r, &mut rings) };
        check(st);
        if st == CCE_OK {
            built += 1;
            let mut len = 0usize;
            // SAFETY: `rings` is the handle cce_build just made.
            unsafe {
                assert!(!cce_rings_dump(rings, &mut len).is_null() && len > 0);
                cce_rings_free(rings);
            }
        } else {
            assert_eq!(rings, sentinel, "a refused build wrote its output");
        }
    }
    assert!(built > 300, "only {built} requests built: the generator is too hostile to test the success path");
}

#[test]
fn random_dumps_and_regions_fail_cleanly() {
    let mut rng = Rng(7);
    for _ in 0..500 {
        let mut dump: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
        if rng.below(2) == 0 && dump.len() >= 8 {
            dump[..8].copy_from_slice(b"CCERING\0");
        }
        let mut buf = vec![0u8; rng.below(64) as usize];
        let regions = [cce_region { addr: rng.below(1 << 20), data: buf.as_mut_ptr(), len: buf.len() }];
        // SAFETY: the dump and the one region's buffer are live for the call.
        let st = unsafe { cce_run(dump.as_ptr(), dump.len(), regions.as_ptr(), 1, 1, ptr::null_mut()) };
        check(st);
    }
}

#[test]
fn builders_take_any_arguments() {
    let mut rng = Rng(11);
    let mut d = [0u8; 16];
    for _ in 0..2000 {
        let a: Vec<u32> = (0..10).map(|_| rng.next() as u32).collect();
        let f = f32::from_bits(a[5]);
        // SAFETY: `d` has room for 16 bytes.
        unsafe {
            check(al_sdma_m2s_build_fma_descriptor(
                d.as_mut_ptr().cast(),
                a[0],
                a[1],
                a[2],
                a[3],
                f,
                a[4],
                a[6],
                a[7],
                a[8],
                a[9],
            ));
            assert_eq!(u32::from_le_bytes(d[12..16].try_into().unwrap()), a[5], "W3 keeps the scale's bits");
            check(al_sdma_m2s_build_min_max_descriptor(d.as_mut_ptr().cast(), a[0], a[1], a[2], a[3], a[4], a[5]));
            check(al_sdma_m2s_build_replication_descriptor(d.as_mut_ptr().cast(), a[0], a[1], a[2], a[3], a[4], a[5]));
            check(al_sdma_m2s_build_gradient_descriptor(d.as_mut_ptr().cast(), a[0], a[1], a[2], a[3], a[4], a[5]));
            let mut v = 0u32;
            let mut s = 0u64;
            check(kbin_cce_op_to_sdma_cce_op(a[0] % 8, &mut v));
            check(kbin_dtype_to_sdma_dtype(a[1] % 20, &mut v));
            check(cce_sdma_data_type_size(a[2] % 20, &mut v));
            check(encd_get_cce_reduce_packet_size(a[3] % 7, a[4], u64::from(a[5]) << (a[6] % 40), a[7] % 20, &mut s));
            check(aws_hal_get_sdma_max_cce_elements(a[8] % 8, &mut v));
        }
    }
}
