//! Study §8, the ties to the collective reduce: the runtime's reduction topology enum
//! `enc_primitive::reduction_type_t`, the all-reduce algorithm each value is (by the name the
//! collectives give it), and the compiler's collective codes that lower to `SDMA_CCETYPE_ADD`
//! reduce packets.
//!
//! ## Guarantees
//! - Each value and name is the study's, with the tag docs/SOURCES.md gives it:
//!   `reduction_type_t` is HIGH (enums.json); the compiler's `PSEUDO_TRIGGER_COLLECTIVE` codes
//!   are MED (stated by §8 outside its HIGH ledger; docs/MODEL.md C4 says why).
//! - The link from a topology to an algorithm is held here once, as the algorithm's name
//!   (`ring`, `ring-2r2w`, `kangaring`), so the bits crate needs nothing above it.

use crate::dtype::SdmaDtype;
use crate::op::SdmaCceType;
use crate::tag::Tag;

/// `enc_primitive::reduction_type_t`: the topology `recv_reduce_copy` → `__recv_reduce_write`
/// passes down to `add_dma_packet_cce` with the neighbour chunks' address vector (study §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReductionType {
    /// Two reads, one write per reduce step: the ring.
    Ring2R1W,
    /// Two reads, two writes: the ring whose reduce also writes the next rank's copy.
    Ring2R2W,
    /// N reads, one write: the Kangaring fold.
    KangaringNR1W,
}

impl ReductionType {
    /// Every value, in the enum's order.
    pub const ALL: [ReductionType; 3] =
        [ReductionType::Ring2R1W, ReductionType::Ring2R2W, ReductionType::KangaringNR1W];

    /// The enum value (HIGH, enums.json).
    pub const fn value(self) -> u32 {
        match self {
            ReductionType::Ring2R1W => 0,
            ReductionType::Ring2R2W => 1,
            ReductionType::KangaringNR1W => 2,
        }
    }

    /// The enumerator's name as the runtime spells it.
    pub const fn name(self) -> &'static str {
        match self {
            ReductionType::Ring2R1W => "RING_2R1W",
            ReductionType::Ring2R2W => "RING_2R2W",
            ReductionType::KangaringNR1W => "KANGARING_NR1W",
        }
    }

    /// The all-reduce algorithm that has this topology, by the name cce's collectives give it
    /// (docs/MODEL.md C4).
    pub const fn algorithm(self) -> &'static str {
        match self {
            ReductionType::Ring2R1W => "ring",
            ReductionType::Ring2R2W => "ring-2r2w",
            ReductionType::KangaringNR1W => "kangaring",
        }
    }

    /// How far the value and name can be trusted.
    pub const fn tag(self) -> Tag {
        Tag::High
    }

    /// The topology of the algorithm named `algorithm`, if it has one of the runtime's.
    pub fn of_algorithm(algorithm: &str) -> Option<ReductionType> {
        Self::ALL.into_iter().find(|t| t.algorithm() == algorithm)
    }
}

/// What a compiler collective code lowers to on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LowersTo {
    /// The reduce packets' CCE op.
    Op(SdmaCceType),
    /// The reduce packets' dtype.
    Dtype(SdmaDtype),
}

/// One of the compiler's `PSEUDO_TRIGGER_COLLECTIVE` codes study §8 names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollectiveCode {
    /// Which of the instruction's fields the code is (`op` or `dtype`).
    pub field: &'static str,
    /// The code's name.
    pub name: &'static str,
    /// Its value.
    pub value: u32,
    /// What the host lowers it to.
    pub lowers_to: LowersTo,
    /// How far the row can be trusted.
    pub tag: Tag,
}

/// The compiler-level collective's codes that lower, host-side, to `SDMA_CCETYPE_ADD` reduce
/// packets (study §8): op ADD = 0x04, dtype FP32 = 0x0A.
pub const PSEUDO_TRIGGER_COLLECTIVE: [CollectiveCode; 2] = [
    CollectiveCode { field: "op", name: "ADD", value: 0x04, lowers_to: LowersTo::Op(SdmaCceType::Add), tag: Tag::Med },
    CollectiveCode {
        field: "dtype",
        name: "FP32",
        value: 0x0A,
        lowers_to: LowersTo::Dtype(SdmaDtype::Fp32),
        tag: Tag::Med,
    },
];
