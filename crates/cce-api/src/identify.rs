//! `cce identify`: which order made an observed all-reduce output ([`identify()`]), and the
//! probe inputs that let a run on the hardware answer it ([`make_probe`]).
//!
//! The candidates are cce's own algorithms at the inputs' rank count (each run once per
//! accumulate dtype through [`AllreduceParams::prepare`] and [`Prepared::run`](crate::collective::Prepared::run),
//! bit-exact), any user's MSCCL XML schedules, and the families real implementations use
//! (`cce_forensics::family_candidates`) and the rings over both chunk layouts
//! (`cce_forensics::ring_candidates`), scored by cce-forensics; a run whose orders are a
//! family candidate's joins it (cce-forensics merges them), lending it its name. With
//! [`IdentifyParams::channels`] C > 1, the flat ring of C channels (docs/MODEL.md C29) runs as
//! one more candidate, `ring(C channels)`, on nodes of [`IdentifyParams::ranks_per_node`] ranks
//! (the model's when not given), as `cce allreduce --channels C` runs it.
//!
//! ## Guarantees
//! - Every shape is checked before any algorithm runs; every all-reduce is checked with its
//!   memory budget by its preparation.
//! - `ring-2r2w` is `ring`'s order (docs/collectives.md: "Same order as ring"), so it runs once,
//!   as an alias of `ring`; `ring` reduces two sources per packet, so with RNE its
//!   buffer-dtype accumulation is its fp32 accumulation (merge 4 of cce-forensics) and runs
//!   once; `rdh` is the family's pairwise tree over 0..R in every chunk, so it does not run and
//!   is an alias of that candidate. Accumulated in the buffer dtype, `kangaring` is `ring` and `mesh` the sequential sum
//!   from rank 0 up (their documented orders, each add rounded: merge 2), so neither runs then:
//!   each is an alias of the candidate it equals. `ring-2r2w` of C channels is `ring` of C
//!   channels (the same order per piece) and is its alias; on one node every channel's ring is
//!   the one-channel ring turned, so `ring(C channels)` gives `ring`'s bits and joins it.
//! - cce's algorithms carry every element's order from the element story
//!   ([`Prepared::orders`](crate::collective::Prepared::orders): one story per chunk, no run),
//!   so their `expr` is shown and, with stochastic rounding, their consistency is computed as
//!   the families' is. A user schedule of more chunks than stories are told for
//!   (`MAX_ORDER_CHUNKS`) has no `expr`; its bit-exact matches still count.

use std::borrow::Cow;
use std::sync::Arc;

use cce_collectives::collective::{self, Algo, Collective, Config, Hier, Inter, RedOp, UserAlgo};
use cce_collectives::metrics::Check;
use cce_forensics::{
    Candidate, Identification, OrderOf, Prediction, Problem, Rounding, family_candidates, ring_candidates,
};
use cce_format::SdmaDtype;
use cce_numerics::NumType;

/// The answer of an identification ([`Identified::report`]): its ranking, map and counts.
pub use cce_forensics::Report;

use crate::collective::AllreduceParams;
use crate::error::ApiError;
use crate::params::{AlgoChoice, RoundingMode};

/// The parameters of `cce identify`.
#[derive(Clone, Debug, PartialEq)]
pub struct IdentifyParams {
    /// The buffer dtype (a float dtype).
    pub dtype: SdmaDtype,
    /// The accumulate dtype; `None`: both fp32 and the buffer dtype are candidates.
    pub accum: Option<SdmaDtype>,
    /// RNE (bit for bit) or stochastic rounding (consistency).
    pub rounding: RoundingMode,
    /// Users' MSCCL XML schedules, candidates beside cce's algorithms.
    pub algo_files: Vec<Arc<UserAlgo>>,
    /// The NeuronCore arch cce's algorithms run for (ring-2r2w needs 3 or 4).
    pub arch: u64,
    /// Threads of the family orders' evaluation; `None`: the host's.
    pub threads: Option<usize>,
    /// Nodes of this many ranks: every hierarchical pair (`hier(intra/inter)`, docs/MODEL.md
    /// H1) that can run them joins the candidates; `None`: no hierarchy.
    pub ranks_per_node: Option<u64>,
    /// The rank count the inputs must have; `None`: as many as given.
    pub ranks: Option<u64>,
    /// The flat ring's channels (docs/MODEL.md C29): with more than one, `ring(C channels)`
    /// (with its alias `ring-2r2w(C channels)`) joins the candidates, run on nodes of
    /// `ranks_per_node` ranks (the model's when `None`); `None` or 1: the one-channel ring only.
    pub channels: Option<u64>,
}

