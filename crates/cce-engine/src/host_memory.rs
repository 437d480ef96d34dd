//! [`HostMemory`]: a [`Memory`] over the caller's own buffers, for running a job on arrays a
//! program already holds (the reduce path, the Python package) without copying them in.
//!
//! Guarantees:
//! - A **borrowed** region is the caller's slice, read in place and never written: a write to
//!   it is [`MemError::ReadOnly`] (and, since a faulting packet writes nothing, the engine checks
//!   before writing). A **writable borrowed** region is the caller's output buffer, written in
//!   place. An **owned** region is zero-filled memory the engine writes (destinations, rings);
//!   [`HostMemory::take`] moves it out without a copy.
//! - Regions never overlap and never wrap the 64-bit address space; owned bytes are counted
//!   against a budget before they are allocated.
//! - Each region is one contiguous slice, so every range inside a region is viewable, and
//!   [`Memory::with_views`] works whenever the destination region is owned and no source lies
//!   in it.

use std::collections::BTreeMap;

use crate::memory::{MemError, Memory, ViewFn};

enum Region<'a> {
    Borrowed(&'a [u8]),
    BorrowedMut(&'a mut [u8]),
    Owned(Vec<u8>),
}

impl Region<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Region::Borrowed(b) => b,
            Region::BorrowedMut(b) => b,
            Region::Owned(v) => v,
        }
    }

    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Region::Borrowed(_) => None,
            Region::BorrowedMut(b) => Some(b),
            Region::Owned(v) => Some(v),
        }
    }
}

/// Memory whose regions are the caller's slices (read-only) or owned zeroed buffers.
pub struct HostMemory<'a> {
    regions: BTreeMap<u64, Region<'a>>,
    budget: u64,
    used: u64,
}

impl<'a> HostMemory<'a> {
    /// No regions; at most `budget` owned bytes.
    pub fn new(budget: u64) -> Self {
        HostMemory { regions: BTreeMap::new(), budget, used: 0 }
    }

    fn insert(&mut self, base: u64, len: u64, region: Region<'a>) -> Result<(), MemError> {
        let e = base.checked_add(len).ok_or(MemError::Overflow { addr: base, len })?;
        if len == 0 {
            return Err(MemError::Region { base, len });
        }
        if let Some((b, r)) = self.regions.range(..e).next_back() {
            let rlen = r.bytes().len() as u64;
            if b + rlen > base {
                return Err(MemError::Overlap { base, len, other_base: *b, other_len: rlen });
            }
        }
        self.regions.insert(base, region);
        Ok(())
    }

    /// Maps the caller's `bytes` at `base`, read in place.
    pub fn add_borrowed(&mut self, base: u64, bytes: &'a [u8]) -> Result<(), MemError> {
        self.insert(base, bytes.len() as u64, Region::Borrowed(bytes))
    }

    /// Maps the caller's writable `bytes` at `base`: the engine writes its results there in
    /// place (a destination the caller allocated).
    pub fn add_borrowed_mut(&mut self, base: u64, bytes: &'a mut [u8]) -> Result<(), MemError> {
        self.insert(base, bytes.len() as u64, Region::BorrowedMut(bytes))
    }

    /// Maps `len` zero bytes at `base`, owned (counted against the budget first).
    pub fn add_region(&mut self, base: u64, len: u64) -> Result<(), MemError> {
        let want = self.used.saturating_add(len);
        if want > self.budget {
            return Err(MemError::Budget { want, budget: self.budget });
        }
        let len_usize = usize::try_from(len).map_err(|_| MemError::Budget { want, budget: self.budget })?;
        self.insert(base, len, Region::Owned(cce_numerics::buffer::zeroed(len_usize)))?;
        self.used = want;
        Ok(())
    }

    /// [`add_region`](Self::add_region), then touches every page, so the host OS's first-touch
    /// faults happen now rather than during a run (device memory is resident).
    pub fn add_resident_region(&mut self, base: u64, len: u64) -> Result<(), MemError> {
        self.add_region(base, len)?;
        if let Some(Region::Owned(v)) = self.regions.get_mut(&base) {
            // An opaque zero per 4 KiB: stores the optimiser cannot drop as redundant.
            for page in v.chunks_mut(4096) {
                page[0] = std::hint::black_box(0);
            }
        }
        Ok(())
    }

    /// Moves the owned region at `base` out (None for a borrowed or unmapped base).
    pub fn take(&mut self, base: u64) -> Option<Vec<u8>> {
        match self.regions.remove(&base)? {
            Region::Owned(v) => {
                self.used -= v.len() as u64;
                Some(v)
            }
            borrowed => {
                self.regions.insert(base, borrowed);
                None
            }
        }
    }

