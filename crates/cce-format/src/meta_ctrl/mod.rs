//! The meta-control words (study §2.5, §2.6; GAPS.md §5).
//!
//! [`raw`] holds the runtime's pure bit-packs exactly as disassembled, masking included, for any
//! `u32` arguments. The typed words on top refuse values that do not fit (checked when a
//! [`UInt`](crate::bits::UInt) or [`SdmaDtype`] is made) and round-trip: `parse(emit(x)) == x`.
//!
//! ADD and MIN/MAX share the base `0x2000000` and MIN/MAX writes its constant dtype on top of
//! the op-type field `[22:20]`, so a word cannot always be attributed to one encoder;
//! [`readings`] lists every encoder a word is an exact encoding of.

use alloc::vec::Vec;

use crate::bits::{U3, U5, U8, U16};
use crate::dtype::SdmaDtype;
use crate::error::FormatError;
use crate::layout::{self, FieldDef, Layout};

pub mod raw;

/// Checks that `words` are an exact encoding of `layout`: fixed bits set, nothing unexplained,
/// and every [`Pattern`](layout::FieldKind::Pattern) field either clear or full.
pub(crate) fn check_fit(layout: &Layout, words: &[u32]) -> Result<(), FormatError> {
    let missing = layout.missing_fixed(words);
    let extra = layout.unexplained(words);
    for w in 0..layout.words as usize {
        if missing[w] != 0 {
            return Err(mismatch(layout, w as u8, "lacks the fixed bits", missing[w]));
        }
        if extra[w] != 0 {
            return Err(mismatch(layout, w as u8, "has bits no field explains", extra[w]));
        }
    }
    for f in layout.fields.iter().filter(|f| f.kind == layout::FieldKind::Pattern) {
        let v = f.get(words);
        if v != 0 && v != f.span.max() {
            return Err(mismatch(layout, f.word, "has a partial sub-descriptor pattern", f.place(v)));
        }
    }
    Ok(())
}

pub(crate) fn mismatch(layout: &Layout, word: u8, problem: &'static str, bits: u32) -> FormatError {
    FormatError::NotThisLayout { layout: layout.name, word, problem, bits }
}

pub(crate) fn flag(def: &FieldDef, words: &[u32]) -> bool {
    def.get(words) != 0
}

pub(crate) fn dtype(def: &FieldDef, words: &[u32]) -> SdmaDtype {
    SdmaDtype::from_nibble(def.get(words))
}

/// A typed meta-control word.
pub trait MetaCtrl: Sized {
    /// The word's layout.
    const LAYOUT: &'static Layout;
    /// The 32-bit word, through the runtime's formula.
    fn emit(&self) -> u32;
    /// Reads a word that is an exact encoding; anything else is an error naming the problem.
    fn parse(word: u32) -> Result<Self, FormatError>;
}

/// FMA meta-control (base `0x2100000`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct FmaMetaCtrl {
    pub sub: U3,
    pub in_dt: SdmaDtype,
    pub scale_dt: SdmaDtype,
    pub accum_dt: SdmaDtype,
    pub f4: bool,
    pub f5: bool,
    pub f6: bool,
    /// The driver's write barrier, bit 26 (on top of the runtime's formula).
    pub write_barrier: bool,
}

impl MetaCtrl for FmaMetaCtrl {
    const LAYOUT: &'static Layout = &layout::FMA_META_CTRL;
    fn emit(&self) -> u32 {
        raw::fma_meta_ctrl(
            self.sub.get(),
            self.in_dt.value(),
            self.scale_dt.value(),
            self.accum_dt.value(),
            self.f4 as u32,
            self.f5 as u32,
            self.f6 as u32,
        ) | write_barrier(self.write_barrier)
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Ok(FmaMetaCtrl {
            sub: U3::masked(layout::MC_SUB.get(&w)),
            in_dt: dtype(&layout::MC_IN_DT, &w),
            scale_dt: dtype(&layout::MC_SCALE_DT, &w),
            accum_dt: dtype(&layout::MC_ACCUM_DT, &w),
            f4: flag(&layout::FMA_MC_F4, &w),
            f5: flag(&layout::FMA_MC_F5, &w),
            f6: flag(&layout::FMA_MC_F6, &w),
            write_barrier: flag(&layout::MC_WRITE_BARRIER, &w),
        })
    }
}

