//! Public measured figures of Trainium collectives, for fitting and checking the time model
//! ([`crate::collective::model`]).
//!
//! What is here:
//!
//! - [`POINTS`]: every row of every example table `nccom-test` prints in AWS's "NCCOM-TEST
//!   User Guide" (aws-neuron-sdk, `tools/neuron-sys-tools/nccom-test.rst`): one collective, its
//!   ranks, instances, bytes and dtype, and the time the tool measured, in the tables' order;
//!   [`TABLES`] says how each table was made (its command, when it first appeared, what its
//!   time column is, what is known of the instance);
//! - [`CLAIMS`]: every quantified statement of collective latency in the Neuron release notes
//!   and the collective-communication pages (a change in percent, or an absolute figure);
//! - [`ALGORITHMS`]: every documented statement of which algorithm Neuron uses for a case;
//! - [`SOURCE_FILES`]: the files all of these come from, each at the commit that was read.
//!
//! The guarantee: every number here is copied from the public source its entry names; nothing
//! is fitted, smoothed or filled in. Two kinds of field are derived, each by one stated rule:
//! [`MeasuredPoint::bytes`] (the per-rank input, from the tool's size column) and the
//! `change_percent` of a claim that gives two absolute figures or a factor (said in its
//! `compares`). Prose is paraphrased, never quoted beyond a short phrase. An instance type the
//! source does not state is `"unstated"`, with what can be inferred in the table's note.
//!
//! What the tool's size means: `nccom-test`'s `size(B)` column is the size of "the data involved
//! in this collective operation", the same convention as nccl-tests: for an all-reduce the
//! buffer each rank holds (input and output alike), for an all-gather the gathered output each
//! rank ends with, so each rank's input is size / ranks. The guide shows it both ways: its
//! `--show-input-output-size` example prints a per-rank input of 32 B and output of 1,024 B for a
//! 32-rank all-gather of size 1,024; and every printed algorithm bandwidth is size / time (GiB/s
//! in the 2023 tables, 10^9 B/s in the later ones, though the guide says GiB), with the bus
//! bandwidth factor 2(r − 1)/r for all-reduce and (r − 1)/r for all-gather.
//!
//! AWS's guide says its example figures are not to be taken as up to date; they come from
//! whatever runtime AWS ran when each table was added (2023 to 2026, [`Table::introduced`]).

/// One file a figure or statement was copied from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceFile {
    /// The short id entries cite: the file's name and the commit's first 8 hex digits.
    pub id: &'static str,
    /// GitHub repository, `owner/name`.
    pub repo: &'static str,
    /// Path inside the repository.
    pub path: &'static str,
    /// The commit read (40 hex digits).
    pub commit: &'static str,
}

/// The aws-neuron-sdk snapshot read (its newest commit then, 2026-08-21).
const SDK_HEAD: &str = "81ce03ae261e12925e53437a0f690478e6366155";
/// The parent of aws-neuron-sdk 86a92868 (Neuron 2.28.0), the last commit that still has the
/// per-package release notes of the runtime library and of Neuron Collectives.
const SDK_OLD_NOTES: &str = "8862125f279faa05c438367a883e44382be219fe";

/// `nccom-test`'s guide.
const NCCOM: &str = "nccom-test.rst@81ce03ae";
/// The runtime's component release notes (runtime library, collectives, driver; Neuron 2.23 on).
const RT_NOTES: &str = "runtime.rst@81ce03ae";
/// The developer tools' release notes.
const TOOLS_NOTES: &str = "dev-tools.rst@81ce03ae";
/// "Inter-node Collective Communications with AWS Neuron".
const INTER_DOC: &str = "internode-collective-comm.rst@81ce03ae";
/// "Intra-node Collective Communications with AWS Neuron".
const INTRA_DOC: &str = "intranode-collective-comm.rst@81ce03ae";
/// "About Neuron Runtime Collectives".
const ABOUT_DOC: &str = "about/collectives.rst@81ce03ae";
/// The runtime library's release notes, 2022 to 06/2025.
const RTLIB_NOTES: &str = "aws-neuronx-runtime-lib/index.rst@8862125f";
/// Neuron Collectives' release notes, 2022 to 06/2025.
const COLL_NOTES: &str = "aws-neuronx-collectives/index.rst@8862125f";

/// Every file cited here.
pub const SOURCE_FILES: &[SourceFile] = &[
    SourceFile { id: NCCOM, repo: SDK, path: "tools/neuron-sys-tools/nccom-test.rst", commit: SDK_HEAD },
    SourceFile { id: RT_NOTES, repo: SDK, path: "release-notes/components/runtime.rst", commit: SDK_HEAD },
    SourceFile { id: TOOLS_NOTES, repo: SDK, path: "release-notes/components/dev-tools.rst", commit: SDK_HEAD },
    SourceFile {
        id: INTER_DOC,
        repo: SDK,
        path: "neuron-runtime/explore/internode-collective-comm.rst",
        commit: SDK_HEAD,
    },
    SourceFile {
        id: INTRA_DOC,
        repo: SDK,
        path: "neuron-runtime/explore/intranode-collective-comm.rst",
        commit: SDK_HEAD,
    },
    SourceFile { id: ABOUT_DOC, repo: SDK, path: "neuron-runtime/about/collectives.rst", commit: SDK_HEAD },
    SourceFile {
        id: RTLIB_NOTES,
        repo: SDK,
        path: "release-notes/runtime/aws-neuronx-runtime-lib/index.rst",
        commit: SDK_OLD_NOTES,
    },
    SourceFile {
        id: COLL_NOTES,
        repo: SDK,
        path: "release-notes/runtime/aws-neuronx-collectives/index.rst",
        commit: SDK_OLD_NOTES,
    },
];

/// The repository every source here is in.
const SDK: &str = "aws-neuron/aws-neuron-sdk";

