//! Memory: the [`Memory`] trait and [`PagedMemory`], sparse regions of 1 MiB pages.

use std::collections::BTreeMap;

/// Why an access failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// The range is not inside one region.
    #[error("address range 0x{addr:x}+{len} is outside every memory region")]
    OutOfBounds {
        /// Start.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// The range wraps past 2^64.
    #[error("address range 0x{addr:x}+{len} overflows 64 bits")]
    Overflow {
        /// Start.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// An empty region.
    #[error("region 0x{base:x}+{len} is empty")]
    Region {
        /// Base.
        base: u64,
        /// Length.
        len: u64,
    },
    /// A region that overlaps one already mapped.
    #[error("region 0x{base:x}+{len} overlaps the region 0x{other_base:x}+{other_len} already mapped")]
    Overlap {
        /// Base.
        base: u64,
        /// Length.
        len: u64,
        /// Base of the region it overlaps.
        other_base: u64,
        /// Length of the region it overlaps.
        other_len: u64,
    },
    /// A write to memory the engine may only read (a [`crate::HostMemory`] borrowed region).
    #[error("region 0x{base:x} is read-only (the caller's buffer)")]
    ReadOnly {
        /// Base of the region.
        base: u64,
    },
    /// The regions would exceed the memory budget.
    #[error("{want} bytes of memory exceed the budget of {budget} bytes")]
    Budget {
        /// Bytes asked for in all.
        want: u64,
        /// The limit.
        budget: u64,
    },
}

/// The work [`Memory::with_views`] runs: `(sources, destination)`.
pub type ViewFn<'a> = dyn FnMut(&[&[u8]], &mut [u8]) + 'a;

/// Byte-addressed memory with bounds-checked reads and writes.
pub trait Memory {
    /// Checks that `[addr, addr + len)` lies in one region.
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError>;
    /// Copies `buf.len()` bytes at `addr` into `buf`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError>;
    /// Writes `data` at `addr`.
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError>;
    /// Bytes from `addr` that are contiguous in storage (to the end of a page or region);
    /// 0 where nothing is mapped.
    fn contiguous(&self, addr: u64) -> u64;
    /// Bytes from `addr` to the end of its region; 0 where nothing is mapped.
    fn remaining(&self, addr: u64) -> u64;
    /// A view of `len` contiguous bytes at `addr`, if they are contiguous in storage.
    fn view(&self, addr: u64, len: usize) -> Option<&[u8]>;
    /// Runs `f(sources, dst)` with views of the source ranges and a mutable view of the
    /// destination range, without copying, when storage allows (every range contiguous, the
    /// destination sharing no storage with a source). Returns `Ok(false)` and does nothing when
    /// it cannot; the caller then copies.
    fn with_views(&mut self, srcs: &[(u64, usize)], dst: (u64, usize), f: &mut ViewFn<'_>) -> Result<bool, MemError> {
        let _ = (srcs, dst, f);
        Ok(false)
    }
}

fn end(addr: u64, len: u64) -> Result<u64, MemError> {
    addr.checked_add(len).ok_or(MemError::Overflow { addr, len })
}

/// Page size of [`PagedMemory`]: 16 MiB, so a kernel call covers megabytes at a time.
pub const PAGE: u64 = 1 << 24;

struct Region {
    len: u64,
    pages: Vec<Box<[u8]>>,
}

/// Sparse memory: regions at arbitrary bases, each a run of 16 MiB pages (zero-filled through
/// the allocator, so untouched pages cost no physical memory). A budget caps the total before
/// anything is allocated.
pub struct PagedMemory {
    regions: BTreeMap<u64, Region>,
    budget: u64,
    used: u64,
}

impl Default for PagedMemory {
    fn default() -> Self {
        Self::new(Self::DEFAULT_BUDGET)
    }
}

impl PagedMemory {
    /// The default budget: 16 GiB (MODEL; the development machines have 24 GiB).
    pub const DEFAULT_BUDGET: u64 = 16 << 30;

    /// Empty memory with a budget in bytes.
    pub fn new(budget: u64) -> Self {
        PagedMemory { regions: BTreeMap::new(), budget, used: 0 }
    }

    /// Bytes in all regions.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Whether a region of `len` bytes would fit the budget (checked before allocating).
    pub fn fits(&self, len: u64) -> Result<(), MemError> {
        let want = self.used.saturating_add(len);
        if want > self.budget { Err(MemError::Budget { want, budget: self.budget }) } else { Ok(()) }
    }

    /// Maps `len` zero bytes at `base`. Refused when empty, overlapping, wrapping or over budget.
    pub fn add_region(&mut self, base: u64, len: u64) -> Result<(), MemError> {
        let e = end(base, len)?;
        if len == 0 {
            return Err(MemError::Region { base, len });
        }
        if let Some((b, r)) = self.regions.range(..e).next_back() {
            if b + r.len > base {
                return Err(MemError::Overlap { base, len, other_base: *b, other_len: r.len });
            }
        }
        self.fits(len)?;
        let pages = len.div_ceil(PAGE);
        let mut v = Vec::with_capacity(pages as usize);
        for i in 0..pages {
            let size = (len - i * PAGE).min(PAGE) as usize;
            v.push(cce_numerics::buffer::zeroed(size).into_boxed_slice());
        }
        self.regions.insert(base, Region { len, pages: v });
        self.used += len;
        Ok(())
    }

    /// [`add_region`](Self::add_region), then touches every page, so the host OS's first-touch
    /// faults happen now rather than during a run (device memory is resident).
    pub fn add_resident_region(&mut self, base: u64, len: u64) -> Result<(), MemError> {
        self.add_region(base, len)?;
        if let Some(r) = self.regions.get_mut(&base) {
            for p in &mut r.pages {
                p.fill(0);
            }
        }
        Ok(())
    }

    /// The regions as (base, len).
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.regions.iter().map(|(b, r)| (*b, r.len))
    }

    fn region(&self, addr: u64, len: u64) -> Result<(u64, &Region), MemError> {
        let e = end(addr, len)?;
        match self.regions.range(..=addr).next_back() {
            Some((b, r)) if e <= b + r.len => Ok((*b, r)),
            _ => Err(MemError::OutOfBounds { addr, len }),
        }
    }

    fn base_of(&self, addr: u64, len: u64) -> Result<u64, MemError> {
        self.region(addr, len).map(|(b, _)| b)
    }
}

