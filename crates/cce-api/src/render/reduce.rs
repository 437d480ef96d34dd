//! `cce reduce`'s report, as JSON and text.

use serde_json::{Value, json};

use crate::reduce::ReduceResult;

impl ReduceResult {
    /// The line `cce reduce` prints: elements, packets, descriptors, bytes read and written,
    /// the run's seconds.
    pub fn to_text(&self) -> String {
        let o = &self.outcome;
        format!(
            "{} elements, {} packets, {} descriptors, {} bytes read, {} written, {:.3} s\n",
            o.elements, o.packets, o.descriptors, o.bytes_read, o.bytes_written, o.seconds
        )
    }

    /// The object `cce reduce --json` prints.
    pub fn to_json(&self) -> Value {
        let o = &self.outcome;
        json!({
            "elements": o.elements, "packets": o.packets, "descriptors": o.descriptors,
            "bytes_read": o.bytes_read, "bytes_written": o.bytes_written, "seconds": o.seconds,
        })
    }
}
