//! `cce convert` and `cce gen`'s reports, as JSON.

use serde_json::{Value, json};

use crate::convert::{Conversion, Generation};

impl Conversion {
    /// The object `cce convert --json` prints for `len` input bytes read from `input` and
    /// written to `output`.
    pub fn to_json(&self, input: &str, output: &str, len: u64) -> Value {
        let (rounding, seed) = self.rounding_name();
        let elements = len / self.from.size() as u64;
        json!({
            "input": input, "output": output,
            "from": self.from.name(), "to": self.to.name(), "elements": elements,
            "bytes_read": len, "bytes_written": elements * self.to.size() as u64,
            "rounding": rounding, "seed": seed, "saturate": self.saturate,
        })
    }
}

impl Generation {
    /// The object `cce gen --json` prints for the array written to `output`.
    pub fn to_json(&self, output: &str) -> Value {
        json!({
            "output": output, "dtype": self.dtype.name(), "elements": self.elements,
            "bytes": self.bytes(), "values": self.values.name(), "seed": self.seed,
        })
    }
}
