//! Stage 3 of reading a packet: its tx descriptors in order, each adding a source, a seed, a
//! clamp, an FMA operand set, a gradient or a replication, then the checks across them.

use alloc::vec::Vec;

use super::error::malformed;
use super::parse::op_of;
use super::{
    Clamp, DataFlags, DescKind, FmaOperands, Gce, GceMode, MAX_SOURCES, PacketError, PacketOp, Source, aux_mask,
    tx_kinds,
};
use crate::descriptor::{
    Descriptor, FmaDescriptor, GradientDescriptor, M2sDataDescriptor, MinMaxDescriptor, ReplicationDescriptor,
    SeedInitDescriptor,
};
use crate::dtype::SdmaDtype;
use crate::meta_ctrl::{
    AddMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl, WRITE_BARRIER,
};
use crate::op::SdmaCceType;

/// Dtypes, last bit and clamp dtype a source's meta-control word carries.
struct MetaInfo {
    in_dt: SdmaDtype,
    accum_dt: SdmaDtype,
    last: bool,
    use_const: bool,
    const_dt: u32,
    forced_out: SdmaDtype,
}

fn meta_info(op: PacketOp, meta: u32) -> Option<MetaInfo> {
    Some(match op {
        PacketOp::Copy => MetaInfo {
            in_dt: SdmaDtype::U8,
            accum_dt: SdmaDtype::U8,
            last: true,
            use_const: false,
            const_dt: 0,
            forced_out: SdmaDtype::Invalid,
        },
        PacketOp::Cce(SdmaCceType::Fma) => {
            let m = FmaMetaCtrl::parse(meta).ok()?;
            if m.scale_dt != SdmaDtype::Fp32 {
                return None;
            }
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.f4,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
        PacketOp::Cce(SdmaCceType::Min | SdmaCceType::Max) => {
            let m = MinMaxMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: m.use_const,
                const_dt: m.const_dt.get(),
                forced_out: m.out_dt,
            }
        }
        PacketOp::Cce(SdmaCceType::Gce) => {
            let m = GradientMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.in_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
        PacketOp::Cce(_) => {
            let m = AddMetaCtrl::parse(meta).ok()?;
            MetaInfo {
                in_dt: m.out_dt,
                accum_dt: m.accum_dt,
                last: m.last,
                use_const: false,
                const_dt: 0,
                forced_out: SdmaDtype::Invalid,
            }
        }
    })
}

/// Stage 3, the tx descriptors read in order: what each one adds to the packet.
pub(super) struct TxRead {
    op: PacketOp,
    end: usize,
    pub(super) kinds: Vec<DescKind>,
    pub(super) sources: Vec<Source>,
    pending_fma: Option<FmaOperands>,
    pub(super) seed: Option<u32>,
    /// The clamp and the MIN/MAX descriptor's length.
    pub(super) clamp: Option<(Clamp, u32)>,
    replication: usize,
    rep_count: Option<u32>,
    ext_mid: Option<SdmaDtype>,
    gradient: Option<(usize, GradientDescriptor)>,
    /// In dtype, accum dtype, bytes per source.
    info: Option<(SdmaDtype, SdmaDtype, u32)>,
    /// use-const, const dtype, forced out dtype.
    meta_flags: Option<(bool, u32, SdmaDtype)>,
    seen_last: bool,
    pub(super) flags: DataFlags,
}

/// What the tx side says of the packet's elements.
pub(super) struct Head {
    pub(super) in_dt: SdmaDtype,
    pub(super) accum_dt: SdmaDtype,
    pub(super) elems: u32,
    pub(super) gce: Option<Gce>,
    pub(super) use_const: bool,
    pub(super) forced_out: SdmaDtype,
}

impl TxRead {
    pub(super) fn new(op: PacketOp, end: usize) -> TxRead {
        TxRead {
            op,
            end,
            kinds: Vec::with_capacity(end),
            sources: Vec::new(),
            pending_fma: None,
            seed: None,
            clamp: None,
            replication: 0,
            rep_count: None,
            ext_mid: None,
            gradient: None,
            info: None,
            meta_flags: None,
            seen_last: false,
            flags: DataFlags::default(),
        }
    }

    fn is_op(&self, o: SdmaCceType) -> bool {
        self.op == PacketOp::Cce(o)
    }

    /// An M2S data descriptor at `i`: one source.
    pub(super) fn data(&mut self, i: usize, w: [u32; 4]) -> Result<(), PacketError> {
        let op = self.op;
        let d = M2sDataDescriptor::parse(w).map_err(|_| malformed("tx", i, "not a valid M2S data descriptor"))?;
        if self.seen_last {
            return Err(malformed("tx", i, "data descriptor after the LAST one"));
        }
        if d.len_ctrl.first != self.sources.is_empty() {
            return Err(malformed("tx", i, "FIRST must be set on the first data descriptor only"));
        }
        if d.len_ctrl.concat || d.len_ctrl.meta {
            return Err(malformed("tx", i, "CONCAT / META set on a tx data descriptor"));
        }
        if d.len_ctrl.dmb && !d.len_ctrl.last {
            return Err(malformed("tx", i, "DMB on a data descriptor that is not the packet's LAST"));
        }
        let write_barrier = d.meta_ctrl & WRITE_BARRIER != 0;
        if write_barrier && !d.len_ctrl.last {
            return Err(malformed(
                "tx",
                i,
                "write barrier (meta_ctrl bit 26) on a data descriptor that is not the packet's LAST",
            ));
        }
        self.flags.dmb = d.len_ctrl.dmb;
        self.flags.write_barrier = write_barrier;
        if op_of(d.meta_ctrl) != Some(op) {
            return Err(PacketError::UnknownOp { index: i, meta: d.meta_ctrl });
        }
        let mi =
            meta_info(op, d.meta_ctrl).ok_or(PacketError::BadDtype { index: i, dtype: "non-fp32", role: "scale" })?;
        self.seen_last = d.len_ctrl.last;
        if mi.last != d.len_ctrl.last {
            return Err(malformed("tx", i, "meta-control last bit disagrees with LAST"));
        }
        let bytes = d.len_ctrl.byte_len();
        match self.info {
            None => self.info = Some((mi.in_dt, mi.accum_dt, bytes)),
            Some((a, b, len)) => {
                if (a, b) != (mi.in_dt, mi.accum_dt) {
                    return Err(malformed("tx", i, "sources disagree on in / accum dtype"));
                }
                if len != bytes {
                    return Err(PacketError::Length { ring: "tx", index: i, got: bytes, expected: len });
                }
            }
        }
        let flags = (mi.use_const, mi.const_dt, mi.forced_out);
        if *self.meta_flags.get_or_insert(flags) != flags {
            return Err(malformed("tx", i, "sources disagree on the clamp fields"));
        }
        let fma = self.pending_fma.take();
        if self.is_op(SdmaCceType::Fma) && fma.is_none() {
            return Err(malformed("tx", i, "FMA source without its FMA descriptor"));
        }
        if self.sources.len() == MAX_SOURCES {
            return Err(PacketError::TooManySources(self.sources.len() + 1));
        }
        self.sources.push(Source {
            addr: d.buf_ptr,
            fma,
            meta_aux: d.meta_ctrl & aux_mask(op),
            int_en: d.len_ctrl.int_en,
        });
        self.kinds.push(DescKind::M2sData);
        Ok(())
    }

    /// A compute descriptor at `i`: which kind it is is decided by its place and the op.
    pub(super) fn compute(&mut self, i: usize, w: [u32; 4]) -> Result<(), PacketError> {
        let fits = tx_kinds(w);
        let kind = if self.seen_last {
            if fits.contains(&DescKind::Gradient) && !fits.contains(&DescKind::Replication) {
                DescKind::Gradient
            } else {
                DescKind::Replication
            }
        } else if i == 0 && fits.contains(&DescKind::SeedInit) {
            DescKind::SeedInit
        } else if self.is_op(SdmaCceType::Gce) && self.sources.is_empty() && self.gradient.is_none() {
            DescKind::Gradient
        } else if self.is_op(SdmaCceType::Fma) {
            DescKind::Fma
        } else if (self.is_op(SdmaCceType::Min) || self.is_op(SdmaCceType::Max))
            && self.sources.is_empty()
            && self.clamp.is_none()
        {
            DescKind::MinMax
        } else {
            return Err(malformed("tx", i, "compute descriptor where the packet has none"));
        };
        if !fits.contains(&kind) {
            return Err(malformed("tx", i, "compute descriptor does not fit its place in the packet"));
        }
        match kind {
            DescKind::SeedInit => {
                let d = SeedInitDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad seed-init"))?;
                if !d.seed_en {
                    return Err(malformed("tx", i, "seed-init without seed-enable"));
                }
                self.seed = Some(d.seed);
            }
            DescKind::MinMax => {
                let d = MinMaxDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad min-max descriptor"))?;
                if !d.use_const {
                    return Err(malformed("tx", i, "min-max descriptor without the constant sub-descriptor"));
                }
                self.clamp = Some((Clamp { const_dt: d.const_dt, bits: d.constant }, d.length.get()));
            }
            DescKind::Gradient => {
                let d = GradientDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad gradient descriptor"))?;
                if self.gradient.is_some() || self.replication > 0 {
                    return Err(malformed("tx", i, "a second gradient descriptor, or one after the replication"));
                }
                self.gradient = Some((i, d));
            }
            DescKind::Fma => {
                let d = FmaDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad FMA descriptor"))?;
                if self.pending_fma.is_some() {
                    return Err(malformed("tx", i, "two FMA descriptors for one source"));
                }
                self.pending_fma = Some(FmaOperands { a: d.a_sel, b: d.b_sel, c: d.c_sel, scale_bits: d.scale_bits });
            }
            _ => {
                let d =
                    ReplicationDescriptor::parse(w).map_err(|_| malformed("tx", i, "bad replication descriptor"))?;
                if *self.rep_count.get_or_insert(d.count.get()) != d.count.get() {
                    return Err(malformed("tx", i, "replication descriptors disagree on the count"));
                }
                if self.ext_mid.is_none() {
                    self.ext_mid = ExtMetaCtrl::parse(d.ext_meta).ok().map(|e| e.mid_dt);
                }
                self.replication += 1;
            }
        }
        self.kinds.push(kind);
        Ok(())
    }

    /// Stage 3's checks across descriptors: the dtypes, the element count, the clamp and the
    /// gradient descriptor agree (`first_data`: the first data descriptor's index).
    pub(super) fn head(&self, first_data: usize) -> Result<Head, PacketError> {
        let (in_dt, accum_dt, src_bytes) = self.info.ok_or(PacketError::NoLast(self.end))?;
        let (use_const, const_dt, forced_out) = self.meta_flags.unwrap_or((false, 0, SdmaDtype::Invalid));
        if use_const != self.clamp.is_some() {
            return Err(malformed(
                "tx",
                0,
                "use-const in meta-control without the constant descriptor (or the reverse)",
            ));
        }
        if let Some((c, _)) = self.clamp {
            if c.const_dt.get() != const_dt {
                return Err(malformed("tx", 0, "constant dtype disagrees between descriptor and meta-control"));
            }
        }
        if self.op == PacketOp::Copy && self.sources.len() != 1 {
            return Err(malformed("tx", 0, "a copy packet has exactly one data descriptor"));
        }
        let gce = self.gce(in_dt, src_bytes)?;
        let in_size = in_dt.bytes() as u32;
        if in_size == 0 {
            return Err(PacketError::BadDtype { index: first_data, dtype: in_dt.name(), role: "in" });
        }
        if accum_dt == SdmaDtype::Invalid {
            return Err(PacketError::BadDtype { index: first_data, dtype: accum_dt.name(), role: "accum" });
        }
        if src_bytes % in_size != 0 {
            return Err(PacketError::Length {
                ring: "tx",
                index: first_data,
                got: src_bytes,
                expected: src_bytes / in_size * in_size,
            });
        }
        let elems = src_bytes / in_size;
        if let Some((_, len)) = self.clamp {
            if len != elems {
                return Err(PacketError::Length { ring: "tx", index: 0, got: len, expected: elems });
            }
        }
        Ok(Head { in_dt, accum_dt, elems, gce, use_const, forced_out })
    }

    /// The gradient descriptor's GCE, checked against the packet's op and length.
    fn gce(&self, in_dt: SdmaDtype, src_bytes: u32) -> Result<Option<Gce>, PacketError> {
        let Some((i, d)) = self.gradient else {
            if self.is_op(SdmaCceType::Gce) {
                return Err(malformed("tx", 0, "a gradient packet without its gradient descriptor"));
            }
            return Ok(None);
        };
        let mode = GceMode::from_value(d.mode.get()).ok_or(malformed(
            "tx",
            i,
            "gradient descriptor mode: the model knows compress (1) and decompress (2)",
        ))?;
        if d.length.get() != src_bytes / (in_dt.bytes().max(1) as u32) {
            let elems = src_bytes / (in_dt.bytes().max(1) as u32);
            return Err(PacketError::Length { ring: "tx", index: i, got: d.length.get(), expected: elems });
        }
        if self.is_op(SdmaCceType::Gce) {
            if self.seed.is_some() || self.replication > 0 {
                return Err(malformed(
                    "tx",
                    i,
                    "a gradient packet takes no seed-init and no replication (an EXT combo does)",
                ));
            }
            return Ok(Some(Gce { mode, header: d.header, mid_dt: in_dt }));
        }
        if mode != GceMode::Compress || self.replication == 0 {
            return Err(malformed(
                "tx",
                i,
                "a gradient descriptor in an EXT combo compresses, and replication descriptors follow it",
            ));
        }
        Ok(Some(Gce { mode, header: d.header, mid_dt: self.ext_mid.unwrap_or(SdmaDtype::Invalid) }))
    }

    /// The rx descriptors the packet uses: the combo's replication count, else one (the
    /// driver's S2M carries no FIRST / LAST to say so).
    pub(super) fn rx_used(&self, end: usize) -> Result<usize, PacketError> {
        if self.replication > 0 && self.rep_count != Some(self.replication as u32) {
            return Err(malformed("tx", end - 1, "replication descriptors do not match their count"));
        }
        Ok(self.replication.max(1))
    }
}
