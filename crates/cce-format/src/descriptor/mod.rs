//! The 16-byte descriptors: the CCE compute descriptors (study §2.2–§2.5) and the public UDMA
//! data descriptors (GAPS.md §6).
//!
//! On the ring a descriptor is W0, W1, W2, W3, each little-endian. [`raw`] holds the runtime's
//! formulas as disassembled; the typed descriptors range-check their fields, add the MODEL
//! fields the study leaves open (docs/MODEL.md), and round-trip: `parse(emit(x)) == x`.

use crate::bits::{U2, U3, U8, U16, U23, U24};
use crate::error::FormatError;
use crate::layout::{self, Layout};
use crate::meta_ctrl::{self, ReplicationMetaCtrl, check_fit, flag, mismatch};

/// Bytes in one descriptor.
pub const DESC_BYTES: usize = 16;

pub mod raw;

/// A typed 16-byte descriptor.
pub trait Descriptor: Sized {
    /// The layout.
    const LAYOUT: &'static Layout;
    /// The four words.
    fn emit(&self) -> [u32; 4];
    /// Reads words that are an exact encoding; anything else is an error naming the problem.
    fn parse(words: [u32; 4]) -> Result<Self, FormatError>;

    /// The 16 ring bytes (W0..W3, little-endian).
    fn to_bytes(&self) -> [u8; DESC_BYTES] {
        words_to_bytes(self.emit())
    }

    /// Parses 16 ring bytes.
    fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::parse(bytes_to_words(bytes)?)
    }
}

/// W0..W3 as 16 little-endian bytes.
pub fn words_to_bytes(words: [u32; 4]) -> [u8; DESC_BYTES] {
    let mut b = [0u8; DESC_BYTES];
    for (chunk, w) in b.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// The 64-bit buffer address a data descriptor carries in W2 (low half) and W3 (high half):
/// the M2S `buf_ptr`, the S2M `buf1_ptr` (public UDMA layout). Reads any words.
pub const fn data_buf_ptr(words: [u32; 4]) -> u64 {
    (words[3] as u64) << 32 | words[2] as u64
}

/// 16 little-endian bytes as W0..W3; any other length is an error.
pub fn bytes_to_words(bytes: &[u8]) -> Result<[u32; 4], FormatError> {
    let b: &[u8; DESC_BYTES] = bytes.try_into().map_err(|_| FormatError::ByteLength {
        what: "a descriptor",
        expected: DESC_BYTES,
        got: bytes.len(),
    })?;
    Ok(core::array::from_fn(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])))
}

/// The FMA operand selector (`al_sdma_m2s_fma_operand`, study §3.1). The field is 2 bits wide;
/// value 3 has no known meaning and is kept as [`FmaOperand::Reserved3`] so decoding loses
/// nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FmaOperand {
    /// The running accumulator (in-engine partial).
    #[default]
    Stored = 0,
    /// The source stream read on the M2S leg.
    Input = 1,
    /// The descriptor's fp32 scale (W3).
    Scale = 2,
    /// Not a known operand.
    Reserved3 = 3,
}

impl FmaOperand {
    /// The selector for a 2-bit value.
    pub const fn from_bits(v: u32) -> FmaOperand {
        match v & 3 {
            0 => FmaOperand::Stored,
            1 => FmaOperand::Input,
            2 => FmaOperand::Scale,
            _ => FmaOperand::Reserved3,
        }
    }

    /// The 2-bit value.
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// Name (`stored`, `input`, `scale`, `reserved3`).
    pub const fn name(self) -> &'static str {
        match self {
            FmaOperand::Stored => "stored",
            FmaOperand::Input => "input",
            FmaOperand::Scale => "scale",
            FmaOperand::Reserved3 => "reserved3",
        }
    }
}

/// The default FMA selectors of `vring_add_dma_packet_cce_int` (study §3.1, HIGH):
/// a = input, b = scale, c = stored, i.e. `acc' = input · scale + acc`.
pub const DEFAULT_FMA_SELECTORS: [FmaOperand; 3] = [FmaOperand::Input, FmaOperand::Scale, FmaOperand::Stored];

/// The FMA compute descriptor (study §2.3) plus the MODEL more-bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct FmaDescriptor {
    pub meta_idx: U8,
    pub wb: U23,
    pub sub: U3,
    pub a10: bool,
    pub a8: U3,
    pub sema: U24,
    pub a_sel: FmaOperand,
    pub b_sel: FmaOperand,
    pub c_sel: FmaOperand,
    /// The fp32 scale as bits (so every pattern, NaNs included, round-trips).
    pub scale_bits: u32,
    /// MODEL: more descriptors of this combo follow (W2 bit 30).
    pub more: bool,
}

