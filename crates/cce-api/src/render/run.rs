//! `cce run`'s per-queue report, as JSON and text.

use serde_json::{Value, json};

use crate::run::{QueueReport, RunResult};

impl QueueReport {
    fn to_json(&self) -> Value {
        json!({
            "queue": self.queue,
            "state": self.state_name(),
            "semaphore": self.semaphore, "packets": self.packets, "tx_done": self.tx_done, "rx_done": self.rx_done,
            "fault": self.fault.as_ref().map(ToString::to_string),
        })
    }
}

impl RunResult {
    /// The object `cce run --json` prints: every queue, then the counts.
    pub fn to_json(&self) -> Value {
        let r = &self.report;
        json!({
            "queues": self.queues.iter().map(QueueReport::to_json).collect::<Vec<_>>(),
            "packets": r.packets, "descriptors": r.descriptors,
            "bytes_read": r.bytes_read, "bytes_written": r.bytes_written, "seconds": self.seconds,
        })
    }
}

impl RunResult {
    /// What `cce run` prints: a line per queue (state, semaphore, counts, and its fault).
    pub fn to_text(&self) -> String {
        self.queues
            .iter()
            .map(|q| {
                format!(
                    "queue {}: {} semaphore {} packets {} tx {} rx {}{}\n",
                    q.queue,
                    q.state_name(),
                    q.semaphore,
                    q.packets,
                    q.tx_done,
                    q.rx_done,
                    q.fault.as_ref().map(|f| format!(" fault: {f}")).unwrap_or_default()
                )
            })
            .collect()
    }
}
