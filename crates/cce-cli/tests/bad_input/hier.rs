//! Rows of the bad-input matrix for a cluster: `--nodes`, `--ranks-per-node` against the
//! instance, and the hierarchy's pairs (`--algo hier --intra A --inter B`).

use super::Row;

fn ar(args: &[&str]) -> Vec<String> {
    ["allreduce", "--op", "add", "--dtype", "bf16"].iter().chain(args).map(|s| s.to_string()).collect()
}

pub(crate) fn rows(all: &mut Vec<Row>) {
    let hier = |extra: &[&str]| ar(&[&["--algo", "hier", "--elems", "256"], extra].concat());
    all.extend([
        (hier(&["--ranks", "4", "--ranks-per-node", "1"]), "hier runs nodes of at least 2 ranks, not --ranks-per-node 1", 2),
        (
            hier(&["--ranks", "6", "--ranks-per-node", "4"]),
            "hier runs whole nodes: 6 ranks are not a multiple of --ranks-per-node 4",
            2,
        ),
        (
            hier(&["--ranks", "4", "--ranks-per-node", "4"]),
            "hier spans nodes, and 4 ranks of 4 per node are one node: give --nodes of at least 2",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "3", "--intra", "rdh"]),
            "--intra rdh inside a node of 3 ranks: rdh pairs ranks by recursive halving",
            2,
        ),
        (
            hier(&["--nodes", "3", "--ranks-per-node", "2", "--inter", "rdh"]),
            "--inter rdh between 3 nodes: rdh between nodes pairs them by recursive halving: it needs a power-of-two node count, not 3",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "2", "--inter", "single-step-mesh", "--collective", "reduce-scatter"]),
            "--inter single-step-mesh between 2 nodes: the single-step mesh is an all-reduce, not a reduce-scatter",
            2,
        ),
        (
            hier(&["--nodes", "33", "--ranks-per-node", "2", "--inter", "mesh"]),
            "--inter mesh between 33 nodes: mesh reduces all 33 nodes in one packet: at most 32 sources",
            2,
        ),
        (
            ar(&["--algo", "hier", "--nodes", "2", "--ranks-per-node", "4", "--elems", "4"]),
            "hier cuts every rank's elements into R = 8 chunks: at least 8 elements per rank, not 4",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "2", "--inter", "rdh", "--compress", "gce"]),
            "--compress gce compresses a hierarchy's inter-node ring: give --inter ring, not rdh",
            2,
        ),
        (
            ar(&["--algo", "hier(ring)", "--nodes", "2", "--ranks-per-node", "2", "--elems", "8"]),
            "--algo 'hier(ring)': expected hier(INTRA/INTER)",
            2,
        ),
        (
            ar(&["--algo", "hier(tree/ring)", "--nodes", "2", "--ranks-per-node", "2", "--elems", "8"]),
            "--algo 'tree': expected ring, ring-2r2w, kangaring, mesh or rdh",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "2", "--intra", "hier"]),
            "--intra 'hier': expected ring, ring-2r2w, kangaring, mesh or rdh",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "2", "--inter", "tree"]),
            "--inter 'tree': expected ring, mesh, single-step-mesh or rdh",
            2,
        ),
        (
            ar(&["--algo", "ring", "--ranks", "4", "--elems", "8", "--intra", "ring"]),
            "--intra chooses an algorithm of --algo hier, not of ring",
            2,
        ),
        (
            hier(&["--nodes", "2", "--ranks-per-node", "64", "--arch", "2"]),
            "--ranks-per-node 64: a trn1 node holds 1..=32 ranks (16 chips x its NeuronCores)",
            2,
        ),
        (
            hier(&["--nodes", "200", "--arch", "2"]),
            "--nodes 200 x --ranks-per-node 32: between 1 and 4096 ranks in all",
            2,
        ),
        (
            hier(&["--ranks", "8", "--nodes", "2", "--ranks-per-node", "2"]),
            "--ranks 8: --nodes 2 x --ranks-per-node 2 are 4 ranks",
            2,
        ),
        (
            ar(&["--algo", "ring", "--ranks", "4", "--elems", "8", "--efa-per-node", "0"]),
            "--efa-per-node must be 1..=1024",
            2,
        ),
        (
            ["report", "numerics", "--max-ranks", "100"].map(String::from).to_vec(),
            "--max-ranks 100: a power of two from 64 to 4096",
            2,
        ),
        (
            ["report", "numerics", "--max-ranks", "4096", "--elems", "1024"].map(String::from).to_vec(),
            "--max-ranks 4096: the hierarchies cut every rank's elements into R chunks, so --elems must be at least 4096, not 1024",
            2,
        ),
        (
            // A budget the data fits, not the schedule of a 4096-rank flat ring: refused from its
            // size before it is made.
            ar(&["--algo", "ring", "--ranks", "4096", "--elems", "64", "--budget", "0x40000000"]),
            "4096 ranks x 64 bf16 elements need at least ",
            2,
        ),
    ]);
}

/// The hierarchy's messages no command line reaches, with the reason.
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "the trace would hold {} packets: at most {MAX_TRACE_PACKETS} (use fewer elements or ranks)",
        "the library's model(cfg, detail = true) refuses a packet list that long; `cce allreduce --trace` calls \
         collective::trace, which draws steps alone there (its own refusal has a row)",
    ),
    (
        "a flat schedule of {ranks} ranks: 2(R - 1) steps per rank; the report runs flat orders up to {FLAT_MAX_RANKS}",
        "why `cce report numerics --max-ranks` skips a point: listed in the report's `skipped`, never a refusal",
    ),
    (
        "needs at least {} bytes, over the budget of {}",
        "why `cce report numerics --max-ranks` skips a point: listed in the report's `skipped`, never a refusal",
    ),
    (
        "{} packets done, {} expected",
        "a rank's engine ran fewer packets than its program holds: an engine that stopped without a fault, a model \
     bug (the rings are built from the same programs), never an input",
    ),
];
