//! The plain-copy meta-control word (public driver `udma/udma_m2m.c`: the M2S meta-control
//! bitfield and its default 0x01080003, the CME word's write barrier at bit 26; GAPS.md §12).
//! Every bit is named; the op field `[25:23]` = 2 is the fixed part that makes a word a copy.

use crate::bits::{U3, U5, U8};
use crate::layout::FieldDef;
use crate::layout::FieldKind::*;
use crate::tag::Tag::*;

use super::{MC_WRITE_BARRIER, Rules, word};

/// Copy `[0]` block attribute: last block.
pub const CP_MC_LAST_BLOCK: FieldDef =
    FieldDef::new("last-block", 0, 0, 1, Flag, High, "block attribute: last block (driver default 1)");
/// Copy `[1]` block attribute: first block.
pub const CP_MC_FIRST_BLOCK: FieldDef =
    FieldDef::new("first-block", 0, 1, 1, Flag, High, "block attribute: first block (driver default 1)");
/// Copy `[2]` block attribute, reserved.
pub const CP_MC_BLOCK_RSVD: FieldDef =
    FieldDef::new("block-rsvd", 0, 2, 1, Flag, High, "block attribute, reserved (driver default 0)");
/// Copy `[5:3]` cached CRC IV index.
pub const CP_MC_CRC_IV: FieldDef =
    FieldDef::new("crc-iv-index", 0, 3, 3, Uint, High, "cached CRC IV index (driver default 0)");
/// Copy `[13:6]` the eight endianness swap flags.
pub const CP_MC_ENDIAN: FieldDef = FieldDef::new(
    "endianness",
    0,
    6,
    8,
    Uint,
    High,
    "byte / bit swaps of result, intermediate, source, init (driver default 0)",
);
/// Copy bit 14: validate CRC.
pub const CP_MC_VALIDATE_CRC: FieldDef =
    FieldDef::new("validate-crc", 0, 14, 1, Flag, High, "validate CRC (driver default 0)");
/// Copy bit 15: use the stored CRC IV.
pub const CP_MC_USE_STORED_IV: FieldDef =
    FieldDef::new("use-stored-crc-iv", 0, 15, 1, Flag, High, "use stored CRC IV (driver default 0)");
/// Copy bit 16: send the CRC result.
pub const CP_MC_SEND_CRC: FieldDef =
    FieldDef::new("send-crc", 0, 16, 1, Flag, High, "send CRC result (driver default 0)");
/// Copy bit 17: store the CRC result.
pub const CP_MC_STORE_CRC: FieldDef =
    FieldDef::new("store-crc", 0, 17, 1, Flag, High, "store CRC result (driver default 0)");
/// Copy bit 18: store the source CRC.
pub const CP_MC_STORE_SRC_CRC: FieldDef =
    FieldDef::new("store-source-crc", 0, 18, 1, Flag, High, "store source CRC (driver default 0)");
/// Copy bit 19: copy the source data.
pub const CP_MC_COPY_SRC: FieldDef =
    FieldDef::new("copy-source-data", 0, 19, 1, Flag, High, "copy source data (driver default 1)");
/// Copy `[22:20]` op type.
pub const CP_MC_OP_TYPE: FieldDef = FieldDef::new("op-type", 0, 20, 3, Uint, High, "op type (driver default 0)");
/// Copy `[31:27]`, reserved in the driver's bitfields.
pub const CP_MC_RSVD: FieldDef = FieldDef::new("rsvd", 0, 27, 5, Uint, High, "reserved (driver default 0)");
word! {
    /// The plain-copy meta-control word, every bit the public driver names (GAPS.md §12). The
    /// driver writes [`CopyMetaCtrl::DRIVER_DEFAULT`] (`0x01080003`), with the write barrier on a
    /// copy's last chunk (`0x05080003`); the engine executes only those two.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct CopyMetaCtrl: meta_ctrl;
    /// The plain-copy meta-control word: op `[25:23]` = 2 (the driver's `ssmae_op` 0b010).
    pub const COPY_META_CTRL = {
        name: "copy-meta-ctrl",
        fixed: [0x0100_0000, 0, 0, 0],
        fixed_tag: High,
        source: "public driver udma/udma_m2m.c: M2S meta_ctrl bitfield, default 0x01080003, write barrier bit 26 (GAPS.md §12)",
    };
    fields {
        /// Block attribute: last block.
        last_block: bool = CP_MC_LAST_BLOCK,
        /// Block attribute: first block.
        first_block: bool = CP_MC_FIRST_BLOCK,
        /// Block attribute, reserved.
        block_rsvd: bool = CP_MC_BLOCK_RSVD,
        /// Cached CRC IV index.
        crc_iv_index: U3 = CP_MC_CRC_IV,
        /// The eight swap flags, bit 0 = meta_ctrl bit 6.
        endianness: U8 = CP_MC_ENDIAN,
        /// Validate the CRC.
        validate_crc: bool = CP_MC_VALIDATE_CRC,
        /// Use the stored CRC IV.
        use_stored_crc_iv: bool = CP_MC_USE_STORED_IV,
        /// Send the CRC result.
        send_crc: bool = CP_MC_SEND_CRC,
        /// Store the CRC result.
        store_crc: bool = CP_MC_STORE_CRC,
        /// Store the source CRC.
        store_source_crc: bool = CP_MC_STORE_SRC_CRC,
        /// Copy the source data.
        copy_source_data: bool = CP_MC_COPY_SRC,
        /// Op type.
        op_type: U3 = CP_MC_OP_TYPE,
        /// The CME word's write barrier, bit 26.
        write_barrier: bool = MC_WRITE_BARRIER,
        /// Reserved bits `[31:27]`.
        rsvd: U5 = CP_MC_RSVD,
    }
}

impl Rules for CopyMetaCtrl {}

/// The driver's copy word (`0x01080003`): the fixed op with first and last block and
/// copy-source-data set, as [`CopyMetaCtrl::DRIVER_DEFAULT`] emits it.
pub const META_CTRL_COPY_DEFAULT: u32 =
    COPY_META_CTRL.fixed[0] | CP_MC_LAST_BLOCK.place(1) | CP_MC_FIRST_BLOCK.place(1) | CP_MC_COPY_SRC.place(1);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta_ctrl::{MetaCtrl, WRITE_BARRIER};

    #[test]
    fn the_driver_default_is_the_drivers_word() {
        // udma_m2m.c: the M2S meta_ctrl default 0x01080003, 0x05080003 with the write barrier.
        assert_eq!(META_CTRL_COPY_DEFAULT, 0x0108_0003);
        assert_eq!(CopyMetaCtrl::DRIVER_DEFAULT.emit(), META_CTRL_COPY_DEFAULT);
        let barrier = CopyMetaCtrl { write_barrier: true, ..CopyMetaCtrl::DRIVER_DEFAULT };
        assert_eq!(barrier.emit(), 0x0508_0003);
        assert_eq!(WRITE_BARRIER, 0x0400_0000);
        assert!(barrier.is_plain());
        assert!(!CopyMetaCtrl { send_crc: true, ..barrier }.is_plain());
    }
}
