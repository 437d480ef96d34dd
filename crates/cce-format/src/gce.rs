//! The GCE compression header (MODEL): the 32 bytes at the address a gradient descriptor's W3
//! names, followed by the block-scale table of a compressed gradient.
//!
//! The silicon's compression format is unknown (GAPS.md §9): every field here is a choice of
//! this project, tagged [`TAG`] = MODEL, written to be easy to check rather than to match
//! hardware. The codec that fills the scale table and the payload is `cce_numerics::gce`
//! (block-scaled fp8 e5m2 with one E8M0 scale byte per block).
//!
//! ```text
//! bytes   field (all little-endian)
//! 0..4    magic "GCE1"
//! 4..6    version u16 = 1
//! 6       payload dtype u8: the SDMA value of fp8 e5m2 (15), the only one accepted
//! 7       source dtype u8: the SDMA dtype the values had before compression (bf16 6, fp16 7, fp32 10)
//! 8..12   element count u32, at least 1
//! 12..14  block elements u16: 32, 64, 128 or 256
//! 14      scale format u8 = 1 (E8M0: one biased power-of-two exponent byte per block)
//! 15      reserved u8 = 0
//! 16..20  scale table offset u32 from the header start = 32
//! 20..24  scale count u32 = ceil(element count / block elements)
//! 24..28  payload bytes u32 = element count (one fp8 byte per element)
//! 28..32  check u32: FNV-1a 32-bit of bytes 0..28
//! 32..    the scale table, scale count bytes
//! ```
//! Where the payload itself lives is the packet's business (the compressed buffer), not the
//! header's.
//!
//! ## Guarantees
//! - [`GceHeader::encode`] writes all 32 bytes; `decode(&encode(h)) == Ok(h)` for every header
//!   [`GceHeader::new`] accepts (tested for every block size and source dtype).
//! - [`GceHeader::decode`] checks every field and names the first one that is wrong, with the
//!   value found; it never panics, on any bytes (property-tested). A change of any one byte of a
//!   valid header is refused (FNV-1a's steps are bijections, so the check catches every
//!   single-byte change of bytes 0..28; tested for every byte).

use crate::dtype::SdmaDtype;
use crate::tag::Tag;
use core::fmt;
use core::ops::Range;

/// Every field of the header is a model choice.
pub const TAG: Tag = Tag::Model;

/// The byte ranges of the header's fields, the one place they are written down.
mod field {
    use core::ops::Range;
    pub(super) const MAGIC: Range<usize> = 0..4;
    pub(super) const VERSION: Range<usize> = 4..6;
    pub(super) const PAYLOAD_DT: Range<usize> = 6..7;
    pub(super) const SOURCE_DT: Range<usize> = 7..8;
    pub(super) const ELEMS: Range<usize> = 8..12;
    pub(super) const BLOCK: Range<usize> = 12..14;
    pub(super) const SCALE_FORMAT: Range<usize> = 14..15;
    pub(super) const RESERVED: Range<usize> = 15..16;
    pub(super) const SCALE_OFFSET: Range<usize> = 16..20;
    pub(super) const SCALE_COUNT: Range<usize> = 20..24;
    pub(super) const PAYLOAD_BYTES: Range<usize> = 24..28;
    pub(super) const CHECK: Range<usize> = 28..32;
}

/// The header's fields in byte order, as (name, byte range): for display and docs. They tile
/// `0..HEADER_BYTES` (tested).
pub const FIELDS: [(&str, Range<usize>); 12] = [
    ("magic", field::MAGIC),
    ("version", field::VERSION),
    ("payload dtype", field::PAYLOAD_DT),
    ("source dtype", field::SOURCE_DT),
    ("element count", field::ELEMS),
    ("block elements", field::BLOCK),
    ("scale format", field::SCALE_FORMAT),
    ("reserved", field::RESERVED),
    ("scale table offset", field::SCALE_OFFSET),
    ("scale count", field::SCALE_COUNT),
    ("payload bytes", field::PAYLOAD_BYTES),
    ("check", field::CHECK),
];

