//! The header of a NumPy `.npy` file (format versions 1 to 3), read without the data: the
//! element type (`descr`), the order, the shape and where the data starts. Any bytes are either
//! a header or a refusal that says what is wrong; reading never panics.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The longest header read (NumPy writes a few hundred bytes).
pub const MAX_HEADER: usize = 1 << 20;

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The element type as NumPy writes it: `<f4`, `<V2` (ml_dtypes' bfloat16), `|i1`, ….
    pub descr: String,
    /// Whether the array is stored in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The array's dimensions (empty for a scalar).
    pub shape: Vec<u64>,
    /// The data's first byte in the file.
    pub data_offset: u64,
}

impl Header {
    /// Elements the shape holds (`None` when the product overflows 64 bits).
    pub fn elems(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// The element size in bytes the `descr` names (`<f4` → 4), when it names one.
    pub fn item_size(&self) -> Option<u64> {
        self.descr.get(2..)?.parse().ok()
    }

    /// The shape as NumPy writes it: `(16,)`, `(4, 4)`, `()`.
    pub fn shape_text(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        }
    }

    /// Whether the elements are little-endian (or single bytes, `|`) items of `size` bytes
    /// whose kind (`f`, `V`, `i`, `u`) is one of `kinds`.
    pub fn holds(&self, size: u64, kinds: &[char]) -> bool {
        let mut c = self.descr.chars();
        let (Some(order), Some(kind)) = (c.next(), c.next()) else { return false };
        matches!(order, '<' | '|' | '=') && kinds.contains(&kind) && self.item_size() == Some(size)
    }
}

/// How many bytes of the file's start the header takes (magic, version, length and the header
/// text): `first` needs only the first 12 bytes.
///
/// # Errors
/// Not `.npy` magic, a version other than 1 to 3, a header over [`MAX_HEADER`] bytes, or fewer
/// bytes than the fixed part.
pub fn header_size(first: &[u8]) -> Result<usize, String> {
    if first.len() < 10 || &first[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, start) = match first[6] {
        1 => (usize::from(u16::from_le_bytes([first[8], first[9]])), 10),
        2 | 3 if first.len() >= 12 => (u32::from_le_bytes([first[8], first[9], first[10], first[11]]) as usize, 12),
        2 | 3 => return Err("truncated .npy header".into()),
        v => return Err(format!(".npy format version {v} (1 to 3 are read)")),
    };
    if len > MAX_HEADER {
        return Err(format!("a .npy header of {len} bytes (at most {MAX_HEADER} are read)"));
    }
    Ok(start + len)
}

/// Reads the header at the start of `bytes` (at least [`header_size`] of them; the data after
/// it is not looked at).
///
/// # Errors
/// What [`header_size`] refuses; a header cut short; a header without `descr`, `fortran_order`
/// or `shape`, or with a shape that is not a tuple of numbers.
pub fn header(bytes: &[u8]) -> Result<Header, String> {
    let end = header_size(bytes)?;
    let start = if bytes[6] == 1 { 10 } else { 12 };
    let text = bytes.get(start..end).ok_or_else(|| "truncated .npy header".to_string())?;
    let text = String::from_utf8_lossy(text);
    let field = |key: &str| -> Option<&str> {
        let at = text.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
        let stop = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find([',', '}'])? };
        Some(rest[..stop].trim())
    };
    let descr = field("descr").ok_or_else(|| "a .npy header without a descr".to_string())?;
    let descr = descr.trim_matches('\'').to_string();
    let fortran_order = match field("fortran_order") {
        Some("True") => true,
        Some("False") => false,
        _ => return Err("a .npy header without fortran_order True or False".into()),
    };
    let shape_text = field("shape").ok_or_else(|| "a .npy header without a shape".to_string())?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("the .npy shape {shape_text} is not a tuple"))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse::<u64>().map_err(|_| format!("the .npy shape {shape_text} is not a tuple of sizes")))
        .collect::<Result<Vec<u64>, String>>()?;
    Ok(Header { descr, fortran_order, shape, data_offset: end as u64 })
}
