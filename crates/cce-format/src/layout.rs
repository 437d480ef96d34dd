//! What a word's declaration is made of — fields ([`FieldDef`]) and layouts ([`Layout`]) — and
//! how any words are described against one. The declarations themselves live in
//! [`crate::words`], one file per word, and are re-exported here.
//!
//! The typed codecs read and write their fields through the declarations, and
//! [`Layout::describe`] decodes any words generically for display: each field's value, where it
//! sits and its tag, plus the bits no field explains. Describing never fails and never panics,
//! whatever the bits.

use alloc::vec::Vec;

use crate::bits::BitSpan;
use crate::tag::Tag;

/// How a field's bits are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An unsigned integer.
    Uint,
    /// A one-bit flag.
    Flag,
    /// A 4-bit SDMA dtype nibble.
    Dtype,
    /// A 3-bit constant-dtype field (an SDMA dtype value below 8, LOW).
    Dtype3,
    /// A 2-bit FMA operand selector (stored 0, input 1, scale 2).
    Selector,
    /// The bits of an IEEE-754 binary32.
    F32Bits,
    /// A flag implied by another field (not set on its own; e.g. replication bit 26).
    Implied,
    /// A flag written as all bits of its span set (e.g. the 0x6000000 sub-descriptor word);
    /// any other non-zero value is not a valid encoding.
    Pattern,
}

/// One field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// Name as the CLI spells it (`--in-dt`, JSON key `in-dt`).
    pub name: &'static str,
    /// Word index (0 for a meta-control word, 0..=3 in a descriptor).
    pub word: u8,
    /// Where the bits are.
    pub span: BitSpan,
    /// How to read them.
    pub kind: FieldKind,
    /// How far the field (position and meaning) can be trusted.
    pub tag: Tag,
    /// One line on what it is and where it comes from.
    pub note: &'static str,
}

impl FieldDef {
    /// Whether a user sets this field (false for implied ones).
    pub const fn is_input(&self) -> bool {
        !matches!(self.kind, FieldKind::Implied)
    }

    /// Largest value an encoder accepts for the field: 1 for flags and patterns, else the span.
    pub const fn input_max(&self) -> u64 {
        match self.kind {
            FieldKind::Flag | FieldKind::Pattern | FieldKind::Implied => 1,
            _ => self.span.max() as u64,
        }
    }

    pub(crate) const fn new(
        name: &'static str,
        word: u8,
        lo: u8,
        width: u8,
        kind: FieldKind,
        tag: Tag,
        note: &'static str,
    ) -> Self {
        FieldDef { name, word, span: BitSpan::new(lo, width), kind, tag, note }
    }

    /// Reads the field from `words` (a missing word reads as 0).
    pub fn get(&self, words: &[u32]) -> u32 {
        words.get(self.word as usize).map_or(0, |w| self.span.get(*w))
    }

    /// The field's value placed in its word (masked to width).
    pub const fn place(&self, value: u32) -> u32 {
        self.span.place(value)
    }

    /// The field's value moved into place unmasked, as the runtime does for some arguments.
    pub const fn shift(&self, value: u32) -> u32 {
        self.span.shift(value)
    }

    /// `Wn[hi:lo]`, or `[hi:lo]` for a one-word layout.
    pub fn location(&self, words: u8) -> alloc::string::String {
        let bits = if self.span.width == 1 {
            alloc::format!("[{}]", self.span.lo)
        } else {
            alloc::format!("[{}:{}]", self.span.hi(), self.span.lo)
        };
        if words == 1 { bits } else { alloc::format!("W{}{}", self.word, bits) }
    }
}

/// A word layout: bits that are always set, and the fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Encoder name as the CLI spells it.
    pub name: &'static str,
    /// 1 for a meta-control word, 4 for a 16-byte descriptor.
    pub words: u8,
    /// Bits every encoding sets (the op base constants, W0 bit 23, …).
    pub fixed: [u32; 4],
    /// Tag of the fixed bits.
    pub fixed_tag: Tag,
    /// The fields.
    pub fields: &'static [FieldDef],
    /// Where it comes from.
    pub source: &'static str,
}

/// One field's decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldValue {
    /// The definition.
    pub def: FieldDef,
    /// The raw value of its bits.
    pub value: u32,
}

impl Layout {
    /// The mask of bits a field or the fixed constant accounts for, per word.
    pub fn covered(&self) -> [u32; 4] {
        let mut m = self.fixed;
        for f in self.fields {
            m[f.word as usize] |= f.span.mask();
        }
        m
    }

    /// Each field's value, in table order.
    pub fn describe(&self, words: &[u32]) -> Vec<FieldValue> {
        self.fields.iter().map(|def| FieldValue { def: *def, value: def.get(words) }).collect()
    }

    /// Per word: set bits that neither a field nor the fixed constant explains.
    pub fn unexplained(&self, words: &[u32]) -> [u32; 4] {
        let covered = self.covered();
        core::array::from_fn(|i| words.get(i).copied().unwrap_or(0) & !covered[i])
    }

    /// Per word: fixed bits that are clear.
    pub fn missing_fixed(&self, words: &[u32]) -> [u32; 4] {
        core::array::from_fn(|i| self.fixed[i] & !words.get(i).copied().unwrap_or(0))
    }

    /// Whether the words carry all fixed bits and nothing unexplained.
    pub fn fits(&self, words: &[u32]) -> bool {
        self.unexplained(words) == [0; 4] && self.missing_fixed(words) == [0; 4]
    }

    /// Looks up a field by name.
    pub fn field(&self, name: &str) -> Option<&'static FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

// The declarations live in `crate::words`, one file per word; they are re-exported here, where
// tools have always found them.
pub use crate::words::*;

/// Finds a layout by CLI name.
pub fn by_name(name: &str) -> Option<&'static Layout> {
    crate::words::entry(name).map(|e| e.layout)
}