/// Header length in bytes; the scale table starts here.
pub const HEADER_BYTES: usize = field::CHECK.end;
/// The first four bytes.
pub const MAGIC: [u8; 4] = *b"GCE1";
/// The version this code reads and writes.
pub const VERSION: u16 = 1;
/// The payload dtype: fp8 e5m2, the only one accepted.
pub const PAYLOAD_DT: SdmaDtype = SdmaDtype::Fp8E5;
/// The source dtypes accepted, in SDMA value order: the dtypes GCE compresses and
/// decompresses to (the rule, [`is_source_dtype`]; in words, [`gce_source_dtypes!`](crate::gce_source_dtypes)).
pub const SOURCE_DTS: [SdmaDtype; 3] = [SdmaDtype::Bf16, SdmaDtype::Fp16, SdmaDtype::Fp32];

/// Whether GCE takes values of dtype `d` (one of [`SOURCE_DTS`]): the one statement of the
/// rule, which the host, the engine, the path and the collectives call.
pub const fn is_source_dtype(d: SdmaDtype) -> bool {
    let mut i = 0;
    while i < SOURCE_DTS.len() {
        if SOURCE_DTS[i] as u8 == d as u8 {
            return true;
        }
        i += 1;
    }
    false
}

/// [`SOURCE_DTS`] in words, `"bf16, fp16 or fp32"`, a literal for `concat!` in messages (a
/// test holds it to the table).
#[macro_export]
macro_rules! gce_source_dtypes {
    () => {
        "bf16, fp16 or fp32"
    };
}
/// The block sizes accepted, in elements.
pub const BLOCK_SIZES: [u32; 4] = [32, 64, 128, 256];
/// The block size the engine compresses with (the MX shape; a header may name any of
/// [`BLOCK_SIZES`] for decompression).
pub const COMPRESS_BLOCK: u32 = 32;
/// The scale format byte: E8M0, one biased power-of-two exponent byte per block.
pub const SCALE_FORMAT_E8M0: u8 = 1;
/// Where the scale table starts, from the header start.
pub const SCALE_OFFSET: u32 = HEADER_BYTES as u32;
/// Bytes the check covers: everything before it.
pub const CHECKED_BYTES: Range<usize> = 0..field::CHECK.start;

/// FNV-1a, 32 bits (offset basis 0x811C9DC5, prime 0x01000193).
pub const fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    let mut i = 0;
    while i < bytes.len() {
        h = (h ^ bytes[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}

/// A block size: one of [`BLOCK_SIZES`], so a header can never divide by zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum GceBlock {
    /// 32 elements per scale.
    B32 = 32,
    /// 64 elements per scale.
    B64 = 64,
    /// 128 elements per scale.
    B128 = 128,
    /// 256 elements per scale.
    B256 = 256,
}

impl GceBlock {
    /// Every block size, in [`BLOCK_SIZES`] order.
    pub const ALL: [GceBlock; 4] = [GceBlock::B32, GceBlock::B64, GceBlock::B128, GceBlock::B256];

    /// The block size `n`, if it is one of [`BLOCK_SIZES`].
    pub const fn new(n: u32) -> Option<GceBlock> {
        match n {
            32 => Some(GceBlock::B32),
            64 => Some(GceBlock::B64),
            128 => Some(GceBlock::B128),
            256 => Some(GceBlock::B256),
            _ => None,
        }
    }

    /// Elements per block.
    pub const fn elems(self) -> u32 {
        self as u32
    }
}

/// The typed header. The payload dtype ([`PAYLOAD_DT`]), the scale format
/// ([`SCALE_FORMAT_E8M0`]), the scale table offset and the two counts are fixed or derived, so
/// they are not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GceHeader {
    /// The dtype the values had before compression: one of [`SOURCE_DTS`].
    pub source_dt: SdmaDtype,
    /// Elements compressed, at least 1.
    pub elems: u32,
    /// Elements per scale.
    pub block: GceBlock,
}