/// One example table of `nccom-test`'s guide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Table {
    /// The id its points carry in [`MeasuredPoint::table`].
    pub id: &'static str,
    /// The [`SourceFile::id`] it is in.
    pub source: &'static str,
    /// The aws-neuron-sdk commit (and release) that added the table; its figures are at least
    /// that old.
    pub introduced: &'static str,
    /// The command the guide shows, options as printed (host addresses replaced by `<…>`).
    pub command: &'static str,
    /// The column [`MeasuredPoint::measured_us`] is copied from; both are the mean over the
    /// measured operations (the guide: the average of all durations, warm-up excluded).
    pub time_column: &'static str,
    /// Times printed as whole microseconds: the tool then truncated them (the tools' release
    /// notes of Neuron 2.31.0 say fractional times may read about 0.5 µs higher).
    pub whole_us: bool,
    /// The source's times never fall as the size grows (when `false`, some do, by under 2 %).
    pub rising: bool,
    /// The table whose collectives ran at the same time on another stream (`--streams-json`).
    pub alongside: Option<&'static str>,
    /// What else is known: the instance type, the ranks, oddities (paraphrased).
    pub note: &'static str,
}

/// Every example table, in the guide's order (the first example is printed twice, and is here
/// once).
pub const TABLES: &[Table] = &[
    Table {
        id: "quick-allr-r2",
        source: NCCOM,
        introduced: "f5d2d79a (Neuron 2.10.0, 2023-05-01)",
        command: "nccom-test -r 2 allr",
        time_column: "time(us)",
        whole_us: true,
        rising: true,
        alongside: None,
        note: "The defaults: 32 MiB of uint8 (cce's u8). Instance trn1 inferred: when the table was \
               added the guide named only trn1 and inf2, and the same commit's 32-rank and 2-instance \
               examples need trn1 (inf2 is not excluded for 2 ranks).",
    },
    Table {
        id: "allr-r2-fp32",
        source: NCCOM,
        introduced: "f5d2d79a (Neuron 2.10.0, 2023-05-01)",
        command: "nccom-test -r 2 --minbytes 1kb --maxbytes 1gb --stepfactor 4 --datatype fp32 allr",
        time_column: "time(us)",
        whole_us: true,
        rising: true,
        alongside: None,
        note: "Its heading says sizes from 1 MiB; the command and the rows start at 1 KiB. Instance \
               trn1 inferred as for quick-allr-r2.",
    },
    Table {
        id: "allg-r32-2023",
        source: NCCOM,
        introduced: "f5d2d79a (Neuron 2.10.0, 2023-05-01)",
        command: "nccom-test -r 32 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --check allg",
        time_column: "time(us)",
        whole_us: true,
        rising: false,
        alongside: None,
        note: "32 ranks on one instance: trn1.32xlarge (32 NeuronCores; the largest inf2 has 24). \
               About 25 times the later runs of the same command (allg-r32-io-size).",
    },
    Table {
        id: "permute-r8",
        source: NCCOM,
        introduced: "8fb0d7c8 (2025-11-12, between Neuron 2.26.0 and 2.27.0)",
        command: "nccom-test -r 8 --custom-src-target-pairs pairs.json permute",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "The pairs swap ranks 0 and 1 and ranks 2 and 3; ranks 4 to 7 send to themselves. The \
               defaults: 32 MiB of uint8. Instance not stated.",
    },
    Table {
        id: "allg-r32-io-size",
        source: NCCOM,
        introduced: "90a7fe4b (Neuron 2.24.0, 2025-06-23)",
        command: "nccom-test -r 32 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --check allg \
                  --show-input-output-size",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "Prints each rank's input (size / 32) and output (size): the evidence for what size(B) \
               means for an all-gather. Instance not stated.",
    },
    Table {
        id: "allg-r8-stats",
        source: NCCOM,
        introduced: "86a92868 (Neuron 2.28.0, 2026-02-25)",
        command: "nccom-test -r 8 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --stats avg p25 \
                  p50 p90 p99 --iters 1000 allg",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "1,000 measured operations per size; each row's note has its percentiles (whole µs). \
               Instance not stated.",
    },
    Table {
        id: "allg-r32-json",
        source: NCCOM,
        introduced: "90a7fe4b (Neuron 2.24.0, 2025-06-23)",
        command: "nccom-test -r 32 --minbytes 1kb --maxbytes 1mb --stepfactor 8 --datatype fp32 --check allg \
                  --report-to-json-file nccom-results.json",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "The command of allg-r32-io-size without that flag: another run of the same \
               configuration (the JSON it writes repeats these times). Instance not stated.",
    },
    Table {
        id: "allr-r16-show-algorithm",
        source: NCCOM,
        introduced: "86a92868 (Neuron 2.28.0, 2026-02-25)",
        command: "nccom-test -r 16 allr -b 4 -e 1gb -f 16 -d fp32 --show-algorithm",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: false,
        alongside: None,
        note: "Each row names the algorithm the runtime chose. Instance not stated; KangaRing is the \
               algorithm the intra-node page describes on trn2's 16-chip torus, so trn2 is likely.",
    },
    Table {
        id: "allgv-r4-fp16",
        source: NCCOM,
        introduced: "a3247f5b (Neuron 2.32.0, 2026-08-17)",
        command: "nccom-test allgv -r 4 -N 1 -b 2048 -e 2048 -d fp16 --variable-size-op-metadata \
                  allgv_metadata.json",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "All-gatherv with equal counts (each rank sends 256 fp16 and receives 4 x 256): an \
               all-gather of 512 B per rank. Instance not stated.",
    },
    Table {
        id: "streams-s0-allr-bf16",
        source: NCCOM,
        introduced: "a3247f5b (Neuron 2.32.0, 2026-08-17)",
        command: "nccom-test allg -r 64 -c --streams-json streams_example.json",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: false,
        alongside: Some("streams-s1-allg-fp32"),
        note: "Stream 0 of the JSON: all_reduce, bf16, 1 KB to 1 MB by 2x, over replica groups of 16 \
               ranks (four groups at once; the bus bandwidth's factor 2 x 15/16 agrees), while stream 1 \
               runs. 64 ranks on one instance: not trn1 (32 NeuronCores); instance not stated.",
    },
    Table {
        id: "streams-s1-allg-fp32",
        source: NCCOM,
        introduced: "a3247f5b (Neuron 2.32.0, 2026-08-17)",
        command: "nccom-test allg -r 64 -c --streams-json streams_example.json",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: false,
        alongside: Some("streams-s0-allr-bf16"),
        note: "Stream 1 of the JSON: all-gather, fp32, 1 KB, 64 ranks, two operations per stream-0 \
               operation; one row per stream-0 size, in order. Instance not stated.",
    },
    Table {
        id: "allr-r64-n2-fp32",
        source: NCCOM,
        introduced: "f5d2d79a (Neuron 2.10.0, 2023-05-01)",
        command: "NEURON_RT_ROOT_COMM_ID=<host:port> nccom-test -r 64 -N 2 -b 8 -e 1GB -f 2 -n 50 -w 5 -d fp32 \
                  allr --hosts <2 hosts>",
        time_column: "time(us)",
        whole_us: true,
        rising: false,
        alongside: None,
        note: "2 instances of 32 ranks, 50 measured operations after 5 warm-up ones. Instance trn1: \
               the guide then allowed several instances only on Trainium, and trn1 was the only one. \
               The algorithm is not stated (hierarchical all-reduce was the default from runtime \
               2.12.14.0, 03/2023; whether this run had it is not known).",
    },
    Table {
        id: "alltoallv-r2-n2",
        source: NCCOM,
        introduced: "86a92868 (Neuron 2.28.0, 2026-02-25)",
        command: "NEURON_RT_ROOT_COMM_ID=<host:port> nccom-test -r 2 -N 2 -d fp32 alltoallv -b 1MB -e 1MB \
                  --hosts <2 hosts> --variable-size-op-metadata alltoallv_metadata.json",
        time_column: "time:avg(us)",
        whole_us: false,
        rising: true,
        alongside: None,
        note: "nccom-test's flag was --alltoallv-metadata until Neuron 2.31.0. size(B) 1,048,608 is 32 B over \
               -b 1MB, unexplained; the metadata sends 512 + 1,024 fp32 (6,144 B) per rank. bytes keeps \
               the size column. Instance not stated.",
    },
];

