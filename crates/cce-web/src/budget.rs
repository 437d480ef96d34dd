//! What a request may make the page hold, checked before that part of it is made: the CLI's
//! budget rule ([`cce_api::collective::MemoryNeed`] against `--budget`, "N bytes of model
//! memory, over the budget of B") with the page's own budget and needs.
//!
//! ## The rule (in docs/MODEL.md's terms)
//! - **Budget** ([`PAGE_BUDGET`], MODEL): 256 MiB for one request — what the module's memory
//!   may grow by for it plus the script's copies of its answer. wasm32 addresses 4 GiB at most,
//!   and a phone's browser gives a tab far less; the module's memory never shrinks (the bridge
//!   replaces an instance whose memory has grown, web/js/00-bridge.js), so the page keeps one
//!   request well inside both.
//! - **An answer** is held [`ANSWER_COPIES`] times over (MODEL, measured in headless Chromium:
//!   340 MB of answer grew the module by 1.3 GB and the script's heap by 1.0 GB, 6.7 times;
//!   the drawing adds to it): the module's JSON value and text, the script's string and its
//!   objects. Its size is counted from the story before it is rendered ([`story_answer_bytes`]):
//!   every order's text from its leaves, the rest from per-item upper bounds.
//! - **`auto`** models every candidate algorithm to choose one; each is walked as a run holds
//!   its schedule ([`cce_api::collective::ScheduleSize::bytes`], MODEL C26: 256 bytes a
//!   step, 240 a work item, 4096 a rank), so its need is the largest candidate's — the flat
//!   ring's, 2R(R − 1) work items — counted in closed form before any is modelled.
//! - **Typed values** build one array per rank, ranks × elems × the dtype's size, before any is
//!   made.
//!
//! Over the budget, the request is refused with what it needs and what to ask instead; the
//! CLI has no such limit (a story is any size there), so `cce allreduce --element` answers what
//! the page refuses.

use cce_api::collective::{AllreduceParams, Config, ElementStory, MAX_RANKS, MIN_RANKS, schedule_size};
use cce_api::params::{Algo, Collective};
use cce_api::render::story::OPERAND_EXPR_LEAVES;

/// Bytes one request may make the page hold (see the module's rule).
pub const PAGE_BUDGET: u64 = 256 << 20;

/// How many times over the page holds an answer's text (see the module's rule).
pub const ANSWER_COPIES: u64 = 8;

/// Upper bounds of a story's JSON parts besides its orders (the longest numbers, addresses and
/// roundings): a step's own keys, one operand's, one accumulate entry's, the story's head.
const STEP_JSON: u64 = 768;
const OPERAND_JSON: u64 = 384;
const ACCUMULATE_JSON: u64 = 224;
const HEAD_JSON: u64 = 1024;

/// `bytes` as the CLI writes a size: bytes, then MiB.
fn size(bytes: u64) -> String {
    format!("{bytes} bytes ({:.1} MiB)", bytes as f64 / (1u64 << 20) as f64)
}

/// Refuses `need` over the page's budget: `what` says what needs it (ending in its verb, "the
/// answer needs"), `instead` what to ask for.
pub fn check(what: &str, need: u64, instead: &str) -> Result<(), String> {
    if need <= PAGE_BUDGET {
        return Ok(());
    }
    Err(format!("{what} {} of the page's memory, over its budget of {}: {instead}", size(need), size(PAGE_BUDGET)))
}

/// What `auto`'s model holds for `elems` elements per rank: the largest candidate's schedule
/// (`None` when the ranks are out of range: the library refuses them).
pub fn auto_need(p: &AllreduceParams, elems: u64) -> Option<u64> {
    let ranks = usize::try_from(p.ranks).ok().filter(|r| (MIN_RANKS..=MAX_RANKS).contains(r))?;
    let mut cfg = Config::new(ranks, Algo::Ring, p.op, p.dtype, elems);
    cfg.collective = p.collective.unwrap_or(Collective::AllReduce);
    cfg.compress = p.compress;
    Algo::ALL.iter().filter_map(|&algo| schedule_size(&Config { algo, ..cfg.clone() })).map(|z| z.bytes(ranks)).max()
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    u64::from(n.checked_ilog10().unwrap_or(0)) + 1
}

/// The bytes of `story`'s answer (`short`: [`ElementStory::to_json_short`]'s; else
/// [`ElementStory::to_json`]'s), counted from its parts without rendering it: an order of `n`
/// leaves is at most `n` ranks' digits and 4 signs each (`(`, `+`, `)`, a GCE hop's `g`), or
/// short, its `(order of n leaves)`.
pub fn story_answer_bytes(story: &ElementStory, short: bool) -> u64 {
    let rank_digits = digits(story.config.ranks as u64);
    let order = |leaves: usize| -> u64 {
        let n = leaves as u64;
        if short && leaves > OPERAND_EXPR_LEAVES { 20 + digits(n) } else { n.saturating_mul(rank_digits + 4) }
    };
    let s = &story.story;
    let head = HEAD_JSON + order(s.leaves.len()).max(s.leaves.len() as u64 * (rank_digits + 4));
    s.steps.iter().fold(head, |total, st| {
        let operands: u64 = st.operands.iter().map(|o| OPERAND_JSON + order(o.expr.leaf_count())).sum();
        let accumulate = ACCUMULATE_JSON * st.accumulate.len() as u64;
        let dests = 24 * st.dests.len() as u64
            + st.packet.as_ref().map_or(0, |p| 24 * (p.sources.len() + p.dests.len()) as u64);
        total.saturating_add(STEP_JSON + order(st.expr.leaf_count()) + operands + accumulate + dests)
    })
}