impl IdentifyParams {
    /// The defaults of `cce identify`: both accumulations, RNE, arch 3, the host's threads.
    pub fn new(dtype: SdmaDtype) -> Self {
        IdentifyParams {
            dtype,
            accum: None,
            rounding: RoundingMode::Rne,
            algo_files: Vec::new(),
            arch: 3,
            threads: None,
            ranks_per_node: None,
            ranks: None,
            channels: None,
        }
    }
}

/// An identification's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identified {
    /// The report.
    pub report: Report,
}

fn num(d: SdmaDtype) -> Result<NumType, ApiError> {
    Ok(NumType::from_sdma(d)?)
}

fn forensics(e: cce_forensics::ForensicsError) -> ApiError {
    ApiError::Input(e.to_string())
}

/// Which order made `observed` ((rank, output) pairs) from `inputs` (one buffer of
/// `params.dtype` per rank): every candidate scored, ranked and mapped.
pub fn identify(
    params: &IdentifyParams,
    inputs: &[&[u8]],
    observed: &[(usize, &[u8])],
) -> Result<Identified, ApiError> {
    let dtype = num(params.dtype)?;
    if let Some(r) = params.ranks {
        if r != inputs.len() as u64 {
            return Err(ApiError::Input(format!(
                "`ranks` {r}: {} inputs are given; give one input per rank",
                inputs.len()
            )));
        }
    }
    let problem = Problem::new(dtype, inputs.to_vec(), observed.to_vec()).map_err(forensics)?;
    let accums: Vec<NumType> = match params.accum {
        Some(a) => vec![num(a)?],
        None if dtype == NumType::F32 => vec![NumType::F32],
        None => vec![NumType::F32, dtype],
    };
    let rounding = match params.rounding {
        RoundingMode::Rne => Rounding::Rne,
        RoundingMode::Sr => Rounding::Sr,
    };
    for u in &params.algo_files {
        if u.ranks() != problem.ranks() || u.collective() != Collective::AllReduce {
            return Err(ApiError::Input(format!(
                "{}: a {} schedule for {} ranks (ngpus), the inputs are an all-reduce of {} ranks",
                u.file,
                u.schedule.program.coll.name(),
                u.ranks(),
                problem.ranks()
            )));
        }
    }
    check_channels(params, problem.ranks(), problem.elems() as u64)?;
    let threads =
        params.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get));
    let mut id = Identification::new(&problem, rounding, threads);
    let ranks = problem.ranks() as u32;
    let mut family = family_candidates(ranks, dtype, &accums, rounding);
    // mesh accumulated in the buffer dtype is the sequential sum from rank 0 up in every chunk
    // (its one R-source packet reads IN(0), …, IN(R−1) in order; merge 2).
    if accums.contains(&dtype) && Algo::Mesh.refusal(problem.ranks(), arch(params)).is_none() {
        let from_0 = family.iter_mut().find(|c| c.name.starts_with("sequential from 0 up") && c.accum.contains(&dtype));
        if let Some(c) = from_0 {
            c.aliases.push(format!("mesh, accumulate {dtype}"));
        }
    }
    // rdh reduces every chunk by the pairwise tree over 0..R (its documented order): the family
    // candidate, under both accumulations (two sources per packet).
    if Algo::Rdh.refusal(problem.ranks(), arch(params)).is_none() {
        for c in family.iter_mut().filter(|c| c.name.starts_with("pairwise tree")) {
            c.aliases.push(format!("rdh{}", c.name.strip_prefix("pairwise tree").unwrap_or("")));
        }
    }
    id.add(family).map_err(forensics)?;
    let rings = ring_candidates(ranks, problem.elems() as u64, dtype, &accums, rounding);
    id.add(rings).map_err(forensics)?;
    for run in runs(params, problem.ranks(), &accums, rounding, dtype) {
        let (outputs, segments) = run_one(params, &run, inputs)?;
        let order_breaks = segments.as_ref().map_or(Vec::new(), |seg| seg.iter().skip(1).map(|s| s.0).collect());
        let order_of: Option<OrderOf> = segments.map(|seg| -> OrderOf {
            Arc::new(move |i| {
                let k = seg.partition_point(|(first, _)| *first <= i).saturating_sub(1);
                seg[k].1.clone()
            })
        });
        let candidate = Candidate { prediction: Prediction::Outputs(outputs), order_of, order_breaks, ..run.candidate };
        id.add(vec![candidate]).map_err(forensics)?;
    }
    Ok(Identified { report: id.report() })
}