/// MIN/MAX meta-control (base `0x2000000`). `out_dt` is written only when `use_const` is set;
/// with `use_const == false` a non-`Invalid` `out_dt` is dropped by [`emit`](MetaCtrl::emit),
/// exactly as the runtime drops it, so only values with `out_dt == Invalid` round-trip there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct MinMaxMetaCtrl {
    pub sub: U3,
    pub const_dt: U3,
    pub in_dt: SdmaDtype,
    pub out_dt: SdmaDtype,
    pub accum_dt: SdmaDtype,
    pub notif: bool,
    pub wrbar: bool,
    pub use_const: bool,
    pub last: bool,
    /// The driver's write barrier, bit 26 (on top of the runtime's formula).
    pub write_barrier: bool,
}

impl MetaCtrl for MinMaxMetaCtrl {
    const LAYOUT: &'static Layout = &layout::MIN_MAX_META_CTRL;
    fn emit(&self) -> u32 {
        raw::min_max_meta_ctrl(
            self.sub.get(),
            self.const_dt.get(),
            self.in_dt.value(),
            self.out_dt.value(),
            self.accum_dt.value(),
            self.notif as u32,
            self.wrbar as u32,
            self.use_const as u32,
            self.last as u32,
        ) | write_barrier(self.write_barrier)
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        let use_const = flag(&layout::MM_MC_USE_CONST, &w);
        let out = layout::MM_MC_OUT_DT.get(&w);
        if !use_const && out != 0 {
            return Err(mismatch(Self::LAYOUT, 0, "has an out-dt without use-const", layout::MM_MC_OUT_DT.place(out)));
        }
        Ok(MinMaxMetaCtrl {
            sub: U3::masked(layout::MC_SUB.get(&w)),
            const_dt: U3::masked(layout::MM_MC_CONST_DT.get(&w)),
            in_dt: dtype(&layout::MC_IN_DT, &w),
            out_dt: SdmaDtype::from_nibble(out),
            accum_dt: dtype(&layout::MC_ACCUM_DT, &w),
            notif: flag(&layout::MM_MC_NOTIF, &w),
            wrbar: flag(&layout::MM_MC_WRBAR, &w),
            use_const,
            last: flag(&layout::MM_MC_LAST, &w),
            write_barrier: flag(&layout::MC_WRITE_BARRIER, &w),
        })
    }
}

/// ADD meta-control (base `0x2000000`; carries no in dtype).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct AddMetaCtrl {
    pub sub: U3,
    pub out_dt: SdmaDtype,
    pub accum_dt: SdmaDtype,
    pub last: bool,
    pub wrbar: bool,
    pub f: bool,
    /// The driver's write barrier, bit 26 (on top of the runtime's formula).
    pub write_barrier: bool,
}

impl MetaCtrl for AddMetaCtrl {
    const LAYOUT: &'static Layout = &layout::ADD_META_CTRL;
    fn emit(&self) -> u32 {
        raw::add_meta_ctrl(
            self.sub.get(),
            self.out_dt.value(),
            self.accum_dt.value(),
            self.last as u32,
            self.wrbar as u32,
            self.f as u32,
        ) | write_barrier(self.write_barrier)
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Ok(AddMetaCtrl {
            sub: U3::masked(layout::MC_SUB.get(&w)),
            out_dt: dtype(&layout::MC_OUT_DT, &w),
            accum_dt: dtype(&layout::MC_ACCUM_DT, &w),
            last: flag(&layout::ADD_MC_LAST, &w),
            wrbar: flag(&layout::ADD_MC_WRBAR, &w),
            f: flag(&layout::ADD_MC_F, &w),
            write_barrier: flag(&layout::MC_WRITE_BARRIER, &w),
        })
    }
}

/// GCE / gradient meta-control (base `0x2500000`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct GradientMetaCtrl {
    pub sub: U3,
    pub in_dt: SdmaDtype,
    pub scale_dt: SdmaDtype,
    pub accum_dt: SdmaDtype,
    pub wrbar: bool,
    pub f: bool,
    pub last: bool,
    /// The driver's write barrier, bit 26 (on top of the runtime's formula).
    pub write_barrier: bool,
}