impl Memory for PagedMemory {
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        self.region(addr, len).map(drop)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let (base, r) = self.region(addr, buf.len() as u64)?;
        let mut off = addr - base;
        let mut done = 0;
        while done < buf.len() {
            let page = &r.pages[(off / PAGE) as usize];
            let at = (off % PAGE) as usize;
            let n = (page.len() - at).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&page[at..at + n]);
            done += n;
            off += n as u64;
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let base = self.base_of(addr, data.len() as u64)?;
        let r = self.regions.get_mut(&base).ok_or(MemError::OutOfBounds { addr, len: data.len() as u64 })?;
        let mut off = addr - base;
        let mut done = 0;
        while done < data.len() {
            let page = &mut r.pages[(off / PAGE) as usize];
            let at = (off % PAGE) as usize;
            let n = (page.len() - at).min(data.len() - done);
            page[at..at + n].copy_from_slice(&data[done..done + n]);
            done += n;
            off += n as u64;
        }
        Ok(())
    }

    fn contiguous(&self, addr: u64) -> u64 {
        match self.region(addr, 1) {
            Ok((base, r)) => {
                let off = addr - base;
                (r.pages[(off / PAGE) as usize].len() as u64) - off % PAGE
            }
            Err(_) => 0,
        }
    }

    fn remaining(&self, addr: u64) -> u64 {
        self.region(addr, 1).map_or(0, |(base, r)| base + r.len - addr)
    }

    fn view(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (base, r) = self.region(addr, len as u64).ok()?;
        let off = addr - base;
        let page = &r.pages[(off / PAGE) as usize];
        let at = (off % PAGE) as usize;
        page.get(at..at + len)
    }

    fn with_views(&mut self, srcs: &[(u64, usize)], dst: (u64, usize), f: &mut ViewFn<'_>) -> Result<bool, MemError> {
        let (dbase, _) = self.region(dst.0, dst.1 as u64)?;
        let doff = dst.0 - dbase;
        let dpage = (doff / PAGE) as usize;
        let dat = (doff % PAGE) as usize;
        // Every range must sit in one page, and no source may share the destination's page.
        for &(a, l) in srcs {
            let (b, _) = self.region(a, l as u64)?;
            if b == dbase && (a - b) / PAGE == dpage as u64 {
                return Ok(false);
            }
            if (a - b) % PAGE + l as u64 > PAGE {
                return Ok(false);
            }
        }
        if dat + dst.1 > PAGE as usize {
            return Ok(false);
        }
        let taken = {
            let r = self.regions.get_mut(&dbase).ok_or(MemError::OutOfBounds { addr: dst.0, len: dst.1 as u64 })?;
            std::mem::take(&mut r.pages[dpage])
        };
        let mut taken = taken;
        let views: Option<Vec<&[u8]>> = srcs.iter().map(|&(a, l)| self.view(a, l)).collect();
        let ok = match (views, taken.get_mut(dat..dat + dst.1)) {
            (Some(v), Some(out)) => {
                f(&v, out);
                true
            }
            _ => false,
        };
        if let Some(r) = self.regions.get_mut(&dbase) {
            r.pages[dpage] = taken;
        }
        Ok(ok)
    }
}

