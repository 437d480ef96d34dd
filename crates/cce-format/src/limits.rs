//! Per-arch limits, the reduce packet-size rule and the NC-v1 dtype gate (study §4.3, §7).

use crate::dtype::SdmaDtype;
use crate::error::FormatError;

/// The arches the study knows (v2 Sunda / Trn1, v3 Cayman / Trn2, v4 Mariana / Trn3).
pub const KNOWN_ARCHS: [u32; 3] = [2, 3, 4];

/// `aws_hal_get_sdma_max_cce_elements` @0x44be60 (HIGH): 1024 on arch 2, 2048 on 3 and 4,
/// anything else asserts (line 0x2C).
pub fn max_cce_elements(arch: u32) -> Result<u32, FormatError> {
    match arch {
        2 => Ok(0x400),
        3 | 4 => Ok(0x800),
        _ => Err(FormatError::UnsupportedArch(arch)),
    }
}

/// Whether `num_dests > 1` (replication) and the EXT combo are available: arch > 2 only
/// (study §4.3, §5.1, HIGH).
pub const fn replication_allowed(arch: u32) -> bool {
    arch > 2
}

/// Number of QoS priority classes (0..=4).
pub const PRIORITY_CLASSES: usize = 5;

/// `nrt_gconf()->cc_cce_reduce_prio_pkt_size[5]`: the per-priority cap in bytes, 0 = no cap.
/// The runtime's defaults are unknown (GAPS.md §10); [`PrioCaps::default`] is MODEL: 64 KiB for
/// every class, the public collective DMA packet maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioCaps(pub [u32; PRIORITY_CLASSES]);

/// The MODEL default cap (64 KiB).
pub const DEFAULT_PRIO_CAP: u32 = 65_536;

impl Default for PrioCaps {
    fn default() -> Self {
        PrioCaps([DEFAULT_PRIO_CAP; PRIORITY_CLASSES])
    }
}

impl PrioCaps {
    /// The same caps with class `prio` set to `cap` (bytes, 0 = no cap). A class outside 0..=4
    /// changes nothing; [`reduce_packet_size`] then reports it.
    pub fn with_cap(mut self, prio: u32, cap: u32) -> Self {
        if let Some(slot) = self.0.get_mut(prio as usize) {
            *slot = cap;
        }
        self
    }
}

/// `encd_get_cce_reduce_packet_size` @0x2396f0 (HIGH): `prio > 4` asserts (line 0x1202); a
/// dtype whose `sdma_data_type_size` is 0 (fp32r, invalid) asserts (line 0x1204); else
/// `min(size · elems, cap)` (when the cap is non-zero) rounded down to 32 bytes.
pub fn reduce_packet_size(dtype: SdmaDtype, elem_count: u64, prio: u32, caps: &PrioCaps) -> Result<u64, FormatError> {
    if prio > 4 {
        return Err(FormatError::PriorityClass(prio));
    }
    let cap = caps.0[prio as usize] as u64;
    let dsz = dtype.bytes() as u64;
    if dsz == 0 {
        return Err(FormatError::ZeroSizeDtype(dtype.name()));
    }
    let want = dsz.checked_mul(elem_count).ok_or(FormatError::SizeOverflow { elems: elem_count, bytes: dsz })?;
    let pkt = if cap != 0 && want > cap { cap } else { want };
    Ok(pkt & !0x1F)
}

/// `has_valid_dma_cce_inout_dtype_nc_v1` @0x280820 (HIGH): without compute, always valid;
/// with compute, in and out must both be in the 32-bit band {int32, uint32, fp32, fp32r}
/// (values 8..=11) or both outside it. Takes the raw values the runtime takes, with its `u8`
/// wrap-around band test.
pub fn dtype_gate_nc_v1(compute_op: bool, in_dt: u32, out_dt: u32) -> bool {
    if !compute_op {
        return true;
    }
    let in_band = (in_dt as u8).wrapping_sub(8) <= 3;
    let out_band = (out_dt as u8).wrapping_sub(8) <= 3;
    in_band == out_band
}

/// Largest number of sources in one CCE packet (`cce_info.num_sources`, `scale[32]`; study §4.1).
/// The one definition: `packet`, `cce-numerics` and the host re-export or use this.
pub const MAX_SOURCES: usize = 32;

/// Most queues (rings) one DMA engine serves (public Neuron docs: up to 16 rings per engine).
/// The one definition: the ring dump format and `cce-engine` re-export it.
pub const MAX_QUEUES: usize = 16;
