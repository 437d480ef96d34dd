//! The command-line contract (clap derive). Command names, flags and JSON keys are a contract:
//! extend, never rename.

use clap::{Args, Parser, Subcommand};

use crate::error::CliError;

/// cce — a bit-exact model of the Trainium CCE (compute-DMA) in-transfer reduce.
///
/// The bits: encode and decode every CCE descriptor and meta-control word, with the tag of every
/// field (HIGH / MED / LOW / MODEL). The engine: build the tx/rx rings of a reduce as the host
/// runtime does, disassemble them, and execute ring bytes over memory (ADD, FMA, MIN, MAX; RNE or
/// stochastic rounding). Collectives: all-reduce over simulated ranks, each with its own engine.
///
/// Every command prints text for humans; with `--json`, exactly one JSON object on one line.
/// Exit codes: 0 success, 2 bad input (one line on stderr), 1 a run that executed and failed.
#[derive(Debug, Parser)]
#[command(name = "cce", version, about, long_about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Encode a meta-control word or a 16-byte descriptor from its fields.
    ///
    /// Run `cce encode <ENCODER> --help` for an encoder's fields, their bits and tags.
    /// Encoders: fma-meta-ctrl min-max-meta-ctrl add-meta-ctrl gradient-meta-ctrl ext-meta-ctrl
    /// replication-meta-ctrl copy-meta-ctrl fma-descriptor min-max-descriptor
    /// seed-init-descriptor replication-descriptor gradient-descriptor m2s-data s2m-data.
    Encode(EncodeArgs),
    /// Decode hex bytes as an encoder's output: every field by name, with its tag.
    ///
    /// The hex is the little-endian bytes (as `cce encode` prints in bytes_hex); a one-word
    /// layout also takes a 0x-number. `meta-ctrl` lists every encoder a word can come from;
    /// `cce-info` reads the 140-byte kbin_dma_desc_cce_info_t.
    Decode(DecodeArgs),
    /// Print the op, dtype and arch tables with their tags.
    Tables(TablesArgs),
    /// The CCE reduce packet size of study §7.1.
    PacketSize(PacketSizeArgs),
    /// The NC-v1 in/out dtype validity gate of study §7.2.
    DtypeGate(DtypeGateArgs),
    /// Build the tx/rx rings of one reduce, as the host runtime would.
    ///
    /// `--out` names the output dtype when its value is a dtype, else the ring dump file to
    /// write (`--out-dtype` and `-o/--output` say which unambiguously).
    Build(Box<BuildArgs>),
    /// Disassemble a ring dump (or raw ring memory: --tx / --rx / --ring-size): every
    /// descriptor, its packet, fields and tags.
    Disasm(DisasmArgs),
    /// Benchmarks: `cce bench [numerics|encode|reduce|allreduce] [--json]`; bare, every benchmark.
    Bench(BenchArgs),
    /// Reduce files through the whole path: host rings, the engine, memory.
    Reduce(Box<ReduceArgs>),
    /// Execute a ring dump (or raw ring memory: --tx / --rx / --ring-size) against memory
    /// loaded from files, then dump memory ranges.
    Run(RunArgs),
    /// Convert a raw little-endian array between dtypes (ml_dtypes semantics by default).
    Convert(ConvertArgs),
    /// Write a deterministic raw little-endian test array (inputs for reduce, run and convert).
    Gen(GenArgs),
    /// One value in one dtype, told in full: its bits and exact decimal, class and bit fields,
    /// neighbours and ulp, how a decimal rounds into the dtype (to nearest even, and the two
    /// outcomes of stochastic rounding with their probabilities), and the value converted to
    /// every other dtype.
    Value(ValueArgs),
    /// All-reduce over R simulated ranks, lowered to CCE packets and executed on the engine.
    ///
    /// `--algo-file FILE.xml` runs a user's MSCCL XML schedule instead of cce's own algorithms
    /// (ranks and collective from the file; see `cce algo`).
    Allreduce(Box<AllreduceArgs>),
    /// Check and summarise a user's MSCCL XML schedule: the executor's rules, links,
    /// deadlocks, races, the collective it computes; the packets it lowers to; `--lower DIR`
    /// writes every rank's ring dump for `cce disasm`.
    Algo(AlgoArgs),
    /// Reports: `cce report numerics [--plot FILE.svg] [--json]` — the all-reduce error against
    /// the rank count, bf16 RNE vs SR vs an fp32 baseline.
    Report(crate::report_cmd::ReportArgs),
    /// The main job: the study's worked examples end to end, then an 8-rank all-reduce.
    Demo(DemoArgs),
    /// Which reduction order made an observed all-reduce output: cce's algorithms and the
    /// orders real implementations use (a sequential sum from every start rank, both
    /// directions; the pairwise tree; one R-source reduce), ranked by the elements they match
    /// bit for bit, with the map of element ranges to orders and the elements nothing explains.
    ///
    /// `--make-probe DIR` writes inputs on which every pair of those orders gives different
    /// bits in every chunk of 64 elements, and a README on running them on a Trainium instance.
    Identify(Box<IdentifyArgs>),
    /// Why are my bits different? Runs every configuration of the lists once on the same
    /// inputs: the classes of bit-identical outputs, each class against the first (the count
    /// of differing elements, the first one, both values, their distance in ulps), the
    /// parameter that separates them, each algorithm's invariance over each swept axis.
    ///
    /// Lists: comma-separated, or the flag repeated, or both (`--algo ring,mesh --algo rdh`).
    Repro(Box<ReproArgs>),
    /// The tree of any all-reduce, recovered from its own outputs: your command (or your
    /// hardware, through a plan of files) is run on masked inputs, each element's tree of adds
    /// and its roundings are rebuilt, the elements are cut into classes that share a tree, and
    /// every class is checked on random inputs before it is called revealed.
    Reveal(Box<crate::reveal_cmd::RevealArgs>),
}