/// A flat fake for tests: one region, and a log of every write (address, length).
#[cfg(feature = "test-utils")]
pub struct FlatMemory {
    /// First address.
    pub base: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Every write, in order.
    pub writes: Vec<(u64, usize)>,
}

#[cfg(feature = "test-utils")]
impl FlatMemory {
    /// `len` zero bytes at `base`.
    pub fn new(base: u64, len: usize) -> Self {
        FlatMemory { base, bytes: vec![0; len], writes: Vec::new() }
    }

    fn range(&self, addr: u64, len: u64) -> Result<std::ops::Range<usize>, MemError> {
        let e = end(addr, len)?;
        if addr < self.base || e > self.base + self.bytes.len() as u64 {
            return Err(MemError::OutOfBounds { addr, len });
        }
        Ok((addr - self.base) as usize..(e - self.base) as usize)
    }
}

#[cfg(feature = "test-utils")]
impl Memory for FlatMemory {
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        self.range(addr, len).map(drop)
    }
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.range(addr, buf.len() as u64)?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let r = self.range(addr, data.len() as u64)?;
        self.bytes[r].copy_from_slice(data);
        self.writes.push((addr, data.len()));
        Ok(())
    }
    fn contiguous(&self, addr: u64) -> u64 {
        self.range(addr, 1).map_or(0, |r| (self.bytes.len() - r.start) as u64)
    }
    fn remaining(&self, addr: u64) -> u64 {
        self.contiguous(addr)
    }
    fn view(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.range(addr, len as u64).ok().map(|r| &self.bytes[r])
    }
}

/// Memory shared by many engines on many threads (the ranks of a collective): regions, each
/// one buffer behind its own lock. Clones are handles to the same memory. Zero-copy views lock
/// the regions they touch in address order, so two engines can never deadlock.
///
/// Mapping never holds the region map's lock while it makes bytes (so other engines' lookups
/// never wait for an allocation), and a region's length is read without its lock (so a lookup
/// never waits for an engine writing the region). Buffers of regions unmapped with
/// [`release_region`](SharedMemory::release_region) are kept, within the budget, up to
/// [`SPARE_MAX`] bytes, and while the scratch mapped plus kept stays within the most scratch
/// ever mapped at once, for [`add_region`](SharedMemory::add_region) (zeroed) and
/// [`add_scratch_region`](SharedMemory::add_scratch_region) (as they are) to reuse: a fresh
/// buffer of many MiB page-faults on every 4 KiB page it first touches, which costs the
/// engines several times what zeroing a warm buffer does.
///
/// A region may also be the caller's bytes, borrowed for `'a`
/// ([`add_borrowed`](SharedMemory::add_borrowed)): read in place, never copied, and a write
/// into it is refused ([`MemError::ReadOnly`]).
#[derive(Clone, Default)]
pub struct SharedMemory<'a> {
    inner: std::sync::Arc<Shared<'a>>,
}

/// Most bytes of unmapped buffers a [`SharedMemory`] keeps for reuse.
pub const SPARE_MAX: u64 = 1 << 30;