    fn region(&self, addr: u64, len: u64) -> Result<(u64, &Region<'a>), MemError> {
        let e = addr.checked_add(len).ok_or(MemError::Overflow { addr, len })?;
        match self.regions.range(..=addr).next_back() {
            Some((b, r)) if e <= b + r.bytes().len() as u64 => Ok((*b, r)),
            _ => Err(MemError::OutOfBounds { addr, len }),
        }
    }

    fn range(&self, addr: u64, len: usize) -> Result<&[u8], MemError> {
        let (b, r) = self.region(addr, len as u64)?;
        let at = (addr - b) as usize;
        Ok(&r.bytes()[at..at + len])
    }
}

impl Memory for HostMemory<'_> {
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        self.region(addr, len).map(drop)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        buf.copy_from_slice(self.range(addr, buf.len())?);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let (b, _) = self.region(addr, data.len() as u64)?;
        match self.regions.get_mut(&b).and_then(Region::bytes_mut) {
            Some(v) => {
                let at = (addr - b) as usize;
                v[at..at + data.len()].copy_from_slice(data);
                Ok(())
            }
            None => Err(MemError::ReadOnly { base: b }),
        }
    }

    fn contiguous(&self, addr: u64) -> u64 {
        self.remaining(addr)
    }

    fn remaining(&self, addr: u64) -> u64 {
        self.region(addr, 1).map_or(0, |(b, r)| b + r.bytes().len() as u64 - addr)
    }

    fn view(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.range(addr, len).ok()
    }

    fn with_views(&mut self, srcs: &[(u64, usize)], dst: (u64, usize), f: &mut ViewFn<'_>) -> Result<bool, MemError> {
        let (dbase, _) = self.region(dst.0, dst.1 as u64)?;
        for &(a, l) in srcs {
            if self.region(a, l as u64)?.0 == dbase {
                return Ok(false);
            }
        }
        // Take the destination out of the map so the sources can be borrowed beside it.
        let Some(mut out) = self.regions.remove(&dbase) else {
            return Err(MemError::OutOfBounds { addr: dst.0, len: dst.1 as u64 });
        };
        let views: Result<Vec<&[u8]>, MemError> = srcs.iter().map(|&(a, l)| self.range(a, l)).collect();
        let at = (dst.0 - dbase) as usize;
        let result = match (views, out.bytes_mut()) {
            (Ok(v), Some(o)) => {
                f(&v, &mut o[at..at + dst.1]);
                Ok(true)
            }
            (Err(e), _) => Err(e),
            (_, None) => Err(MemError::ReadOnly { base: dbase }),
        };
        self.regions.insert(dbase, out);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_is_read_in_place_and_never_written() {
        let src = [1u8, 2, 3, 4];
        let mut m = HostMemory::new(1 << 20);
        m.add_borrowed(0x1000, &src).unwrap();
        m.add_region(0x2000, 4).unwrap();
        assert_eq!(m.view(0x1001, 2), Some(&src[1..3]));
        assert_eq!(m.write(0x1000, &[9]), Err(MemError::ReadOnly { base: 0x1000 }));
        m.write(0x2001, &[7, 8]).unwrap();
        let mut f = |s: &[&[u8]], d: &mut [u8]| d.copy_from_slice(s[0]);
        assert!(m.with_views(&[(0x1000, 4)], (0x2000, 4), &mut f).unwrap());
        assert_eq!(m.take(0x2000), Some(vec![1, 2, 3, 4]));
        assert_eq!(m.take(0x1000), None, "a borrowed region is not taken");
        assert!(m.check(0x1000, 4).is_ok());
        // A writable borrowed destination receives the results in place.
        let mut out = [0u8; 4];
        m.add_borrowed_mut(0x3000, &mut out).unwrap();
        assert!(m.with_views(&[(0x1000, 4)], (0x3000, 4), &mut f).unwrap());
        m.write(0x3000, &[9]).unwrap();
        assert_eq!(m.take(0x3000), None);
        drop(m);
        assert_eq!(out, [9, 2, 3, 4]);
    }

    #[test]
    fn overlaps_budget_and_bounds_are_refused() {
        let src = [0u8; 16];
        let mut m = HostMemory::new(32);
        m.add_borrowed(0x100, &src).unwrap();
        assert!(matches!(m.add_region(0x108, 4), Err(MemError::Overlap { other_base: 0x100, .. })));
        assert!(matches!(m.add_region(0x1000, 33), Err(MemError::Budget { .. })));
        assert!(matches!(m.add_borrowed(u64::MAX - 4, &src), Err(MemError::Overflow { .. })));
        let mut buf = [0u8; 4];
        assert!(matches!(m.read(0x10e, &mut buf), Err(MemError::OutOfBounds { .. })));
        let mut f = |_: &[&[u8]], _: &mut [u8]| {};
        m.add_region(0x200, 8).unwrap();
        assert!(!m.with_views(&[(0x200, 4)], (0x204, 4), &mut f).unwrap(), "a source inside the destination");
    }
}