/// One measured row of a `nccom-test` table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeasuredPoint {
    /// The [`SourceFile::id`] it is copied from.
    pub source: &'static str,
    /// The [`Table::id`] it is a row of.
    pub table: &'static str,
    /// The collective, by cce's name where cce has it (`allreduce`, `all-gather`; see
    /// [`crate::collective::Collective::name`]), else `permute`, `all-gatherv`, `all-to-allv`.
    pub collective: &'static str,
    /// `trn1`, `trn2`, `trn3` ([`crate::collective::Instance::name`]) or `unstated`.
    pub instance: &'static str,
    /// Ranks in one collective (a replica group's size where the table runs several groups).
    pub ranks: usize,
    /// Instances (nodes) the ranks are spread over, equally.
    pub nodes: usize,
    /// What each rank's input buffer holds, in bytes: the size column, divided by the ranks
    /// for the all-gathers (see the module docs).
    pub bytes: u64,
    /// The tool's `size(B)` column, as printed.
    pub size_column: u64,
    /// cce's dtype name ([`cce_format::SdmaDtype::name`]; the tool's `uint8` is `u8`).
    pub dtype: &'static str,
    /// The measured time, µs: the mean over the measured operations ([`Table::time_column`]).
    pub measured_us: f64,
    /// The algorithm the tool reports for this row (`--show-algorithm`), by cce's name; `None`
    /// where the source does not say.
    pub algorithm: Option<&'static str>,
    /// Anything particular to this row (paraphrased).
    pub note: &'static str,
}

/// A row of `nccom-test`'s guide.
#[allow(clippy::too_many_arguments)]
const fn point(
    table: &'static str,
    collective: &'static str,
    instance: &'static str,
    ranks: usize,
    nodes: usize,
    dtype: &'static str,
    size_column: u64,
    bytes: u64,
    measured_us: f64,
    algorithm: Option<&'static str>,
    note: &'static str,
) -> MeasuredPoint {
    MeasuredPoint {
        source: NCCOM,
        table,
        collective,
        instance,
        ranks,
        nodes,
        bytes,
        size_column,
        dtype,
        measured_us,
        algorithm,
        note,
    }
}