#[derive(Default)]
struct Shared<'a> {
    regions: std::sync::RwLock<BTreeMap<u64, SharedRegion<'a>>>,
    /// Bytes mapped, plus bytes reserved by mappings in progress.
    used: std::sync::atomic::AtomicU64,
    peak: std::sync::atomic::AtomicU64,
    budget: u64,
    /// Unmapped buffers kept for reuse; their bytes count against the budget too.
    spare: std::sync::Mutex<Vec<Box<[u8]>>>,
    spare_bytes: std::sync::atomic::AtomicU64,
    /// Bytes mapped by [`SharedMemory::add_scratch_region`].
    scratch_used: std::sync::atomic::AtomicU64,
    /// The most scratch ever mapped at once, or made by [`SharedMemory::keep_spare`]: the
    /// scratch mapped plus the buffers kept never exceed it, so reuse never makes the memory
    /// hold more than mapping alone did.
    scratch_high: std::sync::atomic::AtomicU64,
}

struct SharedBuf<'a> {
    len: u64,
    /// Mapped by `add_scratch_region`.
    scratch: bool,
    bytes: Bytes<'a>,
}

/// A region's bytes: its own buffer, or the caller's, read-only.
enum Bytes<'a> {
    Owned(std::sync::RwLock<Box<[u8]>>),
    Borrowed(&'a [u8]),
}

/// A region's bytes held for reading: its buffer's read lock, or the caller's slice.
enum ReadBytes<'g> {
    Owned(std::sync::RwLockReadGuard<'g, Box<[u8]>>),
    Borrowed(&'g [u8]),
}

impl std::ops::Deref for ReadBytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ReadBytes::Owned(g) => g,
            ReadBytes::Borrowed(b) => b,
        }
    }
}

impl<'a> SharedBuf<'a> {
    fn read(&self) -> ReadBytes<'_> {
        match &self.bytes {
            Bytes::Owned(l) => ReadBytes::Owned(l.read().unwrap_or_else(std::sync::PoisonError::into_inner)),
            Bytes::Borrowed(b) => ReadBytes::Borrowed(b),
        }
    }

    /// The buffer's write lock; a borrowed region (at `base`) is read-only.
    fn write(&self, base: u64) -> Result<std::sync::RwLockWriteGuard<'_, Box<[u8]>>, MemError> {
        match &self.bytes {
            Bytes::Owned(l) => Ok(l.write().unwrap_or_else(std::sync::PoisonError::into_inner)),
            Bytes::Borrowed(_) => Err(MemError::ReadOnly { base }),
        }
    }

    /// The region's own buffer, or `None` for a borrowed one.
    fn into_owned(self) -> Option<Box<[u8]>> {
        match self.bytes {
            Bytes::Owned(l) => Some(l.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)),
            Bytes::Borrowed(_) => None,
        }
    }
}

type SharedRegion<'a> = std::sync::Arc<SharedBuf<'a>>;

/// Buffers at least this long are touched by every host thread at once.
const TOUCH_SPLIT: usize = 8 << 20;

/// `len` zero bytes, every 4 KiB page written once: resident now, so the engine that writes
/// them later does not page-fault inside its run. A long buffer is touched by all the host's
/// threads, each its own stretch: the kernel zeroes fresh pages as they fault, and that zeroing
/// is most of the cost (docs/MODEL.md E1).
fn touched_zeros(len: usize) -> Box<[u8]> {
    let mut v = cce_numerics::buffer::zeroed(len).into_boxed_slice();
    let threads = host_threads();
    if len >= TOUCH_SPLIT && threads > 1 {
        let per = len.div_ceil(threads).next_multiple_of(4096);
        std::thread::scope(|s| {
            for part in v.chunks_mut(per) {
                s.spawn(move || touch(part));
            }
        });
    } else {
        touch(&mut v);
    }
    v
}

/// Writes a zero into every 4 KiB page of `pages` (which holds zeros).
fn touch(pages: &mut [u8]) {
    // Through black_box, so the stores of zero into zeroed memory are not optimised away.
    let pages = std::hint::black_box(pages);
    for i in (0..pages.len()).step_by(4096) {
        pages[i] = 0;
    }
}