/// One run of cce's algorithms (or a user's schedule) to make: the candidate it stands for and
/// its configuration.
struct Run {
    candidate: Candidate,
    algo: AlgoChoice,
    accum: NumType,
    hier: Option<Hier>,
    channels: Option<u64>,
}

/// An algorithm to run as a candidate, before its accumulate dtypes are chosen.
struct Choice {
    algo: AlgoChoice,
    /// Its name in reports.
    name: String,
    /// cce's `algo` name.
    algo_name: Option<String>,
    /// A user's schedule file.
    file: Option<String>,
    /// Two sources per packet: merge 4 (RNE) makes its accumulations one run.
    binary: bool,
    /// A hierarchy's two algorithms.
    hier: Option<Hier>,
    /// The flat ring's channels, when more than one.
    channels: Option<u64>,
}

/// cce's algorithms that run `ranks` ranks at the arch, but those whose documented order makes
/// them another candidate (ring-2r2w is ring; rdh's every chunk is the family's pairwise tree
/// over 0..R, docs/collectives.md), then the users' schedules.
fn choices(params: &IdentifyParams, ranks: usize) -> Vec<Choice> {
    let arch = arch(params);
    let mut out = Vec::new();
    for algo in Algo::ALL {
        if matches!(algo, Algo::Ring2r2w | Algo::Rdh) || algo.refusal(ranks, arch).is_some() {
            continue;
        }
        let name = algo.name().to_string();
        out.push(Choice {
            algo: AlgoChoice::Algo(algo),
            name: name.clone(),
            algo_name: Some(name),
            file: None,
            binary: algo == Algo::Ring,
            hier: None,
            channels: None,
        });
    }
    out.extend(channel_choice(params, ranks));
    out.extend(hier_choices(params, ranks));
    for u in &params.algo_files {
        out.push(Choice {
            algo: AlgoChoice::File(u.clone()),
            name: format!("{} (file)", u.schedule.program.name),
            algo_name: None,
            file: Some(u.file.clone()),
            binary: false,
            hier: None,
            channels: None,
        });
    }
    out
}

/// The flat ring of `channels` C > 1 as it runs `ranks` ranks (nodes of `ranks_per_node`, or
/// the model's): `ring(C channels)`, two sources per packet as the ring of one channel.
fn channel_choice(params: &IdentifyParams, ranks: usize) -> Option<Choice> {
    let c = params.channels.filter(|&c| c > 1)?;
    let name = channel_label(params, ranks, Algo::Ring, c);
    Some(Choice {
        algo: AlgoChoice::Algo(Algo::Ring),
        name: name.clone(),
        algo_name: Some(name),
        file: None,
        binary: true,
        hier: None,
        channels: Some(c),
    })
}

/// `algo` of `channels` as reports name it (`ring(C channels)`).
fn channel_label(params: &IdentifyParams, ranks: usize, algo: Algo, channels: u64) -> String {
    let cfg = Config::new(ranks, algo, RedOp::Add, params.dtype, 1);
    Config { channels: usize::try_from(channels).unwrap_or(usize::MAX), ..cfg }.label()
}

