//! Value parsers shared by every command: numbers in decimal or 0x-hex, dtype names, hex bytes.

use cce_format::SdmaDtype;

/// Parses a decimal or `0x`-hex unsigned integer.
pub(crate) fn parse_u64(s: &str) -> Result<u64, String> {
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
pub(crate) fn parse_max(s: &str, max: u64, bits: u32) -> Result<u64, String> {
    let v = parse_u64(s)?;
    if v > max {
        return Err(format!("{v} does not fit {bits} bits (0..={max})"));
    }
    Ok(v)
}

/// The names the CLI accepts for dtypes, for messages.
pub(crate) fn dtype_names() -> String {
    SdmaDtype::ALL.iter().skip(1).map(|d| d.name()).collect::<Vec<_>>().join(" ")
}

/// Parses a dtype: a name (`bf16`, …) or a number below `limit` (16 for a nibble, 8 for the
/// 3-bit constant dtype).
pub(crate) fn parse_dtype(s: &str, limit: u64) -> Result<u64, String> {
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
pub(crate) fn parse_sdma_dtype(s: &str) -> Result<SdmaDtype, String> {
    parse_dtype(s, 16).map(|v| SdmaDtype::from_nibble(v as u32))
}

/// Parses hex bytes (spaces, `_` and `:` ignored) into exactly `n` bytes.
pub(crate) fn parse_hex_bytes(s: &str, n: usize) -> Result<Vec<u8>, String> {
    let clean: String = s.chars().filter(|c| !matches!(c, ' ' | '_' | ':')).collect();
    if !clean.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("malformed hex '{s}': only 0-9 a-f allowed"));
    }
    if clean.len() != 2 * n {
        return Err(format!("malformed hex: expected {} hex digits ({n} bytes), got {}", 2 * n, clean.len()));
    }
    (0..n).map(|i| u8::from_str_radix(&clean[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())).collect()
}

/// Lowercase hex of bytes.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The little-endian bytes of words.
pub(crate) fn words_le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// `--rounding rne|sr` with `--seed`: the seed only goes with `sr` (default 0). Returns the
/// seed for `sr`, `None` for `rne`.
pub(crate) fn rounding_seed(rounding: &str, seed: Option<u64>) -> Result<Option<u64>, String> {
    match rounding {
        "rne" if seed.is_none() => Ok(None),
        "rne" => Err("--seed is for --rounding sr".into()),
        "sr" => Ok(Some(seed.unwrap_or(0))),
        other => Err(format!("--rounding '{other}': expected rne or sr")),
    }
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
    fn dtypes() {
        assert_eq!(parse_dtype("bf16", 16), Ok(6));
        assert_eq!(parse_dtype("15", 16), Ok(15));
        assert!(parse_dtype("16", 16).is_err());
        assert!(parse_dtype("fp32", 8).unwrap_err().contains("3-bit"));
        assert!(parse_dtype("bfloat", 16).unwrap_err().contains("unknown dtype"));
    }

    #[test]
    fn rounding() {
        assert_eq!(rounding_seed("rne", None), Ok(None));
        assert_eq!(rounding_seed("sr", None), Ok(Some(0)));
        assert_eq!(rounding_seed("sr", Some(9)), Ok(Some(9)));
        assert!(rounding_seed("rne", Some(9)).unwrap_err().contains("--seed"));
        assert!(rounding_seed("rtz", None).unwrap_err().contains("rtz"));
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex_bytes("0010 a002", 4), Ok(vec![0, 0x10, 0xa0, 2]));
        assert!(parse_hex_bytes("zz", 1).is_err());
        assert!(parse_hex_bytes("00", 4).is_err());
        assert_eq!(to_hex(&[0xab, 1]), "ab01");
    }
}
