//! Encode and decode any layout by name, from named field values — the generic face of the
//! typed codecs, used by tools (the `cce encode` / `cce decode` commands) that pick the encoder
//! at run time.
//!
//! [`encode`] range-checks every value through the typed builders (an out-of-range value is a
//! [`FormatError::FieldOutOfRange`] naming the field), then emits through the runtime formula.
//! [`decode`] never fails: it reports each field, whether the words are an exact encoding, and
//! any bits it cannot explain.

use alloc::vec::Vec;

use crate::bits::UInt;
use crate::descriptor::{
    Descriptor, FmaDescriptor, FmaOperand, GradientDescriptor, LenCtrl, M2sDataDescriptor, MinMaxDescriptor,
    ReplicationDescriptor, S2mDataDescriptor, SeedInitDescriptor,
};
use crate::dtype::SdmaDtype;
use crate::error::FormatError;
use crate::layout::{self, FieldDef, FieldValue, Layout};
use crate::meta_ctrl::{
    AddMetaCtrl, CopyMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl,
    ReplicationMetaCtrl,
};

/// Field values by name; a name that is absent reads as 0.
pub trait FieldSource {
    /// The value given for `name`, or 0.
    fn value(&self, name: &str) -> u64;
}

impl FieldSource for [(&str, u64)] {
    fn value(&self, name: &str) -> u64 {
        self.iter().rev().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v)
    }
}

struct Get<'a, S: FieldSource + ?Sized>(&'a S);

impl<S: FieldSource + ?Sized> Get<'_, S> {
    fn uint<const B: u8>(&self, f: &FieldDef) -> Result<UInt<B>, FormatError> {
        UInt::new(f.name, self.0.value(f.name))
    }
    fn flag(&self, f: &FieldDef) -> Result<bool, FormatError> {
        Ok(self.uint::<1>(f)?.get() == 1)
    }
    fn u32(&self, f: &FieldDef) -> Result<u32, FormatError> {
        Ok(self.uint::<32>(f)?.get())
    }
    fn dtype(&self, f: &FieldDef) -> Result<SdmaDtype, FormatError> {
        Ok(SdmaDtype::from_nibble(self.uint::<4>(f)?.get()))
    }
    fn sel(&self, f: &FieldDef) -> Result<FmaOperand, FormatError> {
        Ok(FmaOperand::from_bits(self.uint::<2>(f)?.get()))
    }
}

/// Every layout [`encode`] and [`decode`] know, in the order the CLI lists them.
pub fn layouts() -> impl Iterator<Item = &'static Layout> {
    layout::META_CTRL_LAYOUTS.iter().chain(layout::DESCRIPTOR_LAYOUTS.iter()).copied()
}