impl GceHeader {
    /// A header, or the rule it breaks: a source dtype outside [`SOURCE_DTS`], zero elements, a
    /// block size outside [`BLOCK_SIZES`].
    pub fn new(source_dt: SdmaDtype, elems: u32, block: u32) -> Result<GceHeader, GceHeaderError> {
        if !is_source_dtype(source_dt) {
            return Err(GceHeaderError::SourceDtype(source_dt as u8));
        }
        if elems == 0 {
            return Err(GceHeaderError::ZeroElements);
        }
        let Some(block) = GceBlock::new(block) else {
            return Err(GceHeaderError::Block(u16::try_from(block).unwrap_or(u16::MAX)));
        };
        Ok(GceHeader { source_dt, elems, block })
    }

    /// Scales in the table: `ceil(elems / block)`.
    pub const fn scale_count(&self) -> u32 {
        self.elems.div_ceil(self.block.elems())
    }

    /// Payload bytes: one fp8 byte per element.
    pub const fn payload_bytes(&self) -> u32 {
        self.elems
    }

    /// Bytes of the header plus its scale table (`32 + scale count`).
    pub const fn region_bytes(&self) -> u64 {
        HEADER_BYTES as u64 + self.scale_count() as u64
    }

    /// The 32 header bytes, every one written. A header built by hand with a source dtype outside
    /// [`SOURCE_DTS`] or zero elements is written as it is, and [`GceHeader::decode`] refuses it.
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[field::MAGIC].copy_from_slice(&MAGIC);
        b[field::VERSION].copy_from_slice(&VERSION.to_le_bytes());
        b[field::PAYLOAD_DT.start] = PAYLOAD_DT as u8;
        b[field::SOURCE_DT.start] = self.source_dt as u8;
        b[field::ELEMS].copy_from_slice(&self.elems.to_le_bytes());
        b[field::BLOCK].copy_from_slice(&(self.block as u16).to_le_bytes());
        b[field::SCALE_FORMAT.start] = SCALE_FORMAT_E8M0;
        b[field::RESERVED.start] = 0;
        b[field::SCALE_OFFSET].copy_from_slice(&SCALE_OFFSET.to_le_bytes());
        b[field::SCALE_COUNT].copy_from_slice(&self.scale_count().to_le_bytes());
        b[field::PAYLOAD_BYTES].copy_from_slice(&self.payload_bytes().to_le_bytes());
        let check = fnv1a32(&b[CHECKED_BYTES]);
        b[field::CHECK].copy_from_slice(&check.to_le_bytes());
        b
    }

    /// Reads the first 32 bytes of `bytes` (the scale table may follow; it is not read) and
    /// checks every field, in byte order, the check last: the first broken rule is the error.
    /// Never panics.
    pub fn decode(bytes: &[u8]) -> Result<GceHeader, GceHeaderError> {
        let Some(b) = bytes.first_chunk::<HEADER_BYTES>() else {
            return Err(GceHeaderError::TooShort(bytes.len()));
        };
        let magic = get::<4>(b, field::MAGIC);
        if magic != MAGIC {
            return Err(GceHeaderError::Magic(magic));
        }
        let version = u16::from_le_bytes(get(b, field::VERSION));
        if version != VERSION {
            return Err(GceHeaderError::Version(version));
        }
        let payload_dt = b[field::PAYLOAD_DT.start];
        if payload_dt != PAYLOAD_DT as u8 {
            return Err(GceHeaderError::PayloadDtype(payload_dt));
        }
        let source = b[field::SOURCE_DT.start];
        let Some(&source_dt) = SOURCE_DTS.iter().find(|d| **d as u8 == source) else {
            return Err(GceHeaderError::SourceDtype(source));
        };
        let elems = u32::from_le_bytes(get(b, field::ELEMS));
        if elems == 0 {
            return Err(GceHeaderError::ZeroElements);
        }
        let block_raw = u16::from_le_bytes(get(b, field::BLOCK));
        let Some(block) = GceBlock::new(u32::from(block_raw)) else {
            return Err(GceHeaderError::Block(block_raw));
        };
        let scale_format = b[field::SCALE_FORMAT.start];
        if scale_format != SCALE_FORMAT_E8M0 {
            return Err(GceHeaderError::ScaleFormat(scale_format));
        }
        let reserved = b[field::RESERVED.start];
        if reserved != 0 {
            return Err(GceHeaderError::Reserved(reserved));
        }
        let offset = u32::from_le_bytes(get(b, field::SCALE_OFFSET));
        if offset != SCALE_OFFSET {
            return Err(GceHeaderError::ScaleOffset(offset));
        }
        let h = GceHeader { source_dt, elems, block };
        let scale_count = u32::from_le_bytes(get(b, field::SCALE_COUNT));
        if scale_count != h.scale_count() {
            return Err(GceHeaderError::ScaleCount { found: scale_count, expected: h.scale_count() });
        }
        let payload_bytes = u32::from_le_bytes(get(b, field::PAYLOAD_BYTES));
        if payload_bytes != h.payload_bytes() {
            return Err(GceHeaderError::PayloadBytes { found: payload_bytes, expected: h.payload_bytes() });
        }
        let check = u32::from_le_bytes(get(b, field::CHECK));
        let expected = fnv1a32(&b[CHECKED_BYTES]);
        if check != expected {
            return Err(GceHeaderError::Check { found: check, expected });
        }
        Ok(h)
    }
}