impl FmaDescriptor {
    /// The scale as a float.
    pub fn scale(&self) -> f32 {
        f32::from_bits(self.scale_bits)
    }
}

impl Descriptor for FmaDescriptor {
    const LAYOUT: &'static Layout = &layout::FMA_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        let mut w = raw::fma_descriptor(
            self.meta_idx.get(),
            self.a_sel.bits(),
            self.b_sel.bits(),
            self.c_sel.bits(),
            self.scale_bits,
            self.sema.get(),
            self.wb.get(),
            self.a8.get(),
            self.sub.get(),
            self.a10 as u32,
        );
        w[2] |= layout::D_MORE.place(self.more as u32);
        w
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        Ok(FmaDescriptor {
            meta_idx: U8::masked(layout::D_META_IDX.get(&words)),
            wb: U23::masked(layout::D_WB.get(&words)),
            sub: U3::masked(layout::FMA_D_SUB.get(&words)),
            a10: flag(&layout::FMA_D_A10, &words),
            a8: U3::masked(layout::FMA_D_A8.get(&words)),
            sema: U24::masked(layout::FMA_D_SEMA.get(&words)),
            a_sel: FmaOperand::from_bits(layout::FMA_D_A_SEL.get(&words)),
            b_sel: FmaOperand::from_bits(layout::FMA_D_B_SEL.get(&words)),
            c_sel: FmaOperand::from_bits(layout::FMA_D_C_SEL.get(&words)),
            scale_bits: words[3],
            more: flag(&layout::D_MORE, &words),
        })
    }
}

/// The MIN/MAX compute descriptor (study §2.4) plus the MODEL more-bit. `const_dt` is written
/// only with `use_const`, so only values with `const_dt == 0` round-trip without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct MinMaxDescriptor {
    pub meta_idx: U8,
    pub wb: U23,
    pub use_const: bool,
    pub const_dt: U3,
    pub length: U24,
    pub constant: u32,
    /// MODEL: more descriptors of this combo follow (W2 bit 30).
    pub more: bool,
}

impl Descriptor for MinMaxDescriptor {
    const LAYOUT: &'static Layout = &layout::MIN_MAX_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        let mut w = raw::min_max_descriptor(
            self.meta_idx.get(),
            self.constant,
            self.length.get(),
            self.use_const as u32,
            self.const_dt.get(),
            self.wb.get(),
        );
        w[2] |= layout::D_MORE.place(self.more as u32);
        w
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        let use_const = flag(&layout::MM_D_USE_CONST, &words);
        let const_dt = layout::MM_D_CONST_DT.get(&words);
        if !use_const && const_dt != 0 {
            return Err(mismatch(
                Self::LAYOUT,
                1,
                "has a const-dt without the constant sub-descriptor",
                layout::MM_D_CONST_DT.place(const_dt),
            ));
        }
        Ok(MinMaxDescriptor {
            meta_idx: U8::masked(layout::D_META_IDX.get(&words)),
            wb: U23::masked(layout::D_WB.get(&words)),
            use_const,
            const_dt: U3::masked(const_dt),
            length: U24::masked(layout::MM_D_LENGTH.get(&words)),
            constant: words[3],
            more: flag(&layout::D_MORE, &words),
        })
    }
}

/// The seed-init descriptor (study §2.5: `W0 |= 0x800000`, `W1 = 0x6000000` with seed-enable);
/// the rest is MODEL: W0 carries wb and meta-idx as in the FMA frame, W2 the combo-member flag
/// (0x4000000) and the more-bit, W3 the 32-bit seed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct SeedInitDescriptor {
    pub meta_idx: U8,
    pub wb: U23,
    pub seed_en: bool,
    pub combo_member: bool,
    pub more: bool,
    pub seed: u32,
}

