//! Value parsers shared by every front end: numbers in decimal or 0x-hex, dtype names, hex
//! bytes. Each returns its message as a `String` (what the CLI's argument parser shows after
//! "invalid value … for …"); none panics on any text.

use cce_format::SdmaDtype;

/// Parses a decimal or `0x`-hex unsigned integer.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (t, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(format!("'{s}' is not a number (decimal or 0x-hex)"));
    }
    u64::from_str_radix(digits, radix).map_err(|_| format!("'{s}' does not fit 64 bits"))
}

/// Parses an integer that must be at most `max`; the message names the range.
pub fn parse_max(s: &str, max: u64, bits: u32) -> Result<u64, String> {
    fit(parse_u64(s)?, max, bits)
}

/// `v` if it is at most `max`, else the message of [`parse_max`] (a `bits`-bit field).
pub fn fit(v: u64, max: u64, bits: u32) -> Result<u64, String> {
    if v > max {
        return Err(format!("{v} does not fit {bits} bits (0..={max})"));
    }
    Ok(v)
}

/// The names the CLI accepts for dtypes, for messages.
pub fn dtype_names() -> String {
    SdmaDtype::ALL.iter().skip(1).map(|d| d.name()).collect::<Vec<_>>().join(" ")
}

/// Parses a dtype: a name (`bf16`, …) or a number below `limit` (16 for a nibble, 8 for the
/// 3-bit constant dtype).
pub fn parse_dtype(s: &str, limit: u64) -> Result<u64, String> {
    if let Some(d) = SdmaDtype::from_name(s.trim()) {
        let v = d.value() as u64;
        if v >= limit {
            return Err(format!(
                "dtype {s} (value {v}) does not fit this {}-bit field (0..={})",
                bits_for(limit),
                limit - 1
            ));
        }
        return Ok(v);
    }
    if s.trim().starts_with(|c: char| c.is_ascii_digit()) {
        return parse_max(s, limit - 1, bits_for(limit));
    }
    Err(format!("unknown dtype '{s}' (expected one of: {}, or 0..={})", dtype_names(), limit - 1))
}

fn bits_for(limit: u64) -> u32 {
    64 - (limit - 1).leading_zeros()
}

/// A dtype nibble as an [`SdmaDtype`].
pub fn parse_sdma_dtype(s: &str) -> Result<SdmaDtype, String> {
    parse_dtype(s, 16).map(|v| SdmaDtype::from_nibble(v as u32))
}

/// Whether `c` separates hex digits (ignored): whitespace, `_` and `:`.
fn hex_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '_' | ':')
}

/// Parses hex bytes of any count (separators ignored: whitespace, `_`, `:`), for input of any
/// size: a refusal names the first bad digit and its place, never echoes the input.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s.chars().filter(|&c| !hex_separator(c)).map(|c| c as u32 as u8).collect();
    if let Some((at, c)) = s.chars().filter(|&c| !hex_separator(c)).enumerate().find(|(_, c)| !c.is_ascii_hexdigit()) {
        return Err(format!("malformed hex: '{c}' at digit {at} is not 0-9 a-f"));
    }
    if digits.len() % 2 != 0 {
        return Err(format!("malformed hex: {} digits, an odd number (a byte is two digits)", digits.len()));
    }
    let nibble = |d: u8| (d as char).to_digit(16).unwrap_or(0) as u8;
    Ok(digits.chunks_exact(2).map(|p| nibble(p[0]) << 4 | nibble(p[1])).collect())
}

/// Parses hex bytes (separators ignored as by [`parse_hex`]) into exactly `n` bytes.
pub fn parse_hex_bytes(s: &str, n: usize) -> Result<Vec<u8>, String> {
    let clean: String = s.chars().filter(|&c| !hex_separator(c)).collect();
    if !clean.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("malformed hex '{s}': only 0-9 a-f allowed"));
    }
    if clean.len() != 2 * n {
        return Err(format!("malformed hex: expected {} hex digits ({n} bytes), got {}", 2 * n, clean.len()));
    }
    parse_hex(&clean)
}

/// Lowercase hex of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The little-endian bytes of words.
pub fn words_le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64("17"), Ok(17));
        assert_eq!(parse_u64("0x1F"), Ok(31));
        assert!(parse_u64("-1").is_err());
        assert!(parse_u64("0x").is_err());
        assert!(parse_u64("1e3").is_err());
        assert!(parse_u64("99999999999999999999").is_err());
        assert_eq!(parse_max("8", 7, 3), Err("8 does not fit 3 bits (0..=7)".to_string()));
    }

    #[test]
    fn hex_of_any_length() {
        assert_eq!(parse_hex("00 ff\n1a:2B_3c"), Ok(vec![0x00, 0xff, 0x1a, 0x2b, 0x3c]));
        assert_eq!(parse_hex(""), Ok(vec![]));
        assert_eq!(parse_hex("0g"), Err("malformed hex: 'g' at digit 1 is not 0-9 a-f".to_string()));
        assert_eq!(parse_hex("abc"), Err("malformed hex: 3 digits, an odd number (a byte is two digits)".to_string()));
        assert_eq!(parse_hex_bytes("0102 0304", 4), Ok(vec![1, 2, 3, 4]));
    }

    #[test]
    fn dtypes() {
        assert_eq!(parse_dtype("bf16", 16), Ok(6));
        assert_eq!(parse_dtype("15", 16), Ok(15));
        assert!(parse_dtype("16", 16).is_err());
        assert!(parse_dtype("fp32", 8).unwrap_err().contains("3-bit"));
        assert!(parse_dtype("bfloat", 16).unwrap_err().contains("unknown dtype"));
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex_bytes("0010 a002", 4), Ok(vec![0, 0x10, 0xa0, 2]));
        assert!(parse_hex_bytes("zz", 1).is_err());
        assert!(parse_hex_bytes("00", 4).is_err());
        assert_eq!(to_hex(&[0xab, 1]), "ab01");
    }
}
