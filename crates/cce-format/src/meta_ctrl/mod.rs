//! The meta-control words (study §2.5, §2.6; GAPS.md §5).
//!
//! [`raw`] holds the runtime's pure bit-packs exactly as disassembled, masking included, for any
//! `u32` arguments. The typed words on top refuse values that do not fit (checked when a
//! [`UInt`](crate::bits::UInt) or [`SdmaDtype`](crate::SdmaDtype) is made) and round-trip: `parse(emit(x)) == x`.
//!
//! ADD and MIN/MAX share the base `0x2000000` and MIN/MAX writes its constant dtype on top of
//! the op-type field `[22:20]`, so a word cannot always be attributed to one encoder;
//! [`readings`] lists every encoder a word is an exact encoding of.

use alloc::vec::Vec;

use crate::error::FormatError;
use crate::layout::{self, Layout};

pub mod raw;

pub use crate::words::{
    AddMetaCtrl, CopyMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MinMaxMetaCtrl, ReplicationMetaCtrl,
};

/// A typed meta-control word.
pub trait MetaCtrl: Sized {
    /// The word's layout.
    const LAYOUT: &'static Layout;
    /// The 32-bit word, through the runtime's formula.
    fn emit(&self) -> u32;
    /// Reads a word that is an exact encoding; anything else is an error naming the problem.
    fn parse(word: u32) -> Result<Self, FormatError>;
}

/// The driver's write-barrier bit (26) of a CME meta-control word.
pub const WRITE_BARRIER: u32 = layout::MC_WRITE_BARRIER.place(1);

/// One encoder a meta-control word is an exact encoding of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Reading {
    Fma(FmaMetaCtrl),
    MinMax(MinMaxMetaCtrl),
    Add(AddMetaCtrl),
    Gradient(GradientMetaCtrl),
    Ext(ExtMetaCtrl),
    Replication(ReplicationMetaCtrl),
    Copy(CopyMetaCtrl),
}

impl Reading {
    /// The encoder's layout.
    pub fn layout(&self) -> &'static Layout {
        match self {
            Reading::Fma(_) => FmaMetaCtrl::LAYOUT,
            Reading::MinMax(_) => MinMaxMetaCtrl::LAYOUT,
            Reading::Add(_) => AddMetaCtrl::LAYOUT,
            Reading::Gradient(_) => GradientMetaCtrl::LAYOUT,
            Reading::Ext(_) => ExtMetaCtrl::LAYOUT,
            Reading::Replication(_) => ReplicationMetaCtrl::LAYOUT,
            Reading::Copy(_) => CopyMetaCtrl::LAYOUT,
        }
    }
}

/// Every encoder that could have produced `word`, in the order FMA, MIN/MAX, ADD, GCE, EXT,
/// replication, copy. A MIN/MAX word with const-dt 1, 4 or 5 also reads as FMA, EXT or GCE; an ADD
/// word also reads as MIN/MAX: the caller that does not know the encoder must show them all.
pub fn readings(word: u32) -> Vec<Reading> {
    let mut out = Vec::new();
    if let Ok(v) = FmaMetaCtrl::parse(word) {
        out.push(Reading::Fma(v));
    }
    if let Ok(v) = MinMaxMetaCtrl::parse(word) {
        out.push(Reading::MinMax(v));
    }
    if let Ok(v) = AddMetaCtrl::parse(word) {
        out.push(Reading::Add(v));
    }
    if let Ok(v) = GradientMetaCtrl::parse(word) {
        out.push(Reading::Gradient(v));
    }
    if let Ok(v) = ExtMetaCtrl::parse(word) {
        out.push(Reading::Ext(v));
    }
    if let Ok(v) = ReplicationMetaCtrl::parse(word) {
        out.push(Reading::Replication(v));
    }
    if let Ok(v) = CopyMetaCtrl::parse(word) {
        out.push(Reading::Copy(v));
    }
    out
}
