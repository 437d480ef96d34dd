//! `cce reduce`'s report, as JSON.

use serde_json::{Value, json};

use crate::reduce::ReduceResult;

impl ReduceResult {
    /// The object `cce reduce --json` prints.
    pub fn to_json(&self) -> Value {
        let o = &self.outcome;
        json!({
            "elements": o.elements, "packets": o.packets, "descriptors": o.descriptors,
            "bytes_read": o.bytes_read, "bytes_written": o.bytes_written, "seconds": o.seconds,
        })
    }
}