/// Encodes `layout` from named values (flags and patterns take 0 or 1; dtypes their value; the
/// FMA scale its f32 bits). Returns `layout.words` words.
pub fn encode<S: FieldSource + ?Sized>(target: &Layout, values: &S) -> Result<Vec<u32>, FormatError> {
    use crate::layout as l;
    let layout = target;
    let g = Get(values);
    let words: [u32; 4] = match layout.name {
        "fma-meta-ctrl" => one(FmaMetaCtrl {
            sub: g.uint(&l::MC_SUB)?,
            in_dt: g.dtype(&l::MC_IN_DT)?,
            scale_dt: g.dtype(&l::MC_SCALE_DT)?,
            accum_dt: g.dtype(&l::MC_ACCUM_DT)?,
            f4: g.flag(&l::FMA_MC_F4)?,
            f5: g.flag(&l::FMA_MC_F5)?,
            f6: g.flag(&l::FMA_MC_F6)?,
            write_barrier: g.flag(&l::MC_WRITE_BARRIER)?,
        }
        .emit()),
        "min-max-meta-ctrl" => one(MinMaxMetaCtrl {
            sub: g.uint(&l::MC_SUB)?,
            const_dt: g.uint(&l::MM_MC_CONST_DT)?,
            in_dt: g.dtype(&l::MC_IN_DT)?,
            out_dt: g.dtype(&l::MM_MC_OUT_DT)?,
            accum_dt: g.dtype(&l::MC_ACCUM_DT)?,
            notif: g.flag(&l::MM_MC_NOTIF)?,
            wrbar: g.flag(&l::MM_MC_WRBAR)?,
            use_const: g.flag(&l::MM_MC_USE_CONST)?,
            last: g.flag(&l::MM_MC_LAST)?,
            write_barrier: g.flag(&l::MC_WRITE_BARRIER)?,
        }
        .emit()),
        "add-meta-ctrl" => one(AddMetaCtrl {
            sub: g.uint(&l::MC_SUB)?,
            out_dt: g.dtype(&l::MC_OUT_DT)?,
            accum_dt: g.dtype(&l::MC_ACCUM_DT)?,
            last: g.flag(&l::ADD_MC_LAST)?,
            wrbar: g.flag(&l::ADD_MC_WRBAR)?,
            f: g.flag(&l::ADD_MC_F)?,
            write_barrier: g.flag(&l::MC_WRITE_BARRIER)?,
        }
        .emit()),
        "gradient-meta-ctrl" => one(GradientMetaCtrl {
            sub: g.uint(&l::MC_SUB)?,
            in_dt: g.dtype(&l::MC_IN_DT)?,
            scale_dt: g.dtype(&l::MC_SCALE_DT)?,
            accum_dt: g.dtype(&l::MC_ACCUM_DT)?,
            wrbar: g.flag(&l::GCE_MC_WRBAR)?,
            f: g.flag(&l::GCE_MC_F)?,
            last: g.flag(&l::GCE_MC_LAST)?,
            write_barrier: g.flag(&l::MC_WRITE_BARRIER)?,
        }
        .emit()),
        "ext-meta-ctrl" => one(ExtMetaCtrl {
            sub: g.uint(&l::MC_SUB)?,
            mid_dt: g.dtype(&l::MC_MID_DT)?,
            accum_dt: g.dtype(&l::MC_ACCUM_DT)?,
        }
        .emit()),
        "replication-meta-ctrl" => {
            one(ReplicationMetaCtrl { mode: g.uint(&l::REP_MC_MODE)?, count: g.uint(&l::REP_MC_COUNT)? }.emit())
        }
        // Every field explicit: a name left out is 0, as for every other encoder (the driver's
        // word is `--last-block 1 --first-block 1 --copy-source-data 1`).
        "copy-meta-ctrl" => one(CopyMetaCtrl {
            last_block: g.flag(&l::CP_MC_LAST_BLOCK)?,
            first_block: g.flag(&l::CP_MC_FIRST_BLOCK)?,
            block_rsvd: g.flag(&l::CP_MC_BLOCK_RSVD)?,
            crc_iv_index: g.uint(&l::CP_MC_CRC_IV)?,
            endianness: g.uint(&l::CP_MC_ENDIAN)?,
            validate_crc: g.flag(&l::CP_MC_VALIDATE_CRC)?,
            use_stored_crc_iv: g.flag(&l::CP_MC_USE_STORED_IV)?,
            send_crc: g.flag(&l::CP_MC_SEND_CRC)?,
            store_crc: g.flag(&l::CP_MC_STORE_CRC)?,
            store_source_crc: g.flag(&l::CP_MC_STORE_SRC_CRC)?,
            copy_source_data: g.flag(&l::CP_MC_COPY_SRC)?,
            op_type: g.uint(&l::CP_MC_OP_TYPE)?,
            write_barrier: g.flag(&l::MC_WRITE_BARRIER)?,
            rsvd: g.uint(&l::CP_MC_RSVD)?,
        }
        .emit()),
        "fma-descriptor" => FmaDescriptor {
            meta_idx: g.uint(&l::D_META_IDX)?,
            wb: g.uint(&l::D_WB)?,
            sub: g.uint(&l::FMA_D_SUB)?,
            a10: g.flag(&l::FMA_D_A10)?,
            a8: g.uint(&l::FMA_D_A8)?,
            sema: g.uint(&l::FMA_D_SEMA)?,
            a_sel: g.sel(&l::FMA_D_A_SEL)?,
            b_sel: g.sel(&l::FMA_D_B_SEL)?,
            c_sel: g.sel(&l::FMA_D_C_SEL)?,
            scale_bits: g.u32(&l::FMA_D_SCALE)?,
            more: g.flag(&l::D_MORE)?,
        }
        .emit(),
        "min-max-descriptor" => MinMaxDescriptor {
            meta_idx: g.uint(&l::D_META_IDX)?,
            wb: g.uint(&l::D_WB)?,
            use_const: g.flag(&l::MM_D_USE_CONST)?,
            const_dt: g.uint(&l::MM_D_CONST_DT)?,
            length: g.uint(&l::MM_D_LENGTH)?,
            constant: g.u32(&l::MM_D_CONSTANT)?,
            more: g.flag(&l::D_MORE)?,
        }
        .emit(),
        "seed-init-descriptor" => SeedInitDescriptor {
            meta_idx: g.uint(&l::D_META_IDX_MODEL)?,
            wb: g.uint(&l::D_WB_MODEL)?,
            seed_en: g.flag(&l::SEED_D_SEED_EN)?,
            combo_member: g.flag(&l::SEED_D_COMBO)?,
            more: g.flag(&l::D_MORE)?,
            seed: g.u32(&l::SEED_D_SEED)?,
        }
        .emit(),
        "replication-descriptor" => ReplicationDescriptor {
            meta_idx: g.uint(&l::D_META_IDX_MODEL)?,
            wb: g.uint(&l::D_WB_MODEL)?,
            mode: g.uint(&l::REP_D_MODE)?,
            count: g.uint(&l::REP_D_COUNT)?,
            more: g.flag(&l::D_MORE)?,
            ext_meta: g.u32(&l::REP_D_EXT_META)?,
        }
        .emit(),
        "gradient-descriptor" => GradientDescriptor {
            meta_idx: g.uint(&l::D_META_IDX_MODEL)?,
            wb: g.uint(&l::D_WB_MODEL)?,
            mode: g.uint(&l::GRAD_D_MODE)?,
            length: g.uint(&l::GRAD_D_LENGTH)?,
            more: g.flag(&l::D_MORE)?,
            header: g.u32(&l::GRAD_D_HEADER)?,
        }
        .emit(),
        "m2s-data" | "s2m-data" => {
            let lc = LenCtrl {
                length_field: g.uint(&l::LC_LENGTH)?,
                meta: g.flag(&l::LC_META)?,
                ring_id: g.uint(&l::LC_RING_ID)?,
                first: g.flag(&l::LC_FIRST)?,
                last: g.flag(&l::LC_LAST)?,
                int_en: g.flag(&l::LC_INT_EN)?,
                strong_order: layout.name == "s2m-data" && g.flag(&l::LC_SOW)?,
                dmb: g.flag(&l::LC_DMB)?,
                concat: g.flag(&l::LC_CONCAT)?,
            };
            if layout.name == "m2s-data" {
                let buf_ptr = (g.u32(&l::M2S_BUF_HI)? as u64) << 32 | g.u32(&l::M2S_BUF_LO)? as u64;
                M2sDataDescriptor { len_ctrl: lc, meta_ctrl: g.u32(&l::M2S_META_CTRL)?, buf_ptr }.emit()
            } else {
                let buf1_ptr = (g.u32(&l::S2M_BUF1_HI)? as u64) << 32 | g.u32(&l::S2M_BUF1_LO)? as u64;
                S2mDataDescriptor { len_ctrl: lc, buf2_ptr_lo: g.u32(&l::S2M_BUF2_LO)?, buf1_ptr }.emit()
            }
        }
        _ => {
            return Err(FormatError::Rule { message: "no encoder for this layout", tag: crate::Tag::Model });
        }
    };
    Ok(words[..layout.words as usize].to_vec())
}