/// The bytes of one field (`N` is its width, equal to `r.len()` at every call site).
fn get<const N: usize>(b: &[u8; HEADER_BYTES], r: Range<usize>) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&b[r]);
    out
}

/// Why 32 bytes are not a GCE header: the field, and the value found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GceHeaderError {
    /// Fewer than [`HEADER_BYTES`] bytes.
    #[error("gce header needs {HEADER_BYTES} bytes, got {0}")]
    TooShort(usize),
    /// Bytes 0..4 are not [`MAGIC`].
    #[error("gce header magic is {found}, expected \"GCE1\"", found = Hex(.0))]
    Magic([u8; 4]),
    /// A version other than [`VERSION`].
    #[error("gce header version {0} is not supported (this build reads version {VERSION})")]
    Version(u16),
    /// A payload dtype other than fp8 e5m2.
    #[error("gce header payload dtype {0} ({name}) is not fp8e5 (15)", name = dtype_name(*.0))]
    PayloadDtype(u8),
    /// A source dtype outside [`SOURCE_DTS`].
    #[error("gce header source dtype {0} ({name}) is not bf16 (6), fp16 (7) or fp32 (10)", name = dtype_name(*.0))]
    SourceDtype(u8),
    /// A block size outside [`BLOCK_SIZES`].
    #[error("gce header block elements {0} is not 32, 64, 128 or 256")]
    Block(u16),
    /// An element count of 0.
    #[error("gce header element count is 0, at least 1 is needed")]
    ZeroElements,
    /// A scale format other than [`SCALE_FORMAT_E8M0`].
    #[error("gce header scale format {0} is not 1 (e8m0)")]
    ScaleFormat(u8),
    /// A nonzero reserved byte.
    #[error("gce header reserved byte is {0}, expected 0")]
    Reserved(u8),
    /// A scale table offset other than [`SCALE_OFFSET`].
    #[error("gce header scale table offset {0} is not {SCALE_OFFSET}")]
    ScaleOffset(u32),
    /// A scale count other than `ceil(elements / block)`.
    #[error("gce header scale count {found} is not ceil(element count / block elements) = {expected}")]
    ScaleCount {
        /// The count in the header.
        found: u32,
        /// What the element count and block size give.
        expected: u32,
    },
    /// A payload byte count other than the element count.
    #[error("gce header payload bytes {found} is not the element count {expected}")]
    PayloadBytes {
        /// The count in the header.
        found: u32,
        /// The element count.
        expected: u32,
    },
    /// The check does not match bytes 0..28.
    #[error("gce header check 0x{found:08x} does not match the fnv-1a of bytes 0..28 (0x{expected:08x})")]
    Check {
        /// The check in the header.
        found: u32,
        /// FNV-1a 32 of bytes 0..28.
        expected: u32,
    },
}

/// The SDMA name of a dtype byte, or `not an sdma dtype`.
fn dtype_name(v: u8) -> &'static str {
    SdmaDtype::from_value(u64::from(v)).map_or("not an sdma dtype", SdmaDtype::name)
}