/// The host's threads (asked once).
fn host_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<'a> SharedMemory<'a> {
    /// Empty shared memory with a budget in bytes.
    pub fn new(budget: u64) -> Self {
        SharedMemory { inner: std::sync::Arc::new(Shared { budget, ..Shared::default() }) }
    }

    /// Maps `len` zero bytes at `base` (touched: resident). Refused when empty, overlapping,
    /// wrapping or over budget, before any byte is made.
    pub fn add_region(&self, base: u64, len: u64) -> Result<(), MemError> {
        self.insert(base, len, false, true, |spare| match spare {
            Some(mut b) => {
                b.fill(0);
                b
            }
            None => touched_zeros(len as usize),
        })
    }

    /// Maps `len` bytes at `base` whose contents are unspecified until written — zeros when
    /// the buffer is fresh (touched: resident), a released buffer's old bytes when one of that
    /// length is reused — for a buffer every byte of which is written before anything reads it
    /// (a collective's scratch). Refused as [`add_region`](SharedMemory::add_region) refuses.
    pub fn add_scratch_region(&self, base: u64, len: u64) -> Result<(), MemError> {
        self.insert(base, len, true, true, |spare| spare.unwrap_or_else(|| touched_zeros(len as usize)))
    }

    /// Whether `len` more kept bytes fit [`SPARE_MAX`], the scratch high-water mark and the
    /// budget.
    fn may_keep(&self, len: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.inner;
        let kept = s.spare_bytes.load(Relaxed).saturating_add(len);
        len > 0
            && kept <= SPARE_MAX
            && kept.saturating_add(s.scratch_used.load(Relaxed)) <= s.scratch_high.load(Relaxed)
            && kept.saturating_add(s.used.load(Relaxed)) <= s.budget
    }

    /// Makes a resident buffer of `len` bytes now and keeps it for a later scratch mapping of
    /// that length (so the engine that maps it does not page-fault while it runs), counted as
    /// scratch already mapped once. False, making nothing, when it would not fit [`SPARE_MAX`]
    /// or the budget.
    pub fn keep_spare(&self, len: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.inner;
        let kept = s.spare_bytes.load(Relaxed).saturating_add(len);
        if len == 0 || kept > SPARE_MAX || kept.saturating_add(s.used.load(Relaxed)) > s.budget {
            return false;
        }
        s.scratch_high.fetch_max(kept.saturating_add(s.scratch_used.load(Relaxed)), Relaxed);
        let b = touched_zeros(len as usize);
        lock(&s.spare).push(b);
        s.spare_bytes.fetch_add(len, Relaxed);
        self.note_peak();
        true
    }

    /// Maps `data` at `base` as a region, taking the buffer as it is (no copy). Refused as
    /// [`add_region`](SharedMemory::add_region) refuses.
    pub fn add_region_from(&self, base: u64, data: Vec<u8>) -> Result<(), MemError> {
        self.insert(base, data.len() as u64, false, false, |_| data.into_boxed_slice())
    }

    /// Maps the caller's `data` at `base`, read in place for as long as the memory lives: a
    /// write into it is refused ([`MemError::ReadOnly`]). Its bytes count as mapped, as a copy's
    /// would. Refused as [`add_region`](SharedMemory::add_region) refuses.
    pub fn add_borrowed(&self, base: u64, data: &'a [u8]) -> Result<(), MemError> {
        self.insert_bytes(base, data.len() as u64, false, false, |_| Bytes::Borrowed(data))
    }

    /// Reserves `len` bytes of the budget (dropping kept buffers when they stand in the way).
    fn reserve(&self, len: u64) -> Result<(), MemError> {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.inner;
        loop {
            let used = s.used.load(Relaxed);
            let want = used.saturating_add(len);
            if want.saturating_add(s.spare_bytes.load(Relaxed)) > s.budget {
                if want > s.budget {
                    return Err(MemError::Budget { want, budget: s.budget });
                }
                // Room once the kept buffers are gone.
                let dropped: Vec<Box<[u8]>> = std::mem::take(&mut *lock(&s.spare));
                s.spare_bytes.fetch_sub(dropped.iter().map(|b| b.len() as u64).sum(), Relaxed);
                continue;
            }
            if s.used.compare_exchange(used, want, Relaxed, Relaxed).is_ok() {
                self.note_peak();
                return Ok(());
            }
        }
    }

    /// Records the bytes held now — mapped, reserved and kept — if they are the most so far.
    fn note_peak(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.inner;
        s.peak.fetch_max(s.used.load(Relaxed).saturating_add(s.spare_bytes.load(Relaxed)), Relaxed);
    }

    /// Drops kept buffers while `len` more bytes of fresh scratch would take the scratch
    /// mapped plus kept over its high-water mark.
    fn evict_for(&self, len: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.inner;
        let high = s.scratch_high.load(Relaxed);
        let mut spare = lock(&s.spare);
        while s.scratch_used.load(Relaxed).saturating_add(s.spare_bytes.load(Relaxed)).saturating_add(len) > high {
            let Some(b) = spare.pop() else { break };
            s.spare_bytes.fetch_sub(b.len() as u64, Relaxed);
        }
    }

    /// A kept buffer of exactly `len` bytes, if there is one.
    fn take_spare(&self, len: u64) -> Option<Box<[u8]>> {
        let mut spare = lock(&self.inner.spare);
        let i = spare.iter().position(|b| b.len() as u64 == len)?;
        let b = spare.swap_remove(i);
        self.inner.spare_bytes.fetch_sub(len, std::sync::atomic::Ordering::Relaxed);
        Some(b)
    }

    /// Checks a region of `len` bytes at `base` against the map and the budget, and only then
    /// makes its bytes (`bytes` gets a kept buffer of that length when `reuse` and there is
    /// one), outside the map's lock.
    fn insert(
        &self,
        base: u64,
        len: u64,
        scratch: bool,
        reuse: bool,
        bytes: impl FnOnce(Option<Box<[u8]>>) -> Box<[u8]>,
    ) -> Result<(), MemError> {
        self.insert_bytes(base, len, scratch, reuse, |spare| Bytes::Owned(std::sync::RwLock::new(bytes(spare))))
    }

    /// [`insert`](SharedMemory::insert), the region's bytes of either kind.
    fn insert_bytes(
        &self,
        base: u64,
        len: u64,
        scratch: bool,
        reuse: bool,
        bytes: impl FnOnce(Option<Box<[u8]>>) -> Bytes<'a>,
    ) -> Result<(), MemError> {
        use std::sync::atomic::Ordering::Relaxed;
        let e = end(base, len)?;
        if len == 0 {
            return Err(MemError::Region { base, len });
        }
        let overlap = |map: &BTreeMap<u64, SharedRegion<'a>>| match map.range(..e).next_back() {
            Some((b, r)) if b + r.len > base => Err(MemError::Overlap { base, len, other_base: *b, other_len: r.len }),
            _ => Ok(()),
        };
        overlap(&self.inner.regions.read().unwrap_or_else(std::sync::PoisonError::into_inner))?;
        // A kept buffer leaves the kept bytes before its bytes join the mapped ones, so no
        // byte is counted twice.
        let spare = if reuse { self.take_spare(len) } else { None };
        if let Err(err) = self.reserve(len) {
            if let Some(b) = spare {
                lock(&self.inner.spare).push(b);
                self.inner.spare_bytes.fetch_add(len, Relaxed);
            }
            return Err(err);
        }
        if scratch && spare.is_none() {
            self.evict_for(len);
        }
        let region = std::sync::Arc::new(SharedBuf { len, scratch, bytes: bytes(spare) });
        let mut map = self.inner.regions.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(err) = overlap(&map) {
            // Mapped meanwhile by another thread.
            self.inner.used.fetch_sub(len, Relaxed);
            return Err(err);
        }
        map.insert(base, region);
        if scratch {
            let now = self.inner.scratch_used.fetch_add(len, Relaxed).saturating_add(len);
            self.inner.scratch_high.fetch_max(now, Relaxed);
        }
        Ok(())
    }

    fn remove(&self, base: u64) -> Option<SharedRegion<'a>> {
        let mut map = self.inner.regions.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let r = map.remove(&base)?;
        drop(map);
        self.inner.used.fetch_sub(r.len, std::sync::atomic::Ordering::Relaxed);
        if r.scratch {
            self.inner.scratch_used.fetch_sub(r.len, std::sync::atomic::Ordering::Relaxed);
        }
        Some(r)
    }

    /// The length of the region that starts at `base`, or `None` when no region starts there.
    pub fn region_len(&self, base: u64) -> Option<u64> {
        self.inner.regions.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&base).map(|r| r.len)
    }

    /// Unmaps the region that starts at `base` and returns its bytes (no copy), or `None` when
    /// no region starts there. A reader that still holds the region (a view in progress on
    /// another thread) keeps its bytes alive until it is done; the bytes are then copied out,
    /// as a borrowed region's are.
    pub fn take_region(&self, base: u64) -> Option<Vec<u8>> {
        let r = self.remove(base)?;
        Some(match std::sync::Arc::try_unwrap(r) {
            Ok(SharedBuf { bytes: Bytes::Owned(l), .. }) => {
                l.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).into_vec()
            }
            Ok(region) => region.read().to_vec(),
            Err(shared) => shared.read().to_vec(),
        })
    }

    /// Unmaps the region that starts at `base` (false when none does), keeping its buffer for
    /// a later [`add_region`](SharedMemory::add_region) of the same length while the kept
    /// bytes stay within [`SPARE_MAX`] and the budget, and the scratch mapped plus kept within
    /// the most scratch ever mapped at once.
    pub fn release_region(&self, base: u64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(r) = self.remove(base) else { return false };
        let Ok(region) = std::sync::Arc::try_unwrap(r) else { return true };
        let len = region.len;
        let Some(bytes) = region.into_owned() else { return true };
        if self.may_keep(len) {
            lock(&self.inner.spare).push(bytes);
            self.inner.spare_bytes.fetch_add(len, Relaxed);
        }
        true
    }

    /// Bytes mapped now.
    pub fn used(&self) -> u64 {
        self.inner.used.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The most bytes ever held at once: mapped, and kept for reuse.
    pub fn peak(&self) -> u64 {
        self.inner.peak.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn region(&self, addr: u64, len: u64) -> Result<(u64, SharedRegion<'a>), MemError> {
        let e = end(addr, len)?;
        let map = self.inner.regions.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        match map.range(..=addr).next_back() {
            Some((b, r)) if e <= b + r.len => Ok((*b, r.clone())),
            _ => Err(MemError::OutOfBounds { addr, len }),
        }
    }
}

impl Memory for SharedMemory<'_> {
    fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        self.region(addr, len).map(drop)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let (b, r) = self.region(addr, buf.len() as u64)?;
        let g = r.read();
        let at = (addr - b) as usize;
        buf.copy_from_slice(&g[at..at + buf.len()]);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let (b, r) = self.region(addr, data.len() as u64)?;
        let mut g = r.write(b)?;
        let at = (addr - b) as usize;
        g[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn contiguous(&self, addr: u64) -> u64 {
        self.remaining(addr)
    }

    fn remaining(&self, addr: u64) -> u64 {
        self.region(addr, 1).map_or(0, |(b, r)| b + r.len - addr)
    }

    fn view(&self, _addr: u64, _len: usize) -> Option<&[u8]> {
        None
    }

    fn with_views(&mut self, srcs: &[(u64, usize)], dst: (u64, usize), f: &mut ViewFn<'_>) -> Result<bool, MemError> {
        let (db, dr) = self.region(dst.0, dst.1 as u64)?;
        let mut regions: Vec<(u64, SharedRegion<'_>)> = Vec::with_capacity(srcs.len());
        for &(a, l) in srcs {
            let (b, r) = self.region(a, l as u64)?;
            if b == db {
                return Ok(false); // a source in the destination's buffer: the caller copies
            }
            if !regions.iter().any(|(x, _)| *x == b) {
                regions.push((b, r));
            }
        }
        // Lock in address order (destination included) so engines on other threads cannot
        // form a cycle.
        let mut order: Vec<u64> = regions.iter().map(|(b, _)| *b).chain([db]).collect();
        order.sort_unstable();
        let mut reads = Vec::new();
        let mut write = None;
        for b in order {
            if b == db {
                write = Some(dr.write(db)?);
            } else if let Some((_, r)) = regions.iter().find(|(x, _)| *x == b) {
                reads.push((b, r.read()));
            }
        }
        let Some(mut out) = write else { return Ok(false) };
        let views: Option<Vec<&[u8]>> = srcs
            .iter()
            .map(|&(a, l)| {
                let (b, g) = reads.iter().find(|(b, g)| a >= *b && a - *b + l as u64 <= g.len() as u64)?;
                let at = (a - b) as usize;
                g.get(at..at + l)
            })
            .collect();
        let at = (dst.0 - db) as usize;
        match (views, out.get_mut(at..at + dst.1)) {
            (Some(v), Some(o)) => {
                f(&v, o);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