/// A number as `--element` and `--rank` take it: decimal or 0x-hex, a leading `-` accepted so
/// that the command refuses a negative one with the range it takes (clap's own refusal of
/// `-1` reads as an unknown flag).
fn signed(s: &str) -> Result<i128, String> {
    match s.trim().strip_prefix('-') {
        Some(rest) => {
            cce_api::values::parse_u64(rest).map(|v| -i128::from(v)).map_err(|_| format!("'{s}' is not a number"))
        }
        None => cce_api::values::parse_u64(s).map(i128::from),
    }
}

#[derive(Debug, Args)]
#[command(after_help = "\
Limits: 2..=4096 ranks; mesh runs at most 32 ranks (it reduces every rank's chunk in one CCE packet, \
and a packet has at most 32 sources); ring-2r2w needs arch 3 or 4 (replication).
Memory: the inputs are the ranks' IN buffers; each rank adds its W buffers and at most two \
steps of scratch chunks (P, and RECV for ring-2r2w), and the outputs replace the W buffers as \
they are read: about 2.1 x ranks x elems x dtype bytes at 8 or more ranks, plus the rings, \
within the budget (--budget; default 3/4 of this host's memory). The whole configuration, budget included, is checked before any input is \
generated or read (for --sweep: every size, before the first runs).")]
pub(crate) struct AllreduceArgs {
    /// Ranks, 2..=4096 (mesh: at most 32); with --algo-file, the file's ngpus, with --nodes,
    /// nodes x ranks-per-node (given, they must agree).
    #[arg(long, value_parser = cce_api::values::parse_u64, required_unless_present_any = ["algo_file", "nodes"])]
    pub(crate) ranks: Option<u64>,
    /// Nodes of --ranks-per-node ranks (when not given, the instance's: trn1 32, trn2 and trn3
    /// 128): the ranks are nodes x ranks-per-node, linked inside a node by NeuronLink and
    /// between nodes by EFA.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) nodes: Option<u64>,
    /// ring, ring-2r2w (arch 3 or 4), kangaring, mesh (at most 32 ranks), rdh (a power-of-two
    /// rank count), hier (--intra inside each node, --inter between nodes) or auto (the least
    /// model time; see --explain).
    #[arg(long, required_unless_present = "algo_file", conflicts_with = "algo_file")]
    pub(crate) algo: Option<String>,
    /// With --algo hier: the algorithm inside each node (ring, ring-2r2w, kangaring, mesh or
    /// rdh; ring when not given).
    #[arg(long)]
    pub(crate) intra: Option<String>,
    /// With --algo hier: the algorithm between nodes, among the ranks of one local index
    /// (ring, mesh, single-step-mesh or rdh; ring when not given).
    #[arg(long)]
    pub(crate) inter: Option<String>,
    /// Ring cycles of the flat ring (1-32; --algo ring or ring-2r2w): every chunk is cut into
    /// C pieces, piece k reduced and gathered round channel k's ring, which enters each node
    /// k·Y/C ranks on, so each channel crosses the node boundaries through other chips' EFA
    /// interfaces (MODEL, docs/MODEL.md C29). With --algo auto: the channels of its ring
    /// candidate (by itself auto tries one per EFA interface on Trn1 over nodes).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) channels: Option<u64>,
    /// A user's schedule in MSCCL XML (as msccl-tools writes it) instead of --algo: checked
    /// before anything runs (docs/MODEL.md X1-X13); its coll decides the collective.
    #[arg(long, value_name = "FILE.xml")]
    pub(crate) algo_file: Option<std::path::PathBuf>,
    /// add, min, max or avg.
    #[arg(long)]
    pub(crate) op: String,
    /// Buffer dtype.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_api::SdmaDtype,
    /// Accumulate dtype; omitted: fp32 for a float dtype, the dtype itself for an integer one.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) accum: Option<cce_api::SdmaDtype>,
    /// Elements per rank (without it, --input-dir's rank0.bin gives the count; ignored with
    /// --sweep).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: Option<u64>,
    /// Seed of the generated inputs (and of stochastic rounding).
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) seed: u64,
    /// NeuronCore arch (2, 3 or 4).
    #[arg(long, default_value = "3", value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) arch: u64,
    /// rne or sr (stochastic rounding, seeded by --seed).
    #[arg(long, default_value = "rne")]
    pub(crate) rounding: String,
    /// Read rank r's input from DIR/rank{r}.bin.
    #[arg(long)]
    pub(crate) input_dir: Option<std::path::PathBuf>,
    /// Write rank r's output to DIR/rank{r}.bin.
    #[arg(long)]
    pub(crate) output_dir: Option<std::path::PathBuf>,
    /// Inject a failure: this rank stops ...
    #[arg(long, requires = "fail_step", value_parser = cce_api::values::parse_u64)]
    pub(crate) fail_rank: Option<u64>,
    /// ... before this step.
    #[arg(long, requires = "fail_rank", value_parser = cce_api::values::parse_u64)]
    pub(crate) fail_step: Option<u64>,
    /// allreduce, reduce-scatter or all-gather; omitted: allreduce, or with --algo-file the
    /// file's coll (which a given one must equal).
    #[arg(long)]
    pub(crate) collective: Option<String>,
    /// `MIN:MAX` bytes per rank: one row per element count, doubling from MIN (nccl-tests
    /// style); sizes that round to the same count run once.
    #[arg(long, conflicts_with_all = ["input_dir", "output_dir"])]
    pub(crate) sweep: Option<String>,
    /// Seconds a rank waits for a semaphore before failing.
    #[arg(long, default_value = "60", value_parser = cce_api::values::parse_u64)]
    pub(crate) timeout: u64,
    /// Time model: the instance type whose public figures it starts from (trn1, trn2, trn3);
    /// default: the arch's (2: trn1, 3: trn2, 4: trn3).
    #[arg(long)]
    pub(crate) instance: Option<String>,
    /// Time model: nanoseconds per descriptor.
    #[arg(long)]
    pub(crate) alpha_ns: Option<f64>,
    /// Time model: DMA bandwidth per rank (all its engines), GB/s.
    #[arg(long)]
    pub(crate) dma_gbps: Option<f64>,
    /// Time model: DMA engines per rank.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) engines: Option<u64>,
    /// Time model: a rank's memory (HBM) bandwidth, GB/s.
    #[arg(long)]
    pub(crate) hbm_gbps: Option<f64>,
    /// Time model: ring link bandwidth inside a node, GB/s.
    #[arg(long)]
    pub(crate) link_gbps: Option<f64>,
    /// Time model: one EFA interface's bandwidth between nodes, GB/s each direction.
    #[arg(long)]
    pub(crate) inter_link_gbps: Option<f64>,
    /// Time model: EFA interfaces per node (its chips share them evenly).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) efa_per_node: Option<u64>,
    /// Time model: fraction of the DMA rate a CCE reduce runs at.
    #[arg(long)]
    pub(crate) cce_rate: Option<f64>,
    /// Time model: microseconds per step that reaches another rank of its node (a hop).
    #[arg(long)]
    pub(crate) latency_us: Option<f64>,
    /// Time model: microseconds per step that reaches another node.
    #[arg(long)]
    pub(crate) inter_latency_us: Option<f64>,
    /// Time model: microseconds before the first step (fitted; 0 turns it off).
    #[arg(long)]
    pub(crate) launch_us: Option<f64>,
    /// Time model: microseconds every step with work adds (fitted; 0 turns it off).
    #[arg(long)]
    pub(crate) step_us: Option<f64>,
    /// Time model: fraction of the engines' rate a collective's packets get (fitted; 1 is the
    /// full rate).
    #[arg(long)]
    pub(crate) dma_share: Option<f64>,
    /// Time model: consecutive ranks per node.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks_per_node: Option<u64>,
    /// Time model: consecutive ranks per chip (bytes between them cross no link).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) cores_per_chip: Option<u64>,
    /// Print every algorithm's model time, the model's parameters and auto's choice, and stop
    /// (nothing runs).
    #[arg(long, conflicts_with_all = ["sweep", "trace", "output_dir"])]
    pub(crate) explain: bool,
    /// Write a Chrome trace-event JSON of the run (Perfetto opens it): a process per rank, a
    /// track per DMA engine, a slice per packet at its model time, flows from producer to
    /// consumer, bytes in flight per link.
    #[arg(long, conflicts_with = "sweep")]
    pub(crate) trace: Option<std::path::PathBuf>,
    /// With --sweep: draw bus bandwidth against size for every algorithm (the simulator's speed
    /// on this CPU, and the Trainium model) into this SVG, auto's choice marked.
    #[arg(long, requires = "sweep")]
    pub(crate) plot: Option<std::path::PathBuf>,
    /// Model memory budget in bytes; default: 3/4 of this host's memory.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) budget: Option<u64>,
    /// `gce`: compress what crosses a node boundary (study §9.3; the codec is the project's
    /// MODEL, docs/MODEL.md G6): the ring all-reduce of bf16, fp16 or fp32, nodes of
    /// --ranks-per-node ranks, two nodes when not given. The JSON adds the bytes over the node
    /// boundaries against the same run uncompressed (`hop_bytes_ratio`).
    #[arg(long, conflicts_with_all = ["sweep", "explain"])]
    pub(crate) compress: Option<String>,
    /// exact: compare every rank's output with the exact reduction of the inputs, streaming
    /// over blocks in constant memory on this host's threads; none: skip it (the error keys
    /// are null).
    #[arg(long, default_value = "exact", value_parser = |s: &str| s.parse::<cce_api::params::Check>())]
    pub(crate) check: cce_api::params::Check,
    /// Tell how element I of the output was made instead of running the all-reduce: its chunk,
    /// every step that touched it (rank, step, packet, descriptors), the operands in order, each
    /// partial before and after rounding, how it rounded (RNE, SR's random bits, a GCE hop),
    /// the error so far and the order as an expression. Computed from the schedule for that
    /// element alone (any size; with --input-dir only the needed elements are read).
    #[arg(long, allow_hyphen_values = true, value_parser = signed, conflicts_with_all = ["sweep", "explain", "trace", "output_dir", "fail_rank"])]
    pub(crate) element: Option<i128>,
    /// With --element: the rank whose output is shown; rank 0 unless given, or for a
    /// reduce-scatter the rank that holds the element.
    #[arg(long, requires = "element", allow_hyphen_values = true, value_parser = signed)]
    pub(crate) rank: Option<i128>,
    /// One JSON object instead of a report (with --sweep: `{"rows": [...]}`; with --element:
    /// `{"element": {...}}`).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Same inputs: generated inputs are prefix-stable (element i of rank r depends only on \