/// Bytes as lowercase hex, for messages.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn the_source_dtype_rule_and_its_words_are_the_table() {
        let names: Vec<&str> = SOURCE_DTS.iter().map(|d| d.name()).collect();
        assert_eq!(
            gce_source_dtypes!(),
            alloc::format!("{} or {}", names[..names.len() - 1].join(", "), names[names.len() - 1])
        );
        for d in SdmaDtype::ALL {
            assert_eq!(is_source_dtype(d), SOURCE_DTS.contains(&d), "{d:?}");
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Encodings checked both ways. The expected bytes (the check included) were computed by an
    /// independent Python `struct.pack` + FNV-1a, not by this code.
    const VECTORS: [(SdmaDtype, u32, u32, &str); 3] = [
        (SdmaDtype::Bf16, 1000, 32, "4743453101000f06e8030000200001002000000020000000e8030000a48d67f7"),
        (SdmaDtype::Fp32, 1, 256, "4743453101000f0a01000000000101002000000001000000010000003a7d2a89"),
        (SdmaDtype::Fp16, u32::MAX, 128, "4743453101000f07ffffffff800001002000000000000002ffffffff719bc3cb"),
    ];

    #[test]
    fn gce_vectors_encode_and_decode() {
        for (dt, elems, block, bytes) in VECTORS {
            let h = GceHeader::new(dt, elems, block).unwrap();
            assert_eq!(h.encode().to_vec(), hex(bytes), "{h:?}");
            assert_eq!(GceHeader::decode(&hex(bytes)), Ok(h));
        }
    }

    #[test]
    fn gce_fnv1a32_known_values() {
        // The FNV reference values for "" (the offset basis) and "a".
        assert_eq!(fnv1a32(b""), 0x811C_9DC5);
        assert_eq!(fnv1a32(b"a"), 0xE40C_292C);
    }

    #[test]
    fn gce_fields_tile_the_header() {
        let mut at = 0;
        for (name, r) in FIELDS {
            assert_eq!(r.start, at, "{name}");
            assert!(r.end > r.start, "{name}");
            at = r.end;
        }
        assert_eq!(at, HEADER_BYTES);
        assert_eq!(HEADER_BYTES, 32);
        assert_eq!(CHECKED_BYTES, 0..28);
    }

    #[test]
    fn gce_round_trip_every_block_and_source() {
        for dt in SOURCE_DTS {
            for block in BLOCK_SIZES {
                for elems in [1, 2, block - 1, block, block + 1, 1000, 65_536, u32::MAX - 1, u32::MAX] {
                    let h = GceHeader::new(dt, elems, block).unwrap();
                    let b = h.encode();
                    assert_eq!(GceHeader::decode(&b), Ok(h));
                    // Trailing bytes (the scale table) are not read.
                    let mut long = b.to_vec();
                    long.extend_from_slice(&[0xa5; 7]);
                    assert_eq!(GceHeader::decode(&long), Ok(h));
                    assert_eq!(h.scale_count(), elems.div_ceil(block));
                    assert_eq!(h.region_bytes(), 32 + u64::from(elems.div_ceil(block)));
                }
            }
        }
    }

    #[test]
    fn gce_new_refuses_what_decode_refuses() {
        assert_eq!(GceHeader::new(SdmaDtype::Fp8E5, 1, 32), Err(GceHeaderError::SourceDtype(15)));
        assert_eq!(GceHeader::new(SdmaDtype::Bf16, 0, 32), Err(GceHeaderError::ZeroElements));
        assert_eq!(GceHeader::new(SdmaDtype::Bf16, 1, 16), Err(GceHeaderError::Block(16)));
        assert_eq!(GceHeader::new(SdmaDtype::Bf16, 1, 1 << 20), Err(GceHeaderError::Block(u16::MAX)));
        // A hand-built header that breaks a rule is written as it is and refused on decode.
        let bad = GceHeader { source_dt: SdmaDtype::I8, elems: 0, block: GceBlock::B64 };
        assert_eq!(GceHeader::decode(&bad.encode()), Err(GceHeaderError::SourceDtype(2)));
    }

    /// A valid header with `f` applied and the check recomputed, so the field rule is reached.
    fn mutated(f: impl Fn(&mut [u8; 32])) -> [u8; 32] {
        let mut b = GceHeader::new(SdmaDtype::Bf16, 1000, 64).unwrap().encode();
        f(&mut b);
        let c = fnv1a32(&b[CHECKED_BYTES]);
        b[28..32].copy_from_slice(&c.to_le_bytes());
        b
    }

    #[test]
    fn gce_every_field_is_checked_and_named() {
        type Case = (fn(&mut [u8; 32]), GceHeaderError, &'static str);
        let cases: [Case; 13] = [
            (|b| b[0] = b'X', GceHeaderError::Magic(*b"XCE1"), "magic is 0x58434531"),
            (|b| b[4] = 2, GceHeaderError::Version(2), "version 2"),
            (|b| b[6] = 14, GceHeaderError::PayloadDtype(14), "payload dtype 14 (fp8e4)"),
            (|b| b[6] = 200, GceHeaderError::PayloadDtype(200), "payload dtype 200 (not an sdma dtype)"),
            (|b| b[7] = 11, GceHeaderError::SourceDtype(11), "source dtype 11 (fp32r)"),
            (|b| b[12] = 48, GceHeaderError::Block(48), "block elements 48"),
            (|b| b[8..12].fill(0), GceHeaderError::ZeroElements, "element count is 0"),
            (|b| b[14] = 0, GceHeaderError::ScaleFormat(0), "scale format 0"),
            (|b| b[15] = 9, GceHeaderError::Reserved(9), "reserved byte is 9"),
            (|b| b[16] = 33, GceHeaderError::ScaleOffset(33), "offset 33"),
            (|b| b[20] = 15, GceHeaderError::ScaleCount { found: 15, expected: 16 }, "scale count 15"),
            (|b| b[24] = 0xe9, GceHeaderError::PayloadBytes { found: 1001, expected: 1000 }, "payload bytes 1001"),
            (|b| b[9] = 0, GceHeaderError::ScaleCount { found: 16, expected: 4 }, "scale count 16"),
        ];
        for (i, (f, err, text)) in cases.into_iter().enumerate() {
            let b = mutated(f);
            assert_eq!(GceHeader::decode(&b), Err(err), "case {i}");
            assert!(err.to_string().contains(text), "{err}");
        }
        let mut b = GceHeader::new(SdmaDtype::Bf16, 1000, 64).unwrap().encode();
        b[31] ^= 1;
        let err = GceHeader::decode(&b).unwrap_err();
        assert!(matches!(err, GceHeaderError::Check { .. }), "{err}");
        assert!(err.to_string().contains("check 0x"), "{err}");
        for n in 0..32 {
            assert_eq!(GceHeader::decode(&b[..n]), Err(GceHeaderError::TooShort(n)));
        }
        assert_eq!(GceHeaderError::TooShort(3).to_string(), "gce header needs 32 bytes, got 3");
    }

    #[test]
    fn gce_every_single_byte_change_is_refused() {
        let good = GceHeader::new(SdmaDtype::Fp16, 4097, 256).unwrap().encode();
        for i in 0..HEADER_BYTES {
            for x in 1..=255u8 {
                let mut b = good;
                b[i] ^= x;
                assert!(GceHeader::decode(&b).is_err(), "byte {i} ^ 0x{x:02x}");
            }
        }
    }

    fn block() -> impl Strategy<Value = u32> {
        prop::sample::select(BLOCK_SIZES.to_vec())
    }

    fn source() -> impl Strategy<Value = SdmaDtype> {
        prop::sample::select(SOURCE_DTS.to_vec())
    }

    proptest! {
        #[test]
        fn gce_decode_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..80)) {
            let _ = GceHeader::decode(&bytes);
        }

        #[test]
        fn gce_decode_never_panics_near_valid(elems in 1u32.., block in block(), dt in source(),
                                              i in 0usize..32, x in any::<u8>()) {
            let h = GceHeader::new(dt, elems, block).unwrap();
            let mut b = h.encode();
            prop_assert_eq!(GceHeader::decode(&b), Ok(h));
            b[i] = x;
            // Any change is refused; the same byte written back is the same header.
            prop_assert_eq!(GceHeader::decode(&b).is_ok(), b == h.encode());
        }
    }
}