/// Every row of every table in [`TABLES`], in the guide's order (arguments: table, collective,
/// instance, ranks, nodes, dtype, size column, bytes per rank, µs, algorithm, note).
#[rustfmt::skip]
pub const POINTS: &[MeasuredPoint] = &[
    // quick-allr-r2
    point("quick-allr-r2", "allreduce", "trn1", 2, 1, "u8", 33_554_432, 33_554_432, 768.0, None, ""),
    // allr-r2-fp32
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 1024, 1024, 58.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 4096, 4096, 58.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 16_384, 16_384, 58.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 65_536, 65_536, 58.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 262_144, 262_144, 60.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 1_048_576, 1_048_576, 68.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 4_194_304, 4_194_304, 107.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 16_777_216, 16_777_216, 332.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 67_108_864, 67_108_864, 1214.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 268_435_456, 268_435_456, 4750.0, None, ""),
    point("allr-r2-fp32", "allreduce", "trn1", 2, 1, "fp32", 1_073_741_824, 1_073_741_824, 18930.0, None, ""),
    // allg-r32-2023
    point("allg-r32-2023", "all-gather", "trn1", 32, 1, "fp32", 1024, 32, 151.0, None, ""),
    point("allg-r32-2023", "all-gather", "trn1", 32, 1, "fp32", 8192, 256, 149.0, None, ""),
    point("allg-r32-2023", "all-gather", "trn1", 32, 1, "fp32", 65_536, 2048, 150.0, None, ""),
    point("allg-r32-2023", "all-gather", "trn1", 32, 1, "fp32", 524_288, 16_384, 179.0, None, ""),
    // permute-r8
    point("permute-r8", "permute", "unstated", 8, 1, "u8", 33_554_432, 33_554_432, 894.24, None, ""),
    // allg-r32-io-size
    point("allg-r32-io-size", "all-gather", "unstated", 32, 1, "fp32", 1024, 32, 6.16, None, ""),
    point("allg-r32-io-size", "all-gather", "unstated", 32, 1, "fp32", 8192, 256, 6.48, None, ""),
    point("allg-r32-io-size", "all-gather", "unstated", 32, 1, "fp32", 65_536, 2048, 8.17, None, ""),
    point("allg-r32-io-size", "all-gather", "unstated", 32, 1, "fp32", 524_288, 16_384, 23.16, None, ""),
    // allg-r8-stats
    point("allg-r8-stats", "all-gather", "unstated", 8, 1, "fp32", 1024, 128, 10.0, None, "p25/50/90/99 10/10/11/12 us"),
    point("allg-r8-stats", "all-gather", "unstated", 8, 1, "fp32", 8192, 1024, 10.22, None, "p25/50/90/99 10/10/11/12 us"),
    point("allg-r8-stats", "all-gather", "unstated", 8, 1, "fp32", 65_536, 8192, 11.31, None, "p25/50/90/99 11/11/13/13 us"),
    point("allg-r8-stats", "all-gather", "unstated", 8, 1, "fp32", 524_288, 65_536, 14.83, None, "p25/50/90/99 14/15/16/17 us"),
    // allg-r32-json
    point("allg-r32-json", "all-gather", "unstated", 32, 1, "fp32", 1024, 32, 6.19, None, ""),
    point("allg-r32-json", "all-gather", "unstated", 32, 1, "fp32", 8192, 256, 6.55, None, ""),
    point("allg-r32-json", "all-gather", "unstated", 32, 1, "fp32", 65_536, 2048, 8.18, None, ""),
    point("allg-r32-json", "all-gather", "unstated", 32, 1, "fp32", 524_288, 16_384, 23.11, None, ""),
    // allr-r16-show-algorithm
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 4, 4, 299.91, Some("mesh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 32, 32, 299.69, Some("mesh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 512, 512, 299.82, Some("mesh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 8192, 8192, 299.74, Some("mesh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 131_072, 131_072, 574.15, Some("mesh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 2_097_152, 2_097_152, 686.32, Some("rdh"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 33_554_432, 33_554_432, 2754.15, Some("kangaring"), ""),
    point("allr-r16-show-algorithm", "allreduce", "unstated", 16, 1, "fp32", 536_870_912, 536_870_912, 9689.51, Some("kangaring"), ""),
    // allgv-r4-fp16
    point("allgv-r4-fp16", "all-gatherv", "unstated", 4, 1, "fp16", 2048, 512, 16.28, None, ""),
    // streams-s0-allr-bf16
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 1024, 1024, 101.14, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 2048, 2048, 101.93, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 4096, 4096, 101.45, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 8192, 8192, 101.84, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 16_384, 16_384, 102.21, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 32_768, 32_768, 102.36, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 65_536, 65_536, 103.28, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 131_072, 131_072, 105.03, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 262_144, 262_144, 107.37, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 524_288, 524_288, 110.07, None, ""),
    point("streams-s0-allr-bf16", "allreduce", "unstated", 16, 1, "bf16", 1_048_576, 1_048_576, 117.67, None, ""),
    // streams-s1-allg-fp32
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 257.65, None, "alongside stream 0 at 1024 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 258.55, None, "alongside stream 0 at 2048 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 257.86, None, "alongside stream 0 at 4096 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 258.51, None, "alongside stream 0 at 8192 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 259.04, None, "alongside stream 0 at 16384 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 257.72, None, "alongside stream 0 at 32768 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 258.24, None, "alongside stream 0 at 65536 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 258.33, None, "alongside stream 0 at 131072 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 258.95, None, "alongside stream 0 at 262144 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 259.09, None, "alongside stream 0 at 524288 B"),
    point("streams-s1-allg-fp32", "all-gather", "unstated", 64, 1, "fp32", 1024, 16, 260.6, None, "alongside stream 0 at 1048576 B"),
    // allr-r64-n2-fp32
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 8, 8, 520.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 16, 16, 520.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 32, 32, 523.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 64, 64, 525.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 128, 128, 553.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 256, 256, 709.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 512, 512, 782.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 1024, 1024, 840.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 2048, 2048, 881.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 4096, 4096, 916.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 8192, 8192, 1013.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 16_384, 16_384, 1031.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 32_768, 32_768, 1174.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 65_536, 65_536, 1315.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 131_072, 131_072, 1315.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 262_144, 262_144, 1311.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 524_288, 524_288, 1312.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 1_048_576, 1_048_576, 1328.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 2_097_152, 2_097_152, 1329.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 4_194_304, 4_194_304, 1378.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 8_388_608, 8_388_608, 1419.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 16_777_216, 16_777_216, 2138.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 33_554_432, 33_554_432, 2711.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 67_108_864, 67_108_864, 3963.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 134_217_728, 134_217_728, 6279.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 268_435_456, 268_435_456, 11954.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 536_870_912, 536_870_912, 21803.0, None, ""),
    point("allr-r64-n2-fp32", "allreduce", "trn1", 64, 2, "fp32", 1_073_741_824, 1_073_741_824, 41806.0, None, ""),
    // alltoallv-r2-n2
    point("alltoallv-r2-n2", "all-to-allv", "unstated", 2, 2, "fp32", 1_048_608, 1_048_608, 955.05, None, ""),
];