--input-seed, r and i) and --input-dir's files give each size their first N elements, so runs \
of different sizes are compared on the elements both have (batch invariance). Different rank \
counts or dtypes have different inputs: they get error figures, not a bit comparison. \
Combinations that cannot run (mesh over 32 ranks, rdh at a rank count that is not a power of \
two, ring-2r2w on arch 2, --compress gce off ring, --channels over 1 off the flat ring or with \
--compress gce, a schedule at another rank count) are listed as skipped. At most 1024 \
configurations; every one (its memory budget with the reference output held beside it \
included) is checked before anything runs.")]
pub(crate) struct ReproArgs {
    /// Rank counts, 2..=4096.
    #[arg(long, required = true, value_delimiter = ',', value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks: Vec<u64>,
    /// Algorithms: ring, ring-2r2w, kangaring, mesh, rdh, hier (ring inside and between nodes of
    /// --ranks-per-node), hier(INTRA/INTER) (a named pair), auto.
    #[arg(long, value_delimiter = ',', required_unless_present = "algo_file")]
    pub(crate) algo: Vec<String>,
    /// A user's MSCCL XML schedule, one more algorithm (repeat for several).
    #[arg(long, value_name = "FILE.xml")]
    pub(crate) algo_file: Vec<std::path::PathBuf>,
    /// Elements per rank: numbers, or MIN:MAX (doubling from MIN); without it, --input-dir's
    /// files' length.
    #[arg(long, value_delimiter = ',', required_unless_present = "input_dir")]
    pub(crate) elems: Vec<String>,
    /// Buffer dtypes.
    #[arg(long, required = true, value_delimiter = ',', value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: Vec<cce_api::SdmaDtype>,
    /// Accumulate dtypes; omitted: fp32 for a float dtype, the dtype itself for an integer one.
    #[arg(long, value_delimiter = ',', value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) accum: Vec<cce_api::SdmaDtype>,
    /// Roundings: rne, sr.
    #[arg(long, value_delimiter = ',', default_value = "rne")]
    pub(crate) rounding: Vec<String>,
    /// Stochastic rounding's seeds (32 bits; the sr configurations run once per seed).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) seed: Vec<u64>,
    /// NeuronCore archs (2, 3 or 4).
    #[arg(long, value_delimiter = ',', default_value = "3", value_parser = cce_api::values::parse_u64)]
    pub(crate) arch: Vec<u64>,
    /// Compression: none, gce (the ring all-reduce only).
    #[arg(long, value_delimiter = ',', default_value = "none")]
    pub(crate) compress: Vec<String>,
    /// Ranks per node (the time model's, and the node boundaries --compress gce compresses
    /// over); omitted: the model's default.
    #[arg(long, value_delimiter = ',', value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks_per_node: Vec<u64>,
    /// The flat ring's channels, 1-32 (as `cce allreduce --channels`; more than one with
    /// --algo ring, ring-2r2w or auto only, without --compress gce).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) channels: Vec<u64>,
    /// add, min, max or avg (one for every configuration).
    #[arg(long, default_value = "add")]
    pub(crate) op: String,
    /// Seed of the generated inputs (rank r's are `cce gen --seed <seed + r>`'s, as `cce
    /// allreduce --seed` generates them).
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) input_seed: u64,
    /// Read rank r's input from DIR/rank{r}.npy or DIR/rank{r}.bin (equally long; a size N
    /// reads the first N elements).
    #[arg(long, value_name = "DIR")]
    pub(crate) input_dir: Option<std::path::PathBuf>,
    /// Compare every pair of classes, not only each with the first (their first configurations
    /// run again, one pair at a time).
    #[arg(long)]
    pub(crate) all_pairs: bool,
    /// Model memory budget in bytes; default: 3/4 of this host's memory.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) budget: Option<u64>,
    /// Draw the matrix into this SVG: a cell per pair of configurations, coloured by class
    /// (at most 256 configurations).
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<std::path::PathBuf>,
    /// One JSON object instead of the report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Exit 0 when every check passes; 2 with one line naming rank, tb, step, line and the rule broken \
