//! What kind a descriptor is: in its packet, or by its bits alone.

use alloc::vec::Vec;

use super::META_BIT;
use crate::descriptor::{
    self, Descriptor, FmaDescriptor, M2sDataDescriptor, MinMaxDescriptor, ReplicationDescriptor, SeedInitDescriptor,
};
use crate::layout;

/// What kind a descriptor is, in the context of its packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescKind {
    /// Seed-init compute descriptor.
    SeedInit,
    /// MIN/MAX compute descriptor (the constant).
    MinMax,
    /// FMA compute descriptor.
    Fma,
    /// Replication compute descriptor.
    Replication,
    /// Gradient (GCE) compute descriptor.
    Gradient,
    /// M2S data descriptor.
    M2sData,
    /// S2M data descriptor.
    S2mData,
    /// A meta descriptor no known layout fits.
    Unknown,
}

impl DescKind {
    /// Short name (`seed-init`, `fma`, `min-max`, `replication`, `gradient`, `m2s-data`,
    /// `s2m-data`, `unknown`).
    pub const fn name(self) -> &'static str {
        match self {
            DescKind::SeedInit => "seed-init",
            DescKind::MinMax => "min-max",
            DescKind::Fma => "fma",
            DescKind::Replication => "replication",
            DescKind::Gradient => "gradient",
            DescKind::M2sData => "m2s-data",
            DescKind::S2mData => "s2m-data",
            DescKind::Unknown => "unknown",
        }
    }

    /// The layout that decodes it.
    pub fn layout(self) -> Option<&'static layout::Layout> {
        Some(match self {
            DescKind::SeedInit => &layout::SEED_INIT_DESCRIPTOR,
            DescKind::MinMax => &layout::MIN_MAX_DESCRIPTOR,
            DescKind::Fma => &layout::FMA_DESCRIPTOR,
            DescKind::Replication => &layout::REPLICATION_DESCRIPTOR,
            DescKind::Gradient => &layout::GRADIENT_DESCRIPTOR,
            DescKind::M2sData => &layout::M2S_DATA,
            DescKind::S2mData => &layout::S2M_DATA,
            DescKind::Unknown => return None,
        })
    }
}

/// Every kind a tx descriptor could be on its own, without its packet. An FMA descriptor and a
/// MIN/MAX descriptor with an odd constant dtype can share bits; the packet decides.
pub fn tx_kinds(w: [u32; 4]) -> Vec<DescKind> {
    let mut out = Vec::new();
    if w[0] & META_BIT == 0 {
        if M2sDataDescriptor::parse(w).is_ok() {
            out.push(DescKind::M2sData);
        }
        return out;
    }
    if SeedInitDescriptor::parse(w).is_ok() {
        out.push(DescKind::SeedInit);
    }
    if MinMaxDescriptor::parse(w).is_ok() {
        out.push(DescKind::MinMax);
    }
    if FmaDescriptor::parse(w).is_ok() {
        out.push(DescKind::Fma);
    }
    if ReplicationDescriptor::parse(w).is_ok() {
        out.push(DescKind::Replication);
    }
    if descriptor::GradientDescriptor::parse(w).is_ok() {
        out.push(DescKind::Gradient);
    }
    out
}
