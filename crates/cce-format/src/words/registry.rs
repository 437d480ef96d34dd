//! The registry: every declared word, in the order the CLI lists them. The codec encodes and
//! decodes through it, and the layout lists are read from it.

use super::*;
use crate::descriptor::Descriptor;
use crate::meta_ctrl::MetaCtrl;

/// One word the codec knows: its layout, and how to encode it from named values and check
/// that words are an exact encoding of it.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The word's declaration.
    pub layout: &'static Layout,
    encode: fn(&dyn FieldSource) -> Result<[u32; 4], FormatError>,
    check: fn([u32; 4]) -> Result<(), FormatError>,
}

impl core::fmt::Debug for Entry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry").field("layout", &self.layout.name).finish_non_exhaustive()
    }
}

impl Entry {
    const fn meta_ctrl<T: MetaCtrl + FromInput>() -> Entry {
        Entry { layout: T::LAYOUT, encode: encode_meta_ctrl::<T>, check: check_meta_ctrl::<T> }
    }

    const fn descriptor<T: Descriptor + FromInput>() -> Entry {
        Entry { layout: T::LAYOUT, encode: encode_descriptor::<T>, check: check_descriptor::<T> }
    }

    /// The word encoded from `values` (a missing name is 0; a value that does not fit its
    /// field is refused naming it). Unused words are 0.
    pub fn encode(&self, values: &dyn FieldSource) -> Result<[u32; 4], FormatError> {
        (self.encode)(values)
    }

    /// `Ok` if `words` are an exact encoding of the word, else why not.
    pub fn check(&self, words: [u32; 4]) -> Result<(), FormatError> {
        (self.check)(words)
    }
}

fn encode_meta_ctrl<T: MetaCtrl + FromInput>(values: &dyn FieldSource) -> Result<[u32; 4], FormatError> {
    Ok([T::from_input(values)?.emit(), 0, 0, 0])
}

fn check_meta_ctrl<T: MetaCtrl>(words: [u32; 4]) -> Result<(), FormatError> {
    T::parse(words[0]).map(drop)
}

fn encode_descriptor<T: Descriptor + FromInput>(values: &dyn FieldSource) -> Result<[u32; 4], FormatError> {
    Ok(T::from_input(values)?.emit())
}

fn check_descriptor<T: Descriptor>(words: [u32; 4]) -> Result<(), FormatError> {
    T::parse(words).map(drop)
}

/// Every word, meta-control words first.
pub const REGISTRY: [Entry; 14] = [
    Entry::meta_ctrl::<FmaMetaCtrl>(),
    Entry::meta_ctrl::<MinMaxMetaCtrl>(),
    Entry::meta_ctrl::<AddMetaCtrl>(),
    Entry::meta_ctrl::<GradientMetaCtrl>(),
    Entry::meta_ctrl::<ExtMetaCtrl>(),
    Entry::meta_ctrl::<ReplicationMetaCtrl>(),
    Entry::meta_ctrl::<CopyMetaCtrl>(),
    Entry::descriptor::<FmaDescriptor>(),
    Entry::descriptor::<MinMaxDescriptor>(),
    Entry::descriptor::<SeedInitDescriptor>(),
    Entry::descriptor::<ReplicationDescriptor>(),
    Entry::descriptor::<GradientDescriptor>(),
    Entry::descriptor::<M2sDataDescriptor>(),
    Entry::descriptor::<S2mDataDescriptor>(),
];

/// The registry's layouts of `words` words, in registry order (`N` must be their count).
const fn layouts_of<const N: usize>(words: u8) -> [&'static Layout; N] {
    let mut out = [REGISTRY[0].layout; N];
    let (mut i, mut n) = (0, 0);
    while i < REGISTRY.len() {
        if REGISTRY[i].layout.words == words {
            out[n] = REGISTRY[i].layout;
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "the layout count does not match the registry");
    out
}

/// Every meta-control layout.
pub const META_CTRL_LAYOUTS: [&Layout; 7] = layouts_of(1);

/// Every 16-byte layout.
pub const DESCRIPTOR_LAYOUTS: [&Layout; 7] = layouts_of(4);

/// The registry entry of the layout named `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.layout.name == name)
}