impl MetaCtrl for GradientMetaCtrl {
    const LAYOUT: &'static Layout = &layout::GRADIENT_META_CTRL;
    fn emit(&self) -> u32 {
        raw::gradient_meta_ctrl(
            self.sub.get(),
            self.in_dt.value(),
            self.scale_dt.value(),
            self.accum_dt.value(),
            self.wrbar as u32,
            self.f as u32,
            self.last as u32,
        ) | write_barrier(self.write_barrier)
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Ok(GradientMetaCtrl {
            sub: U3::masked(layout::MC_SUB.get(&w)),
            in_dt: dtype(&layout::MC_IN_DT, &w),
            scale_dt: dtype(&layout::MC_SCALE_DT, &w),
            accum_dt: dtype(&layout::MC_ACCUM_DT, &w),
            wrbar: flag(&layout::GCE_MC_WRBAR, &w),
            f: flag(&layout::GCE_MC_F, &w),
            last: flag(&layout::GCE_MC_LAST, &w),
            write_barrier: flag(&layout::MC_WRITE_BARRIER, &w),
        })
    }
}

/// EXT (combo) meta-control (base `0x2400000`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ExtMetaCtrl {
    pub sub: U3,
    pub mid_dt: SdmaDtype,
    pub accum_dt: SdmaDtype,
}

impl MetaCtrl for ExtMetaCtrl {
    const LAYOUT: &'static Layout = &layout::EXT_META_CTRL;
    fn emit(&self) -> u32 {
        raw::ext_meta_ctrl(self.sub.get(), self.mid_dt.value(), self.accum_dt.value())
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Ok(ExtMetaCtrl {
            sub: U3::masked(layout::MC_SUB.get(&w)),
            mid_dt: dtype(&layout::MC_MID_DT, &w),
            accum_dt: dtype(&layout::MC_ACCUM_DT, &w),
        })
    }
}

/// Replication meta-control (base `0xA00000`; see [`raw::replication_meta_ctrl`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ReplicationMetaCtrl {
    pub mode: U3,
    pub count: U16,
}

impl ReplicationMetaCtrl {
    pub(crate) fn from_fields(
        defs: [&FieldDef; 3],
        layout: &'static Layout,
        words: &[u32],
    ) -> Result<Self, FormatError> {
        let [count, ext, mode] = defs;
        let m = mode.get(words);
        if (m != 0) != flag(ext, words) {
            return Err(mismatch(layout, ext.word, "has the 0x4000000 bit disagreeing with the mode", ext.place(1)));
        }
        Ok(ReplicationMetaCtrl { mode: U3::masked(m), count: U16::masked(count.get(words)) })
    }
}

impl MetaCtrl for ReplicationMetaCtrl {
    const LAYOUT: &'static Layout = &layout::REPLICATION_META_CTRL;
    fn emit(&self) -> u32 {
        raw::replication_meta_ctrl(self.mode.get(), self.count.get())
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        Self::from_fields([&layout::REP_MC_COUNT, &layout::REP_MC_EXT, &layout::REP_MC_MODE], Self::LAYOUT, &w)
    }
}

/// The driver's write-barrier bit (26) of a CME meta-control word.
pub const WRITE_BARRIER: u32 = layout::MC_WRITE_BARRIER.place(1);

const fn write_barrier(on: bool) -> u32 {
    if on { WRITE_BARRIER } else { 0 }
}

/// The plain-copy meta-control word, every bit the public driver names (GAPS.md §12). The
/// driver writes [`CopyMetaCtrl::DRIVER_DEFAULT`] (`0x01080003`), with the write barrier on a
/// copy's last chunk (`0x05080003`); the engine executes only those two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CopyMetaCtrl {
    pub last_block: bool,
    pub first_block: bool,
    pub block_rsvd: bool,
    pub crc_iv_index: U3,
    /// The eight swap flags, bit 0 = meta_ctrl bit 6.
    pub endianness: U8,
    pub validate_crc: bool,
    pub use_stored_crc_iv: bool,
    pub send_crc: bool,
    pub store_crc: bool,
    pub store_source_crc: bool,
    pub copy_source_data: bool,
    pub op_type: U3,
    pub write_barrier: bool,
    pub rsvd: U5,
}

