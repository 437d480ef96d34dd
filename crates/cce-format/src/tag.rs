//! Confidence tags. Every table entry, field and error that rests on less than a byte-exact
//! observation carries one, and the tag travels to decoders, disassembly and docs.

use core::fmt;

/// How far a fact can be trusted (GAPS.md, preamble).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tag {
    /// Pinned by the study's byte-exact observations.
    High,
    /// Inferred: a public source agrees with every value the study pins.
    Med,
    /// A guess from ordering or naming.
    Low,
    /// Not known about the hardware: a choice this project made (docs/MODEL.md).
    Model,
}

impl Tag {
    /// The tag as printed: `HIGH`, `MED`, `LOW` or `MODEL`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Tag::High => "HIGH",
            Tag::Med => "MED",
            Tag::Low => "LOW",
            Tag::Model => "MODEL",
        }
    }

    /// The weaker of two tags: a fact built on two others is only as good as the worse one.
    pub fn weakest(self, other: Tag) -> Tag {
        if self >= other { self } else { other }
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
