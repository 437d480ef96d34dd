//! Building the rings of one reduce, as `cce build` does: [`BuildParams`] (the flags, as typed
//! fields) → a `cce-host` request → the planned program → one queue's rings ([`Built`]).
//!
//! ## Guarantees
//! - A refused request builds nothing: every option is checked, and the host plans the whole
//!   program (sizes first), before any ring byte is written.
//! - [`Built`] holds the rings only; the dump bytes, the summary and the JSON are made from
//!   them on demand, so a large program is not rendered unless asked for.

use std::fmt;

use cce_format::limits::PrioCaps;
use cce_format::packet::GceMode;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{
    HostError, MinMaxConstant, ReduceDtypes, ReduceRequest, Rings, Rounding, broadcast_scales, check_options, plan,
};

use crate::error::{ApiError, invalid_value};
use crate::listing::QueueListing;
use crate::params::{BuildOp, ClampConstant, FmaSelectors, RoundingMode};
use crate::values;

/// The flags of `cce build`, as typed fields.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildParams {
    /// NeuronCore arch (1..=4; replication needs 3 or 4).
    pub arch: u64,
    /// A reduce op (`copy` and `transpose` reach the dispatcher and are refused), or a gradient
    /// packet program.
    pub op: BuildOp,
    /// Source dtype.
    pub in_dt: SdmaDtype,
    /// Accumulate dtype.
    pub accum_dt: SdmaDtype,
    /// Output dtype.
    pub out_dt: SdmaDtype,
    /// Elements per source.
    pub elems: u64,
    /// Source addresses.
    pub srcs: Vec<u64>,
    /// Destination addresses; more than one replicates (arch ≥ 3).
    pub dsts: Vec<u64>,
    /// Scales, clamp constant, rounding.
    pub opts: OpOptions,
    /// QoS priority class (0..=4).
    pub prio: u64,
    /// This class's cap in bytes (0 = none; the MODEL default when `None`).
    pub cap: Option<u64>,
    /// Build without a cce_info (an FMA then fails as the runtime's assert does).
    pub no_cce_info: bool,
    /// FMA operand selectors `a,b,c` (by default input, scale, stored).
    pub selectors: FmaSelectors,
    /// Ring size in descriptors (a multiple of 16, at least 32); the smallest that fits when
    /// `None`.
    pub ring_size: Option<u64>,
    /// Queue id written to the dump (0..=15).
    pub queue: u64,
    /// The first packet's compression header: required by `gce-compress` / `gce-decompress`;
    /// with a reduce op, it compresses the result (the §9.3 EXT + GCE combo).
    pub header: Option<u64>,
}

impl BuildParams {
    /// An `op` reduce of `elems` elements from `srcs` to `dsts` with the defaults of
    /// `cce build`: arch 3, no scales or constant, RNE, priority 0, the MODEL cap, a cce_info,
    /// the default selectors, the smallest ring, queue 0.
    pub fn new(
        op: BuildOp,
        (in_dt, accum_dt, out_dt): (SdmaDtype, SdmaDtype, SdmaDtype),
        elems: u64,
        srcs: Vec<u64>,
        dsts: Vec<u64>,
    ) -> Self {
        BuildParams {
            arch: 3,
            op,
            in_dt,
            accum_dt,
            out_dt,
            elems,
            srcs,
            dsts,
            opts: OpOptions::default(),
            prio: 0,
            cap: None,
            no_cce_info: false,
            selectors: FmaSelectors::default(),
            ring_size: None,
            queue: 0,
            header: None,
        }
    }
}

/// The op options `cce build` and `cce reduce` share.
#[derive(Clone, Debug, PartialEq)]
pub struct OpOptions {
    /// FMA scales: none (1.0 each), one for every source, or one per source.
    pub scales: Vec<f32>,
    /// The MIN/MAX clamp constant: a number, or `0x` bits of `const_dtype`.
    pub constant: Option<ClampConstant>,
    /// The clamp constant's dtype (i8 u8 i16 u16 bf16 fp16); the in dtype when `None`.
    pub const_dtype: Option<SdmaDtype>,
    /// RNE, or stochastic rounding seeded by `seed`.
    pub rounding: RoundingMode,
    /// The stochastic-rounding seed (32 bits; 0 when `None`); only with `sr`.
    pub seed: Option<u64>,
}

impl Default for OpOptions {
    /// No scales, no constant, RNE.
    fn default() -> Self {
        OpOptions { scales: Vec::new(), constant: None, const_dtype: None, rounding: RoundingMode::Rne, seed: None }
    }
}

impl OpOptions {
    /// The rounding the options ask for (the seed checked to fit 32 bits, and refused with RNE).
    pub fn rounding(&self) -> Result<Rounding, ApiError> {
        let seed = self.seed.map(|s| fit32("`seed` <SEED>", s)).transpose()?;
        Ok(match self.rounding.seed(seed.map(u64::from))? {
            None => Rounding::Rne,
            Some(s) => Rounding::Stochastic { seed: s as u32 },
        })
    }

    /// Checks that `op` takes the scales and constant given ([`check_options`]).
    pub fn check(&self, op: KbinOp) -> Result<(), ApiError> {
        Ok(check_options(op, &self.scales, self.constant.as_ref().map(ClampConstant::as_str))?)
    }

    /// The clamp constant, read in its dtype (`in_dt` when none is given).
    pub fn constant(&self, in_dt: SdmaDtype) -> Result<Option<MinMaxConstant>, ApiError> {
        self.constant.as_ref().map(|c| c.in_dtype(self.const_dtype.unwrap_or(in_dt))).transpose()
    }
}

