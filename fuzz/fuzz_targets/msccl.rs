//! Any text as an MSCCL XML schedule: read, checked and, when the checks pass, lowered — the
//! plan turned into every rank's rings by cce-host at a small size and timed by the model.
//! Refusals only: never a panic. (Seed the corpus with `examples/msccl/*.xml`.)
#![no_main]

use std::sync::Arc;

use cce_collectives::collective::{self, Config, RedOp, UserAlgo};
use cce_format::SdmaDtype;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(user) = UserAlgo::from_xml("fuzz.xml", &text) else { return };
    let s = &user.schedule;
    let _ = s.summary();
    // Every work item names chunks inside its rank's areas.
    for (q, steps) in s.plan.steps.iter().enumerate() {
        for st in steps {
            assert!(st.deps.iter().all(|&(p, _)| p != q && p < s.program.ranks));
            for w in &st.works {
                assert_eq!(w.dst.rank, q);
            }
        }
    }
    let elems = s.program.nchunks.saturating_mul(3);
    if elems > 1 << 16 {
        return;
    }
    let cfg = Config::from_user(Arc::new(user), RedOp::Add, SdmaDtype::Bf16, elems);
    if collective::rings(&cfg).is_ok() {
        let _ = collective::model(&cfg, false);
    }
});