impl Descriptor for SeedInitDescriptor {
    const LAYOUT: &'static Layout = &layout::SEED_INIT_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        let mut w = raw::seed_init_descriptor(self.seed_en as u32);
        w[0] |= layout::D_WB_MODEL.place(self.wb.get()) | layout::D_META_IDX_MODEL.place(self.meta_idx.get());
        w[2] |= layout::SEED_D_COMBO.place(self.combo_member as u32) | layout::D_MORE.place(self.more as u32);
        w[3] = self.seed;
        w
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        Ok(SeedInitDescriptor {
            meta_idx: U8::masked(layout::D_META_IDX_MODEL.get(&words)),
            wb: U23::masked(layout::D_WB_MODEL.get(&words)),
            seed_en: flag(&layout::SEED_D_SEED_EN, &words),
            combo_member: flag(&layout::SEED_D_COMBO, &words),
            more: flag(&layout::D_MORE, &words),
            seed: words[3],
        })
    }
}

/// The replication descriptor: W1 is the replication meta-control word (study §2.5 and the
/// companion chapter); W0 (FMA frame), W2 (more-bit) and W3 (the EXT meta-control word that
/// tags the combo packet) are MODEL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ReplicationDescriptor {
    pub meta_idx: U8,
    pub wb: U23,
    pub mode: U3,
    pub count: U16,
    pub more: bool,
    /// MODEL: the EXT meta-control word tagging the combo (W3).
    pub ext_meta: u32,
}

impl Descriptor for ReplicationDescriptor {
    const LAYOUT: &'static Layout = &layout::REPLICATION_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        [
            layout::COMPUTE_W0
                | layout::D_WB_MODEL.place(self.wb.get())
                | layout::D_META_IDX_MODEL.place(self.meta_idx.get()),
            meta_ctrl::raw::replication_meta_ctrl(self.mode.get(), self.count.get()),
            layout::D_MORE.place(self.more as u32),
            self.ext_meta,
        ]
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        let rep = ReplicationMetaCtrl::from_fields(
            [&layout::REP_D_COUNT, &layout::REP_D_EXT, &layout::REP_D_MODE],
            Self::LAYOUT,
            &words,
        )?;
        Ok(ReplicationDescriptor {
            meta_idx: U8::masked(layout::D_META_IDX_MODEL.get(&words)),
            wb: U23::masked(layout::D_WB_MODEL.get(&words)),
            mode: rep.mode,
            count: rep.count,
            more: flag(&layout::D_MORE, &words),
            ext_meta: words[3],
        })
    }
}

/// The gradient (GCE) descriptor: W1 = `(mode << 29) | 0x6500001` (companion chapter, MED);
/// W0, W2 and W3 are MODEL. The GCE codec itself is unknown (GAPS.md §9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct GradientDescriptor {
    pub meta_idx: U8,
    pub wb: U23,
    pub mode: U3,
    pub length: U24,
    pub more: bool,
    pub header: u32,
}

impl Descriptor for GradientDescriptor {
    const LAYOUT: &'static Layout = &layout::GRADIENT_DESCRIPTOR;
    fn emit(&self) -> [u32; 4] {
        [
            layout::COMPUTE_W0
                | layout::D_WB_MODEL.place(self.wb.get())
                | layout::D_META_IDX_MODEL.place(self.meta_idx.get()),
            0x0650_0001 | layout::GRAD_D_MODE.place(self.mode.get()),
            layout::GRAD_D_LENGTH.place(self.length.get()) | layout::D_MORE.place(self.more as u32),
            self.header,
        ]
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        Ok(GradientDescriptor {
            meta_idx: U8::masked(layout::D_META_IDX_MODEL.get(&words)),
            wb: U23::masked(layout::D_WB_MODEL.get(&words)),
            mode: U3::masked(layout::GRAD_D_MODE.get(&words)),
            length: U24::masked(layout::GRAD_D_LENGTH.get(&words)),
            more: flag(&layout::D_MORE, &words),
            header: words[3],
        })
    }
}

/// Largest byte count one data descriptor carries (UDMA `MAX_DMA_DESC_SIZE`).
pub const MAX_DATA_DESC_BYTES: u32 = 65_536;

/// The `len_ctrl` word of a UDMA data descriptor (GAPS.md §6, MED).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct LenCtrl {
    /// The 16-bit length field; 0 means 65536 bytes.
    pub length_field: U16,
    pub meta: bool,
    pub ring_id: U2,
    pub first: bool,
    pub last: bool,
    pub int_en: bool,
    /// STRONG_ORDER_WR: S2M only (v3+). M2S emit leaves bit 29 clear; M2S parse refuses it.
    pub strong_order: bool,
    pub dmb: bool,
    pub concat: bool,
}