/// `v` checked to fit 32 bits, refused in the words of the CLI's argument parser; `param`
/// names the parameter as messages do (`` `seed` <SEED> ``).
pub(crate) fn fit32(param: &str, v: u64) -> Result<u32, ApiError> {
    values::fit(v, u32::MAX as u64, 32).map(|v| v as u32).map_err(|why| invalid_value(param, v, &why))
}

/// The host request `p` describes, every option checked (a gradient program is no reduce
/// request: see [`gradient_request`]).
pub fn request(p: &BuildParams) -> Result<ReduceRequest, ApiError> {
    let cap = p.cap.map(|c| fit32("`cap` <CAP>", c)).transpose()?;
    let op = p.op.kbin().ok_or_else(|| p.op.not_a_reduce())?;
    let arch = u32::try_from(p.arch).map_err(|_| ApiError::Input(format!("`arch` {} is out of range", p.arch)))?;
    let prio = u32::try_from(p.prio).unwrap_or(u32::MAX);
    let mut req = ReduceRequest::new(
        op.value(),
        p.srcs.clone(),
        p.dsts.clone(),
        p.elems,
        ReduceDtypes { in_dt: p.in_dt, accum_dt: p.accum_dt, out_dt: p.out_dt },
        arch,
    );
    req.prio = prio;
    if let Some(cap) = cap {
        req.caps = PrioCaps::default().with_cap(prio, cap);
    }
    req.rounding = p.opts.rounding()?;
    req.selectors = p.selectors.0;
    p.opts.check(op)?;
    req.compress = p.header;
    if p.no_cce_info {
        return Ok(req);
    }
    // The scale count is checked whatever the source count (the host then refuses > 32).
    let scales = if op == KbinOp::Fma {
        broadcast_scales(&p.opts.scales, p.srcs.len()).map_err(|e| match e {
            HostError::ScaleCount { .. } => ApiError::Input(format!("`scale`: {e}")),
            e => e.into(),
        })?
    } else {
        Vec::new()
    };
    Ok(req.with_options(&scales, p.opts.constant(p.in_dt)?)?)
}

/// Builds the rings of the reduce `p` describes.
pub fn build(p: &BuildParams) -> Result<Built, ApiError> {
    let queue = values::fit(p.queue, 15, 4).map_err(|why| invalid_value("`queue` <QUEUE>", p.queue, &why))? as u32;
    if let Some(g) = gradient_request(p)? {
        let rings = cce_host::plan_gradient(&g)?.to_rings(p.ring_size)?;
        return Ok(Built { rings, queue, arch: g.arch });
    }
    let req = request(p)?;
    let rings = plan(&req)?.to_rings(p.ring_size)?;
    Ok(Built { rings, queue, arch: req.arch })
}

/// The gradient packet request of a `gce-compress` / `gce-decompress` build (`None` for any
/// other op): the sources, the one destination, the header, the values' dtype (the sources'
/// when compressing, the output's when decompressing).
pub fn gradient_request(p: &BuildParams) -> Result<Option<cce_host::GradientRequest>, ApiError> {
    let Some(mode) = p.op.gce() else { return Ok(None) };
    let header = p.header.ok_or_else(|| ApiError::Input(format!("`op` {}: `header` ADDR is required", p.op)))?;
    let [dst] = p.dsts[..] else {
        return Err(ApiError::Input(format!("`op` {}: one `dst` (the payload or the values)", p.op)));
    };
    let arch = u32::try_from(p.arch).map_err(|_| ApiError::Input(format!("`arch` {} is out of range", p.arch)))?;
    let dtype = if mode == GceMode::Compress { p.in_dt } else { p.out_dt };
    Ok(Some(cce_host::GradientRequest { mode, srcs: p.srcs.clone(), dst, header, elems: p.elems, dtype, arch }))
}

/// The rings of one reduce on one queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The tx and rx ring bytes, geometry and packet count.
    pub rings: Rings,
    /// The queue id of the dump.
    pub queue: u32,
    /// The arch they were built for.
    pub arch: u32,
}

impl Built {
    /// The ring dump file (`cce build -o`), which `cce disasm` and `cce run` read.
    pub fn file_bytes(&self) -> Vec<u8> {
        self.rings.to_file_bytes(self.queue, self.arch)
    }

    /// The counts of the summary line.
    pub fn summary(&self) -> BuildSummary {
        BuildSummary {
            packets: self.rings.packets,
            tx_descriptors: self.rings.tx_doorbell(),
            rx_descriptors: self.rings.rx_doorbell(),
            ring_size: self.rings.ring_size,
            initial_phase: self.rings.initial_phase,
        }
    }

    /// The queue's listing model.
    pub fn listing(&self) -> QueueListing {
        QueueListing::of(&self.rings.queue(self.queue), self.arch)
    }
}

/// What `cce build` reports: packets, descriptors per ring (the doorbells), the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildSummary {
    /// Packets.
    pub packets: u64,
    /// Tx descriptors (the tx doorbell).
    pub tx_descriptors: u32,
    /// Rx descriptors (the rx doorbell, rung first).
    pub rx_descriptors: u32,
    /// Ring size in descriptors.
    pub ring_size: u32,
    /// Ring-id phase of the first lap.
    pub initial_phase: u8,
}

impl fmt::Display for BuildSummary {
    /// `N packets, T tx + R rx descriptors, ring S descriptors (phase P), doorbells rx R then tx T`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} packets, {} tx + {} rx descriptors, ring {} descriptors (phase {}), doorbells rx {} then tx {}",
            self.packets,
            self.tx_descriptors,
            self.rx_descriptors,
            self.ring_size,
            self.initial_phase,
            self.rx_descriptors,
            self.tx_descriptors
        )
    }
}