/// A quantified statement about collective latency from a release note or a documentation
/// page: a change between releases or settings, or an absolute figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Claim {
    /// The [`SourceFile::id`] it is in.
    pub source: &'static str,
    /// The release (component version, Neuron release, date), or the page.
    pub version: &'static str,
    /// The statement, paraphrased.
    pub claim: &'static str,
    /// `trn1`, `trn2`, `trn3` or `unstated` (what is likely goes in `compares`).
    pub instance: &'static str,
    /// Ranks, where stated.
    pub ranks: Option<usize>,
    /// Instances, where stated.
    pub nodes: Option<usize>,
    /// The sizes it applies to, in the source's words ("" where none are given).
    pub sizes: &'static str,
    /// The stated change in latency, percent (negative: faster); `None` where the source gives
    /// no latency change (an absolute figure, a "performance" gain, a factor of throughput).
    pub change_percent: Option<f64>,
    /// What is compared with what, and how `change_percent` was read.
    pub compares: &'static str,
}

/// Every quantified statement found, oldest release first, then the pages.
pub const CLAIMS: &[Claim] = &[
    Claim {
        source: RTLIB_NOTES,
        version: "runtime library 2.12.14.0 (Neuron 2.9.0, 03/28/2023); also Neuron Collectives 2.12.22.0",
        claim: "hierarchical all-reduce and reduce-scatter added and made the default: up to 75% lower latency",
        instance: "unstated",
        ranks: Some(256),
        nodes: None,
        sizes: "2MB buffers",
        change_percent: Some(-75.0),
        compares: "hierarchical against the algorithm used before; 'up to'. The same notes add trn1n \
                   support (trn1 era; 256 ranks would be 8 trn1.32xlarge)",
    },
    Claim {
        source: RTLIB_NOTES,
        version: "runtime library 2.14.8.0 (06/14/2023)",
        claim: "all-to-all all-reduce added: all-reduce performance expected 3-7x better in most cases",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: None,
        compares: "with against without the all-to-all all-reduce; an expectation, as a factor of performance",
    },
    Claim {
        source: COLL_NOTES,
        version: "Neuron Collectives 2.19.7.0 (12/21/2023)",
        claim: "collectives barrier latency from 500 us down to 40 us",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: Some(-92.0),
        compares: "barrier latency before and after; -92 is (40 - 500) / 500",
    },
    Claim {
        source: RTLIB_NOTES,
        version: "runtime library 2.20.11.0 (Neuron 2.17.0, 02/13/2024)",
        claim: "collective ops up to 30% better performance below 16MB, the typical size in LLM inference",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "smaller than 16MB",
        change_percent: None,
        compares: "before and after; 'performance', not said to be latency",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.25.57.0 (Neuron 2.23.0, 05/19/2025)",
        claim: "intra-chip all-reduce at TP 4: 50% lower latency for medium sizes",
        instance: "unstated",
        ranks: Some(4),
        nodes: Some(1),
        sizes: "medium message sizes",
        change_percent: Some(-50.0),
        compares: "before and after; 4 ranks on one chip fits trn2 at LNC=2",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.26.42.0 (Neuron 2.24.0, 06/24/2025)",
        claim: "average latency of 32x2 collective groups 65% lower",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: Some(-65.0),
        compares: "before and after. '32x2' is not defined: the same notes write TP8 + CP8 groups as \
                   8x8, so it need not mean 2 instances; the RDH bullet of the same release is separate, \
                   nothing ties the 65% to RDH or to inter-node traffic",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.26.42.0 (Neuron 2.24.0, 06/24/2025)",
        claim: "intra-chip reduce-scatter on trn2: up to 20% lower latency for small transfers",
        instance: "trn2",
        ranks: None,
        nodes: Some(1),
        sizes: "small transfers",
        change_percent: Some(-20.0),
        compares: "before and after; 'up to'",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.26.42.0 (Neuron 2.24.0, 06/24/2025)",
        claim: "intra-chip reduce-scatter on trn2: up to 60% lower latency for medium to large transfers",
        instance: "trn2",
        ranks: None,
        nodes: Some(1),
        sizes: "medium to large transfers",
        change_percent: Some(-60.0),
        compares: "before and after; 'up to'",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.26.42.0 (Neuron 2.24.0, 06/24/2025)",
        claim: "intra-chip all-gather on trn2: up to 60% lower latency for medium sizes",
        instance: "trn2",
        ranks: None,
        nodes: Some(1),
        sizes: "medium message sizes",
        change_percent: Some(-60.0),
        compares: "before and after; 'up to'",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime 2.29.40.0 (Neuron 2.27.0, 12/19/2025)",
        claim: "all-gather latency up to 35% lower above 1MB, TP8 at LNC=2",
        instance: "unstated",
        ranks: Some(8),
        nodes: None,
        sizes: "greater than 1MB",
        change_percent: Some(-35.0),
        compares: "before and after; 'up to'; one statement covers this and TP16 at LNC=1 (LNC=2 \
                   implies trn2 or later)",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime 2.29.40.0 (Neuron 2.27.0, 12/19/2025)",
        claim: "all-gather latency up to 35% lower above 1MB, TP16 at LNC=1",
        instance: "unstated",
        ranks: Some(16),
        nodes: None,
        sizes: "greater than 1MB",
        change_percent: Some(-35.0),
        compares: "before and after; 'up to'; one statement covers this and TP8 at LNC=2",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime 2.29.40.0 (Neuron 2.27.0, 12/19/2025)",
        claim: "Collectives Engine reprogramming overhead up to 100x lower for NEFFs built with -O1; \
                those NEFFs up to 15% faster end to end",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: None,
        compares: "before and after; an overhead around collectives, not a collective's latency",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.31.24.0 (Neuron 2.29.0, 04/09/2026)",
        claim: "NEURON_RT_ONE_THREAD_PER_CORE (each network proxy thread on its own CPU core): up to 2x \
                better p50 and p99 collective latency",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: Some(-50.0),
        compares: "the variable set against not set; 2x better read as half the latency",
    },
    Claim {
        source: RT_NOTES,
        version: "runtime library 2.31.24.0 (Neuron 2.29.0, 04/09/2026)",
        claim: "context caching for standalone all-gather, reduce-scatter, all-reduce: scheduling up to \
                90% better on repeated calls",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: None,
        compares: "cached against uncached host-side scheduling, not device time",
    },
    Claim {
        source: TOOLS_NOTES,
        version: "developer tools, Neuron 2.31.0 (07/07/2026)",
        claim: "nccom-test times now fractional; the earlier whole-microsecond times were truncated, so \
                new ones may read about 0.5 us higher",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: None,
        compares: "the tool's reporting, not the hardware: why the whole_us tables read low by up to 1 us",
    },
    Claim {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        claim: "each inter-node hop (point to point over EFA) costs about 15 us",
        instance: "unstated",
        ranks: None,
        nodes: None,
        sizes: "",
        change_percent: None,
        compares: "an absolute figure; the page's single-step mesh rule rests on it",
    },
    Claim {
        source: ABOUT_DOC,
        version: "page at the snapshot read",
        claim: "ib_write_lat: a minimal packet takes 15 us from an HBM of one trn2.48xlarge to an HBM of \
                another",
        instance: "trn2",
        ranks: None,
        nodes: Some(2),
        sizes: "minimal packet",
        change_percent: None,
        compares: "an absolute figure, measured with the RDMA test ib_write_lat",
    },
    Claim {
        source: INTRA_DOC,
        version: "page dated 12/02/2025",
        claim: "per-hop latency of Ring and KangaRing about 1-2 us, depending on HBM load; a collective's \
                latency term is 1 to 10s of us",
        instance: "trn2",
        ranks: None,
        nodes: Some(1),
        sizes: "",
        change_percent: None,
        compares: "absolute figures; the page describes trn2's 16-chip torus (KangaRing needs LNC=2)",
    },
];