impl LenCtrl {
    /// The byte count the length field stands for (1..=65536).
    pub const fn byte_len(&self) -> u32 {
        match self.length_field.get() {
            0 => MAX_DATA_DESC_BYTES,
            n => n,
        }
    }

    /// Sets the length from a byte count in 1..=65536 (65536 is written as 0).
    pub fn with_byte_len(mut self, bytes: u64) -> Result<Self, FormatError> {
        if bytes == 0 || bytes > MAX_DATA_DESC_BYTES as u64 {
            return Err(FormatError::DescriptorLength(bytes));
        }
        self.length_field = U16::masked(bytes as u32);
        Ok(self)
    }

    fn emit(&self) -> u32 {
        layout::LC_LENGTH.place(self.length_field.get())
            | layout::LC_META.place(self.meta as u32)
            | layout::LC_RING_ID.place(self.ring_id.get())
            | layout::LC_FIRST.place(self.first as u32)
            | layout::LC_LAST.place(self.last as u32)
            | layout::LC_INT_EN.place(self.int_en as u32)
            | layout::LC_SOW.place(self.strong_order as u32)
            | layout::LC_DMB.place(self.dmb as u32)
            | layout::LC_CONCAT.place(self.concat as u32)
    }

    fn parse(words: &[u32]) -> LenCtrl {
        LenCtrl {
            length_field: U16::masked(layout::LC_LENGTH.get(words)),
            meta: flag(&layout::LC_META, words),
            ring_id: U2::masked(layout::LC_RING_ID.get(words)),
            first: flag(&layout::LC_FIRST, words),
            last: flag(&layout::LC_LAST, words),
            int_en: flag(&layout::LC_INT_EN, words),
            strong_order: flag(&layout::LC_SOW, words),
            dmb: flag(&layout::LC_DMB, words),
            concat: flag(&layout::LC_CONCAT, words),
        }
    }
}

impl M2sDataDescriptor {
    /// The byte count a len_ctrl word stands for (its `[15:0]`, 0 = 65536).
    pub const fn parse_len(len_ctrl: u32) -> u32 {
        match len_ctrl & 0xFFFF {
            0 => MAX_DATA_DESC_BYTES,
            n => n,
        }
    }
}

/// The UDMA M2S (tx) data descriptor: `{len_ctrl, meta_ctrl, buf_ptr}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct M2sDataDescriptor {
    pub len_ctrl: LenCtrl,
    /// The meta-control word (a CCE meta-control word on a compute packet).
    pub meta_ctrl: u32,
    /// Source address.
    pub buf_ptr: u64,
}

impl Descriptor for M2sDataDescriptor {
    const LAYOUT: &'static Layout = &layout::M2S_DATA;
    fn emit(&self) -> [u32; 4] {
        // Strong-order is an S2M flag: it is not written on M2S (documented on `LenCtrl`).
        let len_ctrl = self.len_ctrl.emit() & !layout::LC_SOW.span.mask();
        [len_ctrl, self.meta_ctrl, self.buf_ptr as u32, (self.buf_ptr >> 32) as u32]
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        // Bit 29 (strong-order) is an S2M flag; the M2S layout leaves it unexplained.
        check_fit(Self::LAYOUT, &words)?;
        Ok(M2sDataDescriptor { len_ctrl: LenCtrl::parse(&words), meta_ctrl: words[1], buf_ptr: data_buf_ptr(words) })
    }
}

/// The UDMA S2M (rx) data descriptor: `{len_ctrl, buf2_ptr_lo, buf1_ptr}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct S2mDataDescriptor {
    pub len_ctrl: LenCtrl,
    /// Second buffer pointer, low half; zero on memory-to-memory transfers.
    pub buf2_ptr_lo: u32,
    /// Destination address.
    pub buf1_ptr: u64,
}

impl Descriptor for S2mDataDescriptor {
    const LAYOUT: &'static Layout = &layout::S2M_DATA;
    fn emit(&self) -> [u32; 4] {
        [self.len_ctrl.emit(), self.buf2_ptr_lo, self.buf1_ptr as u32, (self.buf1_ptr >> 32) as u32]
    }
    fn parse(words: [u32; 4]) -> Result<Self, FormatError> {
        check_fit(Self::LAYOUT, &words)?;
        Ok(S2mDataDescriptor { len_ctrl: LenCtrl::parse(&words), buf2_ptr_lo: words[1], buf1_ptr: data_buf_ptr(words) })
    }
}