(an unmatched or reordered send, a deadlock, a data race, an offset past the buffer, an \
unknown step type, a missing attribute, a schedule that does not compute its collective).")]
pub(crate) struct AlgoArgs {
    /// The MSCCL XML file.
    pub(crate) file: std::path::PathBuf,
    /// Elements per rank buffer to lower for (a multiple of the file's nchunksperloop, within
    /// its minBytes / maxBytes); default: the first such multiple from 1048576 when the file
    /// accepts it, else the accepted size nearest to it.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: Option<u64>,
    /// Lower for a size outside the file's minBytes / maxBytes (MSCCL's runtime selects an
    /// algorithm by them, so the executor would not run this one at that size; the output says
    /// so).
    #[arg(long)]
    pub(crate) any_size: bool,
    /// Buffer dtype to lower for.
    #[arg(long, default_value = "bf16", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_api::SdmaDtype,
    /// NeuronCore arch (2, 3 or 4).
    #[arg(long, default_value = "3", value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) arch: u64,
    /// Write every rank's ring dump to DIR/rank{r}.ring (`cce disasm` shows the packets).
    #[arg(long, value_name = "DIR")]
    pub(crate) lower: Option<std::path::PathBuf>,
    /// One JSON object instead of the summary.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Files: DIR/rank{r}.bin (raw little-endian) or DIR/rank{r}.npy, ranks 0..R-1 with none missing. \
--observed is one file (rank 0's output, or --observed-rank's) or a directory of rank{r} files. \
Elements with a NaN or an infinity among their inputs cannot separate orders: they are listed and \
left out of every count. Exit 0 with the answer; 2 on bad input.")]
pub(crate) struct IdentifyArgs {
    /// Every rank's input: DIR/rank{r}.bin or DIR/rank{r}.npy.
    #[arg(long, required_unless_present = "make_probe", conflicts_with = "make_probe")]
    pub(crate) input_dir: Option<std::path::PathBuf>,
    /// The observed output: one file (rank 0's unless --observed-rank) or a directory of
    /// rank{r}.bin / rank{r}.npy.
    #[arg(long, required_unless_present = "make_probe", conflicts_with = "make_probe")]
    pub(crate) observed: Option<std::path::PathBuf>,
    /// The rank whose output --observed (one file) is.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) observed_rank: Option<u64>,
    /// Buffer dtype (a float dtype).
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_api::SdmaDtype,
    /// Accumulate dtype; omitted: both fp32 and the buffer dtype are candidates.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) accum: Option<cce_api::SdmaDtype>,
    /// rne (candidates match bit for bit) or sr (stochastic rounding: a candidate is consistent
    /// with an element when some choice of round-down / round-up gives its bits).
    #[arg(long, default_value = "rne")]
    pub(crate) rounding: String,
    /// A user's MSCCL XML all-reduce schedule, a candidate beside cce's algorithms (repeat).
    #[arg(long, value_name = "FILE.xml", action = clap::ArgAction::Append)]
    pub(crate) algo_file: Vec<std::path::PathBuf>,
    /// NeuronCore arch cce's algorithms run for (2, 3 or 4; ring-2r2w needs 3 or 4).
    #[arg(long, default_value = "3", value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) arch: u64,
    /// Threads of the evaluation; default: this host's.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) threads: Option<u64>,
    /// Nodes of this many ranks: every hierarchical pair (hier(intra/inter)) that can run them
    /// joins the candidates (and a --channels ring turns in them).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks_per_node: Option<u64>,
    /// The flat ring of this many channels (1-32, as `cce allreduce --channels`) joins the
    /// candidates as ring(C channels), on nodes of --ranks-per-node ranks (the instance's when
    /// not given), as that run would make them.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) channels: Option<u64>,
    /// Write probe inputs DIR/rank{r}.bin (and DIR/README.md) instead of identifying; DIR must
    /// be empty or new unless --force.
    #[arg(long, value_name = "DIR", requires_all = ["ranks", "elems"])]
    pub(crate) make_probe: Option<std::path::PathBuf>,
    /// With --make-probe: write into a directory that already holds files (rank files beyond
    /// the probe's are removed, so no stale rank file stays).
    #[arg(long, requires = "make_probe")]
    pub(crate) force: bool,
    /// The probe's ranks; when identifying, the rank count --input-dir must hold (a rank file
    /// beyond it is refused, not read).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks: Option<u64>,
    /// The probe's elements per rank.
    #[arg(long, value_parser = cce_api::values::parse_u64, requires = "make_probe")]
    pub(crate) elems: Option<u64>,
    /// One JSON object instead of the report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Elements per rank of the 8-rank bf16 all-reduce.
    #[arg(long, default_value = "16777216", value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// One JSON object (the examples, every all-reduce row, whether every check passed) instead
    /// of the listing and tables.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// Input dtype (the SDMA names, or fp8e4fn; e.g. bf16, fp8e4, i32).
    #[arg(long)]
    pub(crate) from: String,
    /// Output dtype.
    #[arg(long)]
    pub(crate) to: String,
    /// Input file: raw little-endian elements of --from.
    #[arg(long)]
    pub(crate) input: std::path::PathBuf,
    /// Output file (written atomically).
    #[arg(long)]
    pub(crate) output: std::path::PathBuf,
    /// Rounding to the output dtype: rne or sr (stochastic).
    #[arg(long, default_value = "rne")]
    pub(crate) rounding: String,
    /// Stochastic-rounding seed (0 when omitted).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) seed: Option<u64>,
    /// Overflow to ±max finite instead of ±inf / NaN.
    #[arg(long)]
    pub(crate) saturate: bool,
    /// Threads.
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) threads: u64,
    /// One JSON object (what was written: elements, bytes, dtypes, rounding) instead of a line.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ValueArgs {
    /// The dtype (the SDMA names, or fp8e4fn; also f16, f32, e3m4, e4m3, e5m2, e4m3fn).
    #[arg(long)]
    pub(crate) dtype: String,
    /// Overflow to ±max finite instead of ±inf / NaN: the value's rounding and the conversions.
    #[arg(long)]
    pub(crate) saturate: bool,
    /// A value, as an option (repeatable; before the positional ones): for text that starts
    /// with `-` and is no plain number (`--value -inf`).
    #[arg(long = "value", value_name = "VALUE", allow_hyphen_values = true, action = clap::ArgAction::Append)]
    pub(crate) value_opt: Vec<String>,
    /// Values: a decimal number (read as the nearest f64, then rounded to nearest even into
    /// --dtype; inf, -inf, nan), an integer dtype's integer, or 0x and the bits. Several print
    /// {"values": [...]} with --json.
    #[arg(value_name = "VALUE", allow_negative_numbers = true, required_unless_present = "value_opt")]
    pub(crate) values: Vec<String>,
    /// One JSON object (every key of the text, the page's contract) instead of the text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct GenArgs {
    /// Element dtype (SDMA names, or fp8e4fn).
    #[arg(long)]
    pub(crate) dtype: String,
    /// Element count.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// Seed: the same seed gives the same bytes.
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) seed: u64,
    /// uniform (v in [-1, 1): floats v rounded to the dtype, integers trunc(1000 v) wrapped to
    /// the dtype's width; the all-reduce's inputs for rank r are --seed <seed + r>), ramp (0, 1,
    /// 2, … in the dtype), or bits (pseudo-random bytes: any pattern, NaN and inf included).
    #[arg(long, default_value = "uniform")]
    pub(crate) values: String,
    /// Output file (written atomically).
    #[arg(short = 'o', long)]
    pub(crate) output: std::path::PathBuf,
    /// One JSON object instead of a line.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReduceArgs {
    /// add, fma, min or max.
    #[arg(long)]
    pub(crate) op: String,
    /// Source dtype.
    #[arg(long = "in", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) in_dt: cce_api::SdmaDtype,
    /// Accumulate dtype.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) accum: cce_api::SdmaDtype,
    /// Output dtype.
    #[arg(long = "out", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) out_dt: cce_api::SdmaDtype,
    /// Source files: raw little-endian arrays of the in dtype, equal lengths (repeat).
    #[arg(long, required = true, num_args = 1.., action = clap::ArgAction::Append)]
    pub(crate) src: Vec<std::path::PathBuf>,
    /// Destination files, each receives the result (more than one replicates: arch ≥ 3).
    #[arg(long, required = true, num_args = 1.., action = clap::ArgAction::Append)]
    pub(crate) dst: Vec<std::path::PathBuf>,
    /// Op options shared with `cce reduce` / `cce build`.
    #[command(flatten)]
    pub(crate) opts: OpArgs,
    /// NeuronCore arch (2, 3 or 4).
    #[arg(long, default_value = "3", value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) arch: u64,
    /// Engine threads.
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) threads: u64,
    /// One JSON object instead of a line.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Rings given as raw device memory instead of a dump: one group of `--tx`, `--rx` and