/// Refuses `channels` (and the nodes they turn in) that the flat ring cannot run over these
/// inputs, as its run would, before any candidate is evaluated.
fn check_channels(params: &IdentifyParams, ranks: usize, elems: u64) -> Result<(), ApiError> {
    if let Some(c) = params.channels {
        let p = AllreduceParams {
            ranks_per_node: params.ranks_per_node,
            ..candidate_params(params, ranks as u64, AlgoChoice::Algo(Algo::Ring), Some(c))
        };
        p.prepare(elems)?;
    }
    Ok(())
}

/// The all-reduce of `algo` over `ranks` ranks as a candidate runs it: RNE, nothing checked,
/// the arch of `params`, `channels`.
fn candidate_params(params: &IdentifyParams, ranks: u64, algo: AlgoChoice, channels: Option<u64>) -> AllreduceParams {
    AllreduceParams {
        arch: params.arch,
        check: Check::None,
        channels,
        ..AllreduceParams::new(ranks, algo, RedOp::Add, params.dtype)
    }
}

/// With `ranks_per_node`: every hierarchical pair that can run the ranks in such nodes.
fn hier_choices(params: &IdentifyParams, ranks: usize) -> Vec<Choice> {
    let Some(y) = params.ranks_per_node.and_then(|y| usize::try_from(y).ok()) else { return Vec::new() };
    let mut out = Vec::new();
    for intra in Algo::ALL {
        for inter in Inter::ALL {
            let mut cfg = Config::new(ranks, Algo::Hier, RedOp::Add, params.dtype, ranks as u64);
            cfg.arch = arch(params);
            cfg.model.ranks_per_node = y;
            cfg.hier = Hier { intra, inter };
            if collective::estimate(&cfg).is_err() {
                continue;
            }
            let name = cfg.hier.label();
            out.push(Choice {
                algo: AlgoChoice::Algo(Algo::Hier),
                name: name.clone(),
                algo_name: Some(name),
                file: None,
                binary: false,
                hier: Some(cfg.hier),
                channels: None,
            });
        }
    }
    out
}

/// The runs of [`choices`], each per accumulate dtype (merged where merge 4 holds; kangaring
/// and mesh not in the buffer dtype, where they are aliases).
fn runs(params: &IdentifyParams, ranks: usize, accums: &[NumType], rounding: Rounding, dtype: NumType) -> Vec<Run> {
    let arch = arch(params);
    let mut out = Vec::new();
    for c in choices(params, ranks) {
        let merged = c.binary && rounding == Rounding::Rne;
        let groups: Vec<Vec<NumType>> =
            if merged { vec![accums.to_vec()] } else { accums.iter().map(|&a| vec![a]).collect() };
        for group in groups {
            // Accumulated in the buffer dtype, kangaring is ring and mesh the family's
            // sequential sum from 0 (merge 2 over their documented orders): no run of their own.
            if group == [dtype] && matches!(c.algo, AlgoChoice::Algo(Algo::KangaRing | Algo::Mesh)) {
                continue;
            }
            let name = &c.name;
            let label =
                if group.len() == accums.len() { name.clone() } else { format!("{name}, accumulate {}", group[0]) };
            let mut aliases = Vec::new();
            if let Some(channels) = c.channels {
                // The same order per piece as ring of as many channels.
                if Algo::Ring2r2w.refusal(ranks, arch).is_none() {
                    aliases.push(channel_label(params, ranks, Algo::Ring2r2w, channels));
                }
            } else if c.algo == AlgoChoice::Algo(Algo::Ring) {
                if Algo::Ring2r2w.refusal(ranks, arch).is_none() {
                    aliases.push("ring-2r2w".to_string());
                }
                if group.contains(&dtype) && Algo::KangaRing.refusal(ranks, arch).is_none() {
                    aliases.push(format!("kangaring, accumulate {dtype}"));
                }
            }
            let candidate = Candidate {
                name: label,
                algo: c.algo_name.clone(),
                file: c.file.clone(),
                accum: group.clone(),
                aliases,
                prediction: Prediction::Outputs(Vec::new()),
                // The order of every element: from the element story, once the run is prepared.
                order_of: None,
                order_breaks: Vec::new(),
            };
            out.push(Run { candidate, algo: c.algo.clone(), accum: group[0], hier: c.hier, channels: c.channels });
        }
    }
    out
}