/// A documented statement of which algorithm Neuron uses for a case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlgorithmStatement {
    /// The [`SourceFile::id`] it is in.
    pub source: &'static str,
    /// The release, or the page.
    pub version: &'static str,
    /// `trn1`, `trn2`, `trn3` or `unstated`.
    pub instance: &'static str,
    /// `intra-node`, `inter-node` or `hierarchical` (several ranks per node over several nodes).
    pub scope: &'static str,
    /// By cce's name ([`crate::collective::Algo::name`], [`crate::collective::Inter::name`]), or
    /// `flat-ring` (one ring through every rank of every node: cce's `ring` over nodes, with its
    /// channels on Trn1, docs/MODEL.md C29).
    pub algorithm: &'static str,
    /// When it is used, paraphrased.
    pub when: &'static str,
}

/// Every documented algorithm choice found.
pub const ALGORITHMS: &[AlgorithmStatement] = &[
    AlgorithmStatement {
        source: INTRA_DOC,
        version: "page dated 12/02/2025",
        instance: "trn2",
        scope: "intra-node",
        algorithm: "mesh",
        when: "messages under 1MB (the page's empirical sweet range)",
    },
    AlgorithmStatement {
        source: INTRA_DOC,
        version: "page dated 12/02/2025",
        instance: "trn2",
        scope: "intra-node",
        algorithm: "rdh",
        when: "messages of 1 to 56MB (empirical sweet range)",
    },
    AlgorithmStatement {
        source: INTRA_DOC,
        version: "page dated 12/02/2025",
        instance: "trn2",
        scope: "intra-node",
        algorithm: "kangaring",
        when: "messages over 56MB (empirical sweet range); only for TP groups holding every rank of \
               each chip they touch",
    },
    AlgorithmStatement {
        source: INTRA_DOC,
        version: "page dated 12/02/2025",
        instance: "trn2",
        scope: "intra-node",
        algorithm: "ring",
        when: "fallback only; and for groups of one rank per chip, where KangaRing does not apply",
    },
    AlgorithmStatement {
        source: NCCOM,
        version: "allr-r16-show-algorithm (Neuron 2.28.0)",
        instance: "unstated",
        scope: "intra-node",
        algorithm: "mesh",
        when: "observed: 16-rank fp32 all-reduce up to 128 KiB",
    },
    AlgorithmStatement {
        source: NCCOM,
        version: "allr-r16-show-algorithm (Neuron 2.28.0)",
        instance: "unstated",
        scope: "intra-node",
        algorithm: "rdh",
        when: "observed: 16-rank fp32 all-reduce at 2 MiB",
    },
    AlgorithmStatement {
        source: NCCOM,
        version: "allr-r16-show-algorithm (Neuron 2.28.0)",
        instance: "unstated",
        scope: "intra-node",
        algorithm: "kangaring",
        when: "observed: 16-rank fp32 all-reduce at 32 MiB and 512 MiB (32 MiB is inside the intra-node \
               page's 1-56MB RDH range)",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "unstated",
        scope: "inter-node",
        algorithm: "ring",
        when: "large messages, small to medium groups (one rank per node)",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "unstated",
        scope: "inter-node",
        algorithm: "mesh",
        when: "small messages, small groups (one rank per node)",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "unstated",
        scope: "inter-node",
        algorithm: "rdh",
        when: "small to medium messages, medium to large groups (one rank per node; 2^p ranks)",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "unstated",
        scope: "inter-node",
        algorithm: "single-step-mesh",
        when: "all-reduce, small clusters or messages: beats two-step mesh while its extra transfer takes \
               under the ~15 us of the hop it saves",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "unstated",
        scope: "hierarchical",
        algorithm: "hier",
        when: "several ranks per node: intra-node and inter-node stages, each with its best algorithm; \
               e.g. small groups and sizes intra mesh + inter mesh, large ones intra KangaRing + inter RDH",
    },
    AlgorithmStatement {
        source: INTER_DOC,
        version: "page dated 12/02/2025",
        instance: "trn1",
        scope: "hierarchical",
        algorithm: "flat-ring",
        when: "enabled only on trn1, only for large messages where it clearly wins",
    },
    AlgorithmStatement {
        source: RTLIB_NOTES,
        version: "runtime library 2.12.14.0 (03/28/2023)",
        instance: "unstated",
        scope: "hierarchical",
        algorithm: "hier",
        when: "all-reduce and reduce-scatter: the default from this release",
    },
    AlgorithmStatement {
        source: RT_NOTES,
        version: "runtime library 2.26.42.0 (Neuron 2.24.0, 06/24/2025)",
        instance: "unstated",
        scope: "inter-node",
        algorithm: "rdh",
        when: "introduced for inter-node collectives in this release",
    },
    AlgorithmStatement {
        source: RT_NOTES,
        version: "Neuron Collectives 2.33 (Neuron 2.31.0, 07/07/2026)",
        instance: "trn2",
        scope: "inter-node",
        algorithm: "ring",
        when: "groups of one rank per chip over several nodes: the per-node rings joined into one global \
               ring (trn2 and trn3)",
    },
    AlgorithmStatement {
        source: RT_NOTES,
        version: "Neuron Collectives 2.33 (Neuron 2.31.0, 07/07/2026)",
        instance: "trn3",
        scope: "inter-node",
        algorithm: "ring",
        when: "groups of one rank per chip over several nodes: the per-node rings joined into one global \
               ring (trn2 and trn3)",
    },
    AlgorithmStatement {
        source: RT_NOTES,
        version: "runtime library 2.34.10 (Neuron 2.32.0, 08/17/2026)",
        instance: "trn3",
        scope: "intra-node",
        algorithm: "mesh",
        when: "now also in multi-stream mode on Trn3 Gen2 UltraServers, beside ring",
    },
    AlgorithmStatement {
        source: RT_NOTES,
        version: "runtime library 2.34.10 (Neuron 2.32.0, 08/17/2026), known issue",
        instance: "unstated",
        scope: "any",
        algorithm: "ring",
        when: "with host-based collectives (host-CC): mesh and RDH are disabled, ring is used",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{Algo, Collective, Inter};
    use cce_format::SdmaDtype;
    use std::collections::{BTreeMap, BTreeSet};

    /// Collectives the table holds that cce does not run.
    const OTHER_COLLECTIVES: [&str; 3] = ["permute", "all-gatherv", "all-to-allv"];

    fn rows(table: &str) -> Vec<&'static MeasuredPoint> {
        POINTS.iter().filter(|p| p.table == table).collect()
    }

    fn us(table: &str, size_column: u64) -> f64 {
        let found: Vec<f64> =
            rows(table).iter().filter(|p| p.size_column == size_column).map(|p| p.measured_us).collect();
        assert_eq!(found.len(), 1, "{table} at {size_column} B");
        found[0]
    }

    fn instance_ok(name: &str) -> bool {
        name == "unstated" || crate::collective::Instance::from_name(name).is_some()
    }

    fn gathers(collective: &str) -> bool {
        matches!(collective, "all-gather" | "all-gatherv")
    }

    #[test]
    fn sources_are_listed_once_with_full_commits() {
        let ids: BTreeSet<&str> = SOURCE_FILES.iter().map(|s| s.id).collect();
        assert_eq!(ids.len(), SOURCE_FILES.len());
        for s in SOURCE_FILES {
            assert_eq!(s.commit.len(), 40, "{}", s.id);
            assert!(s.commit.bytes().all(|b| b.is_ascii_hexdigit()), "{}", s.id);
            assert!(s.id.ends_with(&format!("@{}", &s.commit[..8])), "{}", s.id);
            assert!(s.path.ends_with(s.id.split('@').next().unwrap()), "{}", s.id);
        }
        let cited = TABLES.iter().map(|t| t.source).chain(POINTS.iter().map(|p| p.source));
        let cited = cited.chain(CLAIMS.iter().map(|c| c.source)).chain(ALGORITHMS.iter().map(|a| a.source));
        for id in cited {
            assert!(ids.contains(id), "{id} is not in SOURCE_FILES");
        }
    }

    #[test]
    fn every_point_is_a_positive_well_formed_row_of_a_listed_table() {
        for p in POINTS {
            let t = TABLES.iter().find(|t| t.id == p.table).unwrap_or_else(|| panic!("{}", p.table));
            assert_eq!(p.source, t.source, "{}", p.table);
            assert!(p.bytes > 0 && p.size_column > 0, "{p:?}");
            assert!(p.measured_us.is_finite() && p.measured_us > 0.0, "{p:?}");
            assert!(p.ranks >= 2 && p.nodes >= 1 && p.ranks % p.nodes == 0, "{p:?}");
            if t.whole_us {
                assert_eq!(p.measured_us.fract(), 0.0, "{p:?}");
            }
            let cce = Collective::from_name(p.collective).map(Collective::name);
            assert!(cce == Some(p.collective) || OTHER_COLLECTIVES.contains(&p.collective), "{p:?}");
            assert!(instance_ok(p.instance), "{p:?}");
            let dtype = SdmaDtype::from_name(p.dtype).unwrap_or_else(|| panic!("{p:?}"));
            assert_eq!(p.size_column % u64::from(dtype.bytes()), 0, "{p:?}");
            if let Some(a) = p.algorithm {
                assert_eq!(Algo::from_name(a).map(Algo::name), Some(a), "{p:?}");
            }
        }
        for t in TABLES {
            assert!(!rows(t.id).is_empty(), "{} has no rows", t.id);
        }
        let ids: BTreeSet<&str> = TABLES.iter().map(|t| t.id).collect();
        assert_eq!(ids.len(), TABLES.len());
    }

    #[test]
    fn bytes_per_rank_follow_the_size_column() {
        for p in POINTS {
            if gathers(p.collective) {
                assert_eq!(p.bytes * p.ranks as u64, p.size_column, "{p:?}");
            } else {
                assert_eq!(p.bytes, p.size_column, "{p:?}");
            }
        }
    }

    #[test]
    fn points_follow_the_tables_order() {
        let order: Vec<&str> = TABLES.iter().map(|t| t.id).collect();
        let mut at = 0;
        for p in POINTS {
            while order[at] != p.table {
                at += 1;
                assert!(at < order.len(), "{} is out of order", p.table);
            }
        }
    }

    #[test]
    fn within_a_table_sizes_grow_and_times_rise_where_the_source_says() {
        for t in TABLES {
            let r = rows(t.id);
            let one_size = r.iter().all(|p| p.size_column == r[0].size_column);
            if one_size && t.alongside.is_some() {
                continue;
            }
            for w in r.windows(2) {
                assert!(w[1].size_column > w[0].size_column, "{}: sizes must grow", t.id);
            }
            let falls = r.windows(2).filter(|w| w[1].measured_us < w[0].measured_us).count();
            assert_eq!(t.rising, falls == 0, "{}: rising is {} but {falls} falls", t.id, t.rising);
            for w in r.windows(2) {
                assert!(w[1].measured_us > 0.98 * w[0].measured_us, "{}: a fall over 2%", t.id);
            }
            assert!(r[r.len() - 1].measured_us >= r[0].measured_us, "{}", t.id);
        }
    }

    #[test]
    fn no_row_is_repeated_within_a_table() {
        for t in TABLES {
            let r = rows(t.id);
            let keys: BTreeSet<_> =
                r.iter().map(|p| (p.collective, p.instance, p.ranks, p.nodes, p.bytes, p.dtype)).collect();
            if keys.len() == r.len() {
                continue;
            }
            // Only a multistream table may repeat one size: one row per row of its partner.
            let partner = t.alongside.unwrap_or_else(|| panic!("{} repeats a row", t.id));
            assert_eq!(keys.len(), 1, "{}", t.id);
            assert_eq!(r.len(), rows(partner).len(), "{}", t.id);
            for (p, q) in r.iter().zip(rows(partner)) {
                assert_eq!(p.note, format!("alongside stream 0 at {} B", q.size_column), "{}", t.id);
            }
        }
    }

    #[test]
    fn across_tables_only_the_two_runs_of_one_command_share_a_row() {
        let mut tables_of: BTreeMap<_, BTreeSet<&str>> = BTreeMap::new();
        for p in POINTS {
            let key = (p.collective, p.instance, p.ranks, p.nodes, p.bytes, p.dtype);
            tables_of.entry(key).or_default().insert(p.table);
        }
        let shared: BTreeSet<_> = tables_of.values().filter(|t| t.len() > 1).cloned().collect();
        let expected = BTreeSet::from([BTreeSet::from(["allg-r32-io-size", "allg-r32-json"])]);
        assert_eq!(shared, expected);
        assert_eq!(tables_of.values().filter(|t| t.len() > 1).count(), 4);
    }

    #[test]
    fn two_rank_fp32_allreduce_anchors() {
        let t = "allr-r2-fp32";
        for size in [1 << 10, 1 << 12, 1 << 14, 1 << 16] {
            assert_eq!(us(t, size), 58.0);
        }
        assert_eq!(us(t, 1 << 20), 68.0);
        assert_eq!(us(t, 1 << 24), 332.0);
        assert_eq!(us(t, 1 << 30), 18_930.0);
        let r = rows(t);
        assert_eq!(r.len(), 11);
        assert!(r.iter().all(|p| (p.collective, p.instance, p.ranks, p.nodes) == ("allreduce", "trn1", 2, 1)));
        assert_eq!(us("quick-allr-r2", 1 << 25), 768.0);
    }

    #[test]
    fn sixty_four_rank_two_instance_allreduce_anchors() {
        let t = "allr-r64-n2-fp32";
        assert_eq!(us(t, 8), 520.0);
        assert_eq!(us(t, 1 << 20), 1_328.0);
        assert_eq!(us(t, 1 << 24), 2_138.0);
        assert_eq!(us(t, 1 << 27), 6_279.0);
        assert_eq!(us(t, 1 << 30), 41_806.0);
        let r = rows(t);
        assert_eq!(r.len(), 28, "8 B to 1 GiB by 2x");
        assert!(r.iter().all(|p| (p.ranks, p.nodes, p.dtype, p.instance) == (64, 2, "fp32", "trn1")));
    }

    #[test]
    fn the_show_algorithm_rows_name_mesh_then_rdh_then_kangaring() {
        let got: Vec<(u64, Option<&str>)> =
            rows("allr-r16-show-algorithm").iter().map(|p| (p.size_column, p.algorithm)).collect();
        let mut want = vec![];
        for (size, algo) in [
            (4, "mesh"),
            (32, "mesh"),
            (512, "mesh"),
            (8192, "mesh"),
            (131_072, "mesh"),
            (2_097_152, "rdh"),
            (33_554_432, "kangaring"),
            (536_870_912, "kangaring"),
        ] {
            want.push((size, Some(algo)));
        }
        assert_eq!(got, want);
        assert!(POINTS.iter().filter(|p| p.table != "allr-r16-show-algorithm").all(|p| p.algorithm.is_none()));
    }

    #[test]
    fn claims_are_well_formed() {
        for c in CLAIMS {
            assert!(instance_ok(c.instance), "{c:?}");
            if let Some(x) = c.change_percent {
                assert!(x.is_finite() && x > -100.0 && x < 0.0, "{c:?}");
            }
            if let (Some(r), Some(n)) = (c.ranks, c.nodes) {
                assert!(r % n == 0, "{c:?}");
            }
            assert!(!c.claim.is_empty() && !c.version.is_empty() && !c.compares.is_empty(), "{c:?}");
        }
        let find = |p: f64| CLAIMS.iter().filter(|c| c.change_percent == Some(p)).count();
        assert_eq!(find(-75.0), 1, "the hierarchical all-reduce default, 2MB over 256 ranks");
        assert_eq!(find(-65.0), 1, "the 32x2 groups");
    }

    #[test]
    fn algorithm_statements_use_cce_names() {
        for a in ALGORITHMS {
            assert!(instance_ok(a.instance), "{a:?}");
            assert!(["intra-node", "inter-node", "hierarchical", "any"].contains(&a.scope), "{a:?}");
            let cce = Algo::from_name(a.algorithm).map(Algo::name).or(Inter::from_name(a.algorithm).map(Inter::name));
            assert!(cce == Some(a.algorithm) || a.algorithm == "flat-ring", "{a:?}");
        }
    }
}