/// `--ring-size` per queue (queues 0, 1, … in order); `--tx-tail`, `--rx-tail` and `--phase`
/// are each given once per queue or not at all.
#[derive(Debug, Args)]
pub(crate) struct RawRingArgs {
    /// A queue's tx ring memory: slot 0 first, 16 bytes per descriptor, at most --ring-size
    /// descriptors (repeat per queue).
    #[arg(long, action = clap::ArgAction::Append)]
    pub(crate) tx: Vec<std::path::PathBuf>,
    /// A queue's rx ring memory, as --tx.
    #[arg(long, action = clap::ArgAction::Append)]
    pub(crate) rx: Vec<std::path::PathBuf>,
    /// Slots per ring (a multiple of 16, at least 32), per queue.
    #[arg(long, action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) ring_size: Vec<u64>,
    /// Tx slots doorbelled (the engine runs slots 0..T); default: every descriptor in the file.
    #[arg(long, action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) tx_tail: Vec<u64>,
    /// Rx slots doorbelled; default: every descriptor in the file.
    #[arg(long, action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) rx_tail: Vec<u64>,
    /// Ring id of the lap in memory (0..=3); default 1, the driver's first lap.
    #[arg(long, action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) phase: Vec<u64>,
    /// The NeuronCore arch the raw rings were captured on (1..=4), whose per-packet limits
    /// apply (descriptors per packet; EXT combos from 3); default 3. A dump says its own.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) arch: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The ring dump (or raw rings: --tx / --rx / --ring-size).
    pub(crate) ring_file: Option<std::path::PathBuf>,
    /// Raw ring memory instead of a dump.
    #[command(flatten)]
    pub(crate) raw: RawRingArgs,
    /// `ADDR=FILE`: map the file's bytes at ADDR (repeat).
    #[arg(long, num_args = 1.., action = clap::ArgAction::Append)]
    pub(crate) load: Vec<String>,
    /// `ADDR:LEN=FILE`: after the run, write that range to FILE (repeat); a range no load
    /// covers is mapped as zeros first.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Append)]
    pub(crate) dump: Vec<String>,
    /// Engine threads.
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) threads: u64,
    /// One JSON object instead of a report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Benchmarks:
  numerics   the numerics kernels alone (bf16 widen, narrow, 4-source adds), 64 MiB per source, vs memcpy
  encode     building the rings of a 4 x 1 GiB bf16 reduce (descriptors per second)
  reduce     a 4 x 64 MiB bf16 reduce through the whole path (rings + engine) vs memcpy
  allreduce  every all-reduce algorithm, 8 ranks x 64 MiB bf16, vs a memcpy bound")]
