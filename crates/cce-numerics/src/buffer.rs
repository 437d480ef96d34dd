//! Large buffers, zeroed or empty with room reserved, that the OS may map with huge pages.
//!
//! An all-reduce of 8 ranks × 64 Mi bf16 holds a few GB of inputs, outputs and engine memory,
//! each written whole soon after it is allocated. On Linux every 4 KiB page of such a buffer
//! costs a page fault on its first write; on the project's 2-vCPU Xeon those faults took more
//! of the command's time than the all-reduce itself (docs/MODEL.md C8). [`zeroed`] asks the
//! kernel to back the buffer with transparent huge pages (`madvise(MADV_HUGEPAGE)`, which a host
//! whose THP setting is `madvise`, the common default, needs before it maps any), so one fault
//! maps 2 MiB.
//!
//! ## Guarantees
//! - The buffer is `len` zero bytes whatever the OS does: the advice changes only how pages
//!   are mapped, never their contents, and a refusal (another OS, THP disabled, an old kernel)
//!   is ignored.
//! - [`with_capacity`] is an empty `Vec` with room for `len` bytes: nothing is zeroed, so a
//!   buffer that is filled by copies (an output gathered from the engine) pays for its bytes
//!   once, not twice; its pages are mapped as the copies reach them.
//! - Buffers below [`HUGE_MIN`] are plain `vec![0; len]` / `Vec::with_capacity(len)`.
#![allow(unsafe_code, reason = "one madvise call, whose soundness the SAFETY comment states")]

use std::vec::Vec;

/// Buffers at least this long are advised (a smaller one cannot hold an aligned huge page
/// with room to spare).
pub const HUGE_MIN: usize = 4 << 20;

/// An empty buffer with room for `len` bytes, mapped with huge pages where the OS allows (see
/// the module).
pub fn with_capacity(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    if len >= HUGE_MIN {
        let room = v.spare_capacity_mut();
        advise_huge(room.as_ptr() as usize, room.len());
    }
    v
}

/// `len` zero bytes, mapped with huge pages where the OS allows (see the module).
pub fn zeroed(len: usize) -> Vec<u8> {
    let v = std::vec![0u8; len];
    if len >= HUGE_MIN {
        advise_huge(v.as_ptr() as usize, v.len());
    }
    v
}

/// Advises the 2 MiB-aligned stretch inside the `len` bytes at `start` (one live allocation of
/// the caller's) to be mapped with huge pages.
#[cfg(target_os = "linux")]
fn advise_huge(start: usize, len: usize) {
    const HUGE: usize = 2 << 20;
    let first = start.next_multiple_of(HUGE);
    let end = (start + len) / HUGE * HUGE;
    if end > first {
        // SAFETY: [first, end) lies inside the caller's allocation, which lives for the call.
        // MADV_HUGEPAGE changes only how the kernel may map those pages, never their contents
        // or who may access them, so no reference is invalidated; its result is ignored.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_start: usize, _len: usize) {}