/// The arch as the algorithms' refusals take it.
fn arch(params: &IdentifyParams) -> u32 {
    u32::try_from(params.arch).unwrap_or(u32::MAX)
}

/// Runs one candidate's all-reduce over `inputs` (read in place), RNE, nothing checked; with
/// its outputs, the order of every element as the element story tells it (`None` for a user
/// schedule of more chunks than stories are told for).
fn run_one(params: &IdentifyParams, run: &Run, inputs: &[&[u8]]) -> Result<(Vec<Vec<u8>>, Option<Segments>), ApiError> {
    let accum = run.accum.to_sdma().ok_or_else(|| ApiError::Input(format!("`accum` {}: no SDMA dtype", run.accum)))?;
    let p = AllreduceParams {
        accum: Some(accum),
        // Nodes matter to a hierarchy and to a ring of several channels (where they turn).
        ranks_per_node: if run.hier.is_some() || run.channels.is_some() { params.ranks_per_node } else { None },
        intra: run.hier.map(|h| h.intra),
        inter: run.hier.map(|h| h.inter),
        ..candidate_params(params, inputs.len() as u64, run.algo.clone(), run.channels)
    };
    let elems = inputs[0].len() as u64 / params.dtype.bytes().max(1) as u64;
    let job = p.prepare(elems)?;
    let segments = job.orders().ok().filter(|s| !s.is_empty());
    let r = job.run(inputs.iter().map(|&i| Cow::Borrowed(i)).collect())?;
    Ok((r.outcome.outputs, segments))
}

/// `(first element, order)` segments, ascending.
type Segments = Vec<(u64, cce_numerics::order::Order)>;

/// Probe inputs and what they separate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeFiles {
    /// Ranks.
    pub ranks: u64,
    /// Elements per rank.
    pub elems: u64,
    /// The dtype.
    pub dtype: SdmaDtype,
    /// Every rank's input bytes.
    pub inputs: Vec<Vec<u8>>,
    /// Elements per period (any period of consecutive elements separates every pair).
    pub period: usize,
    /// The merged family orders it separates.
    pub orders: usize,
}

/// Probe inputs for `ranks` ranks of `elems` elements of `dtype` (cce-forensics'
/// `make_probe`), refused over the memory budget before anything is made.
pub fn make_probe(ranks: u64, elems: u64, dtype: SdmaDtype) -> Result<ProbeFiles, ApiError> {
    let t = num(dtype)?;
    let bytes = ranks.saturating_mul(elems).saturating_mul(t.size() as u64);
    let budget = cce_collectives::collective::default_budget();
    if bytes > budget {
        return Err(forensics(cce_forensics::ForensicsError::Budget { what: "the probe", bytes, budget }));
    }
    if elems == 0 {
        return Err(forensics(cce_forensics::ForensicsError::Empty));
    }
    let r = u32::try_from(ranks).unwrap_or(u32::MAX);
    let p = cce_forensics::make_probe(r, elems as usize, t).map_err(forensics)?;
    Ok(ProbeFiles { ranks, elems, dtype, inputs: p.inputs, period: p.period, orders: p.orders })
}

/// Refuses an identification whose files would exhaust memory: `input_bytes` per rank over
/// `ranks` ranks and `observed` outputs, checked before any is read.
pub fn check_size(input_bytes: u64, ranks: u64, observed: u64) -> Result<(), ApiError> {
    // The inputs, the observed outputs, one all-reduce's model (about 2.1× the inputs) and its
    // outputs; and the map's programme: per element (at least one byte of input), a bit per
    // candidate (about 6R + 8 of them: sequential orders, rings, trees, runs) in whole words
    // and the best candidate before it (4 bytes).
    let map_words = ranks.saturating_mul(6).saturating_add(8) / 64 + 1;
    let per_byte = ranks.saturating_mul(4).saturating_add(observed).saturating_add(map_words * 8 + 4);
    let bytes = input_bytes.saturating_mul(per_byte);
    let budget = cce_collectives::collective::default_budget();
    if bytes > budget {
        return Err(forensics(cce_forensics::ForensicsError::Budget { what: "the identification", bytes, budget }));
    }
    Ok(())
}