fn one(w: u32) -> [u32; 4] {
    [w, 0, 0, 0]
}

/// What [`decode`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Each field's raw value, in table order.
    pub fields: Vec<FieldValue>,
    /// `Ok` if the words are an exact encoding of the layout, else why not.
    pub exact: Result<(), FormatError>,
    /// Per word: set bits no field or fixed constant explains.
    pub unexplained: [u32; 4],
    /// Per word: fixed bits that are clear.
    pub missing_fixed: [u32; 4],
}

/// Decodes `words` as `layout`. Never fails and never panics.
pub fn decode(layout: &Layout, words: &[u32]) -> Decoded {
    let mut w = [0u32; 4];
    for (dst, src) in w.iter_mut().zip(words) {
        *dst = *src;
    }
    let exact = if words.len() != layout.words as usize {
        Err(FormatError::ByteLength { what: layout.name, expected: 4 * layout.words as usize, got: 4 * words.len() })
    } else {
        match layout.name {
            "fma-meta-ctrl" => FmaMetaCtrl::parse(w[0]).map(drop),
            "min-max-meta-ctrl" => MinMaxMetaCtrl::parse(w[0]).map(drop),
            "add-meta-ctrl" => AddMetaCtrl::parse(w[0]).map(drop),
            "gradient-meta-ctrl" => GradientMetaCtrl::parse(w[0]).map(drop),
            "ext-meta-ctrl" => ExtMetaCtrl::parse(w[0]).map(drop),
            "replication-meta-ctrl" => ReplicationMetaCtrl::parse(w[0]).map(drop),
            "copy-meta-ctrl" => CopyMetaCtrl::parse(w[0]).map(drop),
            "fma-descriptor" => FmaDescriptor::parse(w).map(drop),
            "min-max-descriptor" => MinMaxDescriptor::parse(w).map(drop),
            "seed-init-descriptor" => SeedInitDescriptor::parse(w).map(drop),
            "replication-descriptor" => ReplicationDescriptor::parse(w).map(drop),
            "gradient-descriptor" => GradientDescriptor::parse(w).map(drop),
            "m2s-data" => M2sDataDescriptor::parse(w).map(drop),
            "s2m-data" => S2mDataDescriptor::parse(w).map(drop),
            _ => Err(FormatError::Rule { message: "no decoder for this layout", tag: crate::Tag::Model }),
        }
    };
    Decoded {
        fields: layout.describe(&w),
        exact,
        unexplained: layout.unexplained(&w),
        missing_fixed: layout.missing_fixed(&w),
    }
}
