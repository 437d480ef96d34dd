//! # cce-api — everything a `cce` command computes, as one library API
//!
//! The CLI (`crates/cce-cli`) and the Python package (`crates/cce-py`) are thin fronts over
//! these functions: they turn their arguments into the typed parameters here, call, and render
//! what comes back. Nothing here parses a command line or prints, and nothing but [`reveal`](mod@reveal)
//! touches a file.
//!
//! - [`bits`]: [`encode`] / [`encode_values`] from named fields ([`encoder_fields`] lists them
//!   with bits, tag, note and value kind) → [`Encoded`], [`decode`] / [`decode_words`] →
//!   [`Decoded`] (typed [`Field`]s: name, bits, value, tag, note), [`tables`] → [`Tables`],
//!   [`packet_size`], [`dtype_gate`] — each `serde::Serialize` as the JSON object
//!   `cce … --json` prints, with a `to_text` for the text;
//! - [`reduce_rings`](mod@reduce_rings): [`BuildParams`] → [`build()`] → [`Built`] (the rings; dump bytes,
//!   summary and JSON on demand);
//! - [`listing`]: [`disasm`] → a [`Listing`] (queues → packets → descriptors with kind, words,
//!   fields, tags and the walk's fault), rendered by [`Listing::to_json`] and
//!   [`Listing::to_text`] from one walk;
//! - [`run`]: [`run_ring`] — ring dump bytes over loaded memory → per-queue status, counts,
//!   the dumped bytes;
//! - [`reduce`](mod@reduce): [`ReduceParams`] → [`reduce()`] — the whole path (host rings, the
//!   engine executing their bytes);
//! - [`convert`](mod@convert): [`convert()`] and [`generate`] on raw arrays;
//! - [`dtype_value`](mod@dtype_value): `cce value` and the browser page's "dtypes" view —
//!   [`dtype_value()`] → [`DtypeValue`] (bits, exact decimal, fields, neighbours, RNE and
//!   stochastic rounding of a decimal, the value in every other dtype), [`value_bits`];
//! - [`params`]: the values a user names (ops, rounding, algorithms, collectives, FMA
//!   selectors, clamp constants, dtypes), each a type with the one `FromStr` the fronts parse
//!   with — its refusal never names a flag, the front does;
//! - [`collective`]: [`AllreduceParams`] → [`AllreduceParams::prepare`] → a
//!   [`Prepared`](collective::Prepared) all-reduce (checked once, `auto` resolved by the time
//!   model once) → its run; [`allreduce`] in one call; `--explain`
//!   ([`Explanation`](collective::Explanation)), the demo ([`Demo`](collective::Demo)), the
//!   numerics report, and a sweep over every algorithm with its chart;
//! - [`repro`](mod@repro): `cce repro`, the bit-identity matrix of a configuration space
//!   ([`ReproParams`](repro::ReproParams) → [`plan`](repro::ReproParams::plan) → its run →
//!   [`Repro`](repro::Repro): classes, pairs, invariance verdicts, environment; the runs here,
//!   the analysis [`cce_forensics::repro`]'s);
//! - [`ringfile`]: ring dump files as the fronts read them;
//! - [`algo`]: `cce algo`, a user's MSCCL XML schedule checked, summarised and lowered;
//! - [`identify`](mod@identify): `cce identify` — which reduction order made an observed output
//!   ([`identify()`](identify::identify), cce-forensics' candidates and cce's algorithms), and the
//!   probe inputs that let a hardware run answer it ([`make_probe`](identify::make_probe));
//! - [`reveal`](mod@reveal): `cce reveal` — the tree of any all-reduce recovered from its own
//!   outputs (cce-forensics' masks and check) with a shell command, a plan of files or a
//!   caller's function as the black box (this module alone starts processes and touches
//!   files: the black box's contract is a command and files);
//! - [`gce`]: GCE compression of a raw buffer (gradient packets on the engine; MODEL codec);
//! - [`trace`]: a run's Chrome trace-event JSON from the model's timeline;
//! - [`plot`]: charts as SVG documents (plotters, no font needed);
//! - [`report`]: `cce report numerics`'s JSON and chart;
//! - [`runtime`]: the host runtime's encoders and helpers by the study's names (what the C
//!   library exports), and which runtime assert an error is;
//! - [`values`]: the text parsers every front end shares (numbers, dtypes, hex);
//! - [`error`]: [`ApiError`] and its exit-code policy.
//!
//! ## Guarantees
//! - Same inputs, same bits and the same JSON as the `cce` binary: the binary is built on
//!   these functions.
//! - Every refusal is an [`ApiError`] with the CLI's one-line message; [`ApiError::kind`] and
//!   [`ApiError::exit_code`] say whether it is bad input (2) or a run that failed (1), and the
//!   fault's queue / descriptor / reason and a failed rank's rank / step are fields, not text.
//! - No panics on any input; no unsafe; sizes are checked before large allocations.
#![forbid(unsafe_code)]

pub mod algo;
pub mod bench;
pub mod bits;
pub mod collective;
pub mod convert;
pub mod dtype_value;
pub mod error;
pub mod gce;
pub mod identify;
pub mod listing;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod params;
pub mod reduce;
pub mod reduce_rings;
pub mod render;
pub mod repro;
pub mod reveal;
pub mod ringfile;
#[cfg(feature = "plot")]
pub use render::plot;
pub use render::{report, trace};
pub mod run;
pub mod runtime;
pub mod values;
/// The header of a NumPy `.npy` file, as every front reads one: its size from the first
/// bytes, then its fields.
pub use cce_numerics::npy::{Header as NpyHeader, header as npy_header, header_size as npy_header_size};

pub use bits::{
    Decoded, DtypeGate, Encoded, EncoderInfo, Field, FieldInfo, PacketSize, Tables, ValueKind, decode, decode_words,
    decoder_names, dtype_gate, encode, encode_values, encoder, encoder_fields, encoders, packet_size, tables,
};
pub use collective::{AllreduceParams, AllreduceResult, allreduce, allreduce_owned, allreduce_slices};
pub use convert::{Conversion, FILE_BUDGET, Generated, Generation, convert, generate, generation, num_type};
pub use dtype_value::{DtypeValue, DtypeValues, dtype_value, dtype_values, value_bits};
pub use error::{ApiError, ErrorKind, LoadProblem};
pub use listing::{Desc, Listing, PacketListing, QueueListing, RingSide, disasm};
pub use params::{
    AlgoChoice, BuildOp, ClampConstant, FmaSelectors, NumType, ReduceOp, RoundingMode, SampleKind, SelectorsError,
};
pub use reduce::{ReduceParams, ReduceResult, reduce, reduce_into};
pub use reduce_rings::{BuildParams, BuildSummary, Built, OpOptions, build};
pub use run::{QueueReport, RunResult, run_ring};

/// The dtype type of every parameter (re-exported so a front end needs no other crate).
pub use cce_format::SdmaDtype;
/// The confidence tag the typed results carry (re-exported so a front end needs no other crate).
pub use cce_format::Tag;
/// Most sources one reduce takes (the runtime's limit).
pub use cce_format::limits::MAX_SOURCES;
/// A descriptor's size in a ring, bytes.
pub const DESC_BYTES: usize = cce_format::ring::DESC_BYTES;

/// A dtype by SDMA name (`bf16`, `fp32`, …) or value (0..=15), as the CLI's dtype flags take it.
pub fn dtype(name: &str) -> Result<SdmaDtype, ApiError> {
    values::parse_sdma_dtype(name).map_err(ApiError::Input)
}