pub(crate) struct BenchArgs {
    /// Which benchmark: numerics, encode, reduce or allreduce (below); omitted: all, in that
    /// order.
    pub(crate) which: Option<String>,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// NeuronCore arch (1..=4; replication needs 3 or 4).
    #[arg(long, default_value = "3", value_parser = cce_api::values::parse_u64)]
    pub(crate) arch: u64,
    /// add, fma, min, max (copy and transpose reach the dispatcher and are refused), or
    /// gce-compress / gce-decompress (a gradient packet program: --in is the sources' dtype when
    /// compressing, --out-dtype the values' when decompressing; needs --header).
    #[arg(long)]
    pub(crate) op: String,
    /// Source dtype.
    #[arg(long = "in", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) in_dt: cce_api::SdmaDtype,
    /// Accumulate dtype.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) accum: cce_api::SdmaDtype,
    /// Output dtype, and/or the ring dump file to write (see above).
    #[arg(long = "out", action = clap::ArgAction::Append, required_unless_present = "out_dtype")]
    pub(crate) out: Vec<String>,
    /// Output dtype (unambiguous form of `--out D`).
    #[arg(long = "out-dtype", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) out_dtype: Option<cce_api::SdmaDtype>,
    /// Ring dump file to write (unambiguous form of `--out FILE`).
    #[arg(short = 'o', long = "output")]
    pub(crate) output: Option<std::path::PathBuf>,
    /// Elements per source.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// Source addresses (repeat, or several after one flag).
    #[arg(long, required = true, num_args = 1.., action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) src: Vec<u64>,
    /// Destination addresses; more than one replicates (arch ≥ 3).
    #[arg(long, required = true, num_args = 1.., action = clap::ArgAction::Append, value_parser = cce_api::values::parse_u64)]
    pub(crate) dst: Vec<u64>,
    /// Op options shared with `cce reduce` / `cce build`.
    #[command(flatten)]
    pub(crate) opts: OpArgs,
    /// QoS priority class (0..=4).
    #[arg(long, default_value = "0", value_parser = cce_api::values::parse_u64)]
    pub(crate) prio: u64,
    /// Cap in bytes for this priority class (0 = none); 65536 when omitted (MODEL).
    #[arg(long, value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) cap: Option<u64>,
    /// Build without a cce_info (an FMA then fails as the runtime's assert does).
    #[arg(long)]
    pub(crate) no_cce_info: bool,
    /// FMA operand selectors a,b,c (stored / input / scale); input,scale,stored when omitted.
    #[arg(long)]
    pub(crate) selectors: Option<String>,
    /// Ring size in descriptors (a multiple of 16, at least 32); the smallest that fits when omitted.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) ring_size: Option<u64>,
    /// Queue id written to the dump (0..=15).
    #[arg(long, default_value = "0", value_parser = |s: &str| cce_api::values::parse_max(s, 15, 4))]
    pub(crate) queue: u64,
    /// GCE: the first packet's compression header address (each further packet's lies one
    /// header stride on). Required by --op gce-compress / gce-decompress; with add, fma, min
    /// or max it compresses the result (the EXT + GCE combo of study §9.3, arch ≥ 3).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) header: Option<u64>,
    /// One JSON object with every descriptor instead of the summary line.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DisasmArgs {
    /// The ring dump (or raw rings: --tx / --rx / --ring-size).
    pub(crate) file: Option<std::path::PathBuf>,
    /// Raw ring memory instead of a dump.
    #[command(flatten)]
    pub(crate) raw: RawRingArgs,
    /// One JSON object instead of the listing.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub(crate) struct EncodeArgs {
    /// The encoder (see `cce encode --help`).
    #[arg(allow_hyphen_values = true)]
    pub(crate) encoder: String,
    /// `--<field> <value>` pairs; an omitted field is 0.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub(crate) fields: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DecodeArgs {
    /// The encoder whose output the bytes are, or `meta-ctrl` / `cce-info`.
    pub(crate) encoder: String,
    /// Hex bytes (little-endian, as bytes_hex); may be split over several arguments.
    #[arg(required = true, num_args = 1..)]
    pub(crate) hex: Vec<String>,
    /// One JSON object instead of the field listing.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TablesArgs {
    /// One JSON object instead of the tables.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PacketSizeArgs {
    /// SDMA dtype (name or 0..=15).
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_api::SdmaDtype,
    /// Element count.
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// QoS priority class (0..=4).
    #[arg(long, default_value = "0", value_parser = cce_api::values::parse_u64)]
    pub(crate) prio: u64,
    /// This class's cap in bytes (0 = no cap); 65536 when omitted (MODEL).
    #[arg(long, value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) cap: Option<u64>,
    /// One JSON object instead of a line.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DtypeGateArgs {
    /// Input SDMA dtype (name or 0..=15).
    #[arg(long = "in", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) in_dt: cce_api::SdmaDtype,
    /// Output SDMA dtype (name or 0..=15).
    #[arg(long = "out", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) out_dt: cce_api::SdmaDtype,
    /// The transfer is a plain copy (no compute op): always valid.
    #[arg(long)]
    pub(crate) no_compute: bool,
    /// One JSON object instead of a line.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The op options `cce build` and `cce reduce` share.
#[derive(Debug, Args)]
pub(crate) struct OpArgs {
    /// FMA scales, one per source (or one for all); 1.0 when omitted.
    #[arg(long, num_args = 1.., action = clap::ArgAction::Append, allow_negative_numbers = true)]
    pub(crate) scale: Vec<f32>,
    /// MIN/MAX clamp constant, in --const-dtype (a number, or 0x-bits).
    #[arg(long = "const", allow_negative_numbers = true)]
    pub(crate) constant: Option<String>,
    /// Dtype of the clamp constant (i8 u8 i16 u16 bf16 fp16); the in dtype when omitted.
    #[arg(long = "const-dtype", value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) const_dtype: Option<cce_api::SdmaDtype>,
    /// Rounding to the output dtype: rne or sr (stochastic).
    #[arg(long, default_value = "rne")]
    pub(crate) rounding: String,
    /// Stochastic-rounding seed (32 bits; 0 when omitted).
    #[arg(long, value_parser = |s: &str| cce_api::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) seed: Option<u64>,
}

/// The shared op options as the library takes them (the rounding parsed).
pub(crate) fn op_options(o: &OpArgs) -> Result<cce_api::OpOptions, CliError> {
    Ok(cce_api::OpOptions {
        scales: o.scale.clone(),
        constant: o.constant.as_deref().map(cce_api::ClampConstant::new),
        const_dtype: o.const_dtype,
        rounding: named("--rounding", &o.rounding)?,
        seed: o.seed,
    })
}

/// A flag's text as its type, by the type's one `FromStr`; a refusal is the type's words after
/// the flag (`--op 'sub': expected add, fma, min or max`).
pub(crate) fn named<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, CliError>
where
    T::Err: std::fmt::Display,
{
    text.parse().map_err(|e| CliError::Input(format!("{flag} {e}")))
}