impl CopyMetaCtrl {
    /// The driver's copy word: first and last block, copy the source data.
    pub const DRIVER_DEFAULT: CopyMetaCtrl = CopyMetaCtrl {
        last_block: true,
        first_block: true,
        block_rsvd: false,
        crc_iv_index: U3::ZERO,
        endianness: U8::ZERO,
        validate_crc: false,
        use_stored_crc_iv: false,
        send_crc: false,
        store_crc: false,
        store_source_crc: false,
        copy_source_data: true,
        op_type: U3::ZERO,
        write_barrier: false,
        rsvd: U5::ZERO,
    };

    /// Whether this is the driver's copy word, with or without the write barrier: the only
    /// copies the engine executes (the CRC, swap and block fields change what a copy does,
    /// and no source says how).
    pub fn is_plain(&self) -> bool {
        CopyMetaCtrl { write_barrier: false, ..*self } == CopyMetaCtrl::DRIVER_DEFAULT
    }
}

impl Default for CopyMetaCtrl {
    fn default() -> Self {
        CopyMetaCtrl::DRIVER_DEFAULT
    }
}

impl MetaCtrl for CopyMetaCtrl {
    const LAYOUT: &'static Layout = &layout::COPY_META_CTRL;
    fn emit(&self) -> u32 {
        let l = |def: &FieldDef, v: u32| def.place(v);
        0x0100_0000
            | l(&layout::CP_MC_LAST_BLOCK, self.last_block as u32)
            | l(&layout::CP_MC_FIRST_BLOCK, self.first_block as u32)
            | l(&layout::CP_MC_BLOCK_RSVD, self.block_rsvd as u32)
            | l(&layout::CP_MC_CRC_IV, self.crc_iv_index.get())
            | l(&layout::CP_MC_ENDIAN, self.endianness.get())
            | l(&layout::CP_MC_VALIDATE_CRC, self.validate_crc as u32)
            | l(&layout::CP_MC_USE_STORED_IV, self.use_stored_crc_iv as u32)
            | l(&layout::CP_MC_SEND_CRC, self.send_crc as u32)
            | l(&layout::CP_MC_STORE_CRC, self.store_crc as u32)
            | l(&layout::CP_MC_STORE_SRC_CRC, self.store_source_crc as u32)
            | l(&layout::CP_MC_COPY_SRC, self.copy_source_data as u32)
            | l(&layout::CP_MC_OP_TYPE, self.op_type.get())
            | write_barrier(self.write_barrier)
            | l(&layout::CP_MC_RSVD, self.rsvd.get())
    }
    fn parse(word: u32) -> Result<Self, FormatError> {
        let w = [word];
        check_fit(Self::LAYOUT, &w)?;
        let f = |def: &FieldDef| flag(def, &w);
        Ok(CopyMetaCtrl {
            last_block: f(&layout::CP_MC_LAST_BLOCK),
            first_block: f(&layout::CP_MC_FIRST_BLOCK),
            block_rsvd: f(&layout::CP_MC_BLOCK_RSVD),
            crc_iv_index: U3::masked(layout::CP_MC_CRC_IV.get(&w)),
            endianness: U8::masked(layout::CP_MC_ENDIAN.get(&w)),
            validate_crc: f(&layout::CP_MC_VALIDATE_CRC),
            use_stored_crc_iv: f(&layout::CP_MC_USE_STORED_IV),
            send_crc: f(&layout::CP_MC_SEND_CRC),
            store_crc: f(&layout::CP_MC_STORE_CRC),
            store_source_crc: f(&layout::CP_MC_STORE_SRC_CRC),
            copy_source_data: f(&layout::CP_MC_COPY_SRC),
            op_type: U3::masked(layout::CP_MC_OP_TYPE.get(&w)),
            write_barrier: f(&layout::MC_WRITE_BARRIER),
            rsvd: U5::masked(layout::CP_MC_RSVD.get(&w)),
        })
    }
}

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
