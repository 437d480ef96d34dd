//! Users' MSCCL XML schedules run as CCE packets (docs/MODEL.md X8–X13), on int32 inputs that
//! differ per rank and element: every rank's output equals the exact collective (wrapping
//! sums and gathers computed here), and runs split over 2 and 4 memories give the same bytes.
//! The schedules are the project's generator's (`scripts/msccl_gen.py`).

mod common;

use std::process::Command;
use std::sync::Arc;

use cce_collectives::collective::{Collective, Config, RedOp, UserAlgo};
use cce_format::SdmaDtype;

fn generate(args: &[&str]) -> Arc<UserAlgo> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/msccl_gen.py");
    let out = Command::new("python3").arg(script).args(args).output().expect("python3 runs scripts/msccl_gen.py");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let xml = String::from_utf8(out.stdout).expect("utf-8");
    Arc::new(UserAlgo::from_xml(&args.join(" "), &xml).unwrap_or_else(|e| panic!("{args:?}: {e}")))
}

fn inputs(ranks: usize, elems: u64) -> Vec<Vec<u8>> {
    (0..ranks)
        .map(|r| {
            (0..elems as i32).flat_map(|i| (i.wrapping_mul(7919) ^ (r as i32 * 1_000_003)).to_le_bytes()).collect()
        })
        .collect()
}

fn val(b: &[u8], i: usize) -> i32 {
    i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

/// Rank q's exact output of `op` over `ins`.
fn expected(c: Collective, op: RedOp, ins: &[Vec<u8>], q: usize) -> Vec<i32> {
    let r = ins.len();
    let n = ins[0].len() / 4;
    let red = |i: usize| {
        (1..r).fold(val(&ins[0], i), |a, p| {
            let x = val(&ins[p], i);
            match op {
                RedOp::Min => a.min(x),
                RedOp::Max => a.max(x),
                _ => a.wrapping_add(x),
            }
        })
    };
    match c {
        Collective::AllReduce => (0..n).map(red).collect(),
        Collective::ReduceScatter => (q * n / r..(q + 1) * n / r).map(red).collect(),
        Collective::AllGather => (0..n).map(|i| val(&ins[i / (n / r)], i)).collect(),
    }
}

fn check(algo: &[&str], op: RedOp, chunks_per_elems: u64) {
    let user = generate(algo);
    let r = user.ranks();
    let elems = user.schedule.program.nchunks * chunks_per_elems;
    let cfg = Config::from_user(user.clone(), op, SdmaDtype::I32, elems);
    let ins = inputs(r, elems);
    let (o, back) = common::run_owned(&cfg, ins.clone()).unwrap_or_else(|e| panic!("{algo:?}: {e}"));
    assert_eq!(back, ins, "{algo:?}: the inputs come back unchanged");
    for (q, out) in o.outputs.iter().enumerate() {
        let got: Vec<i32> = (0..out.len() / 4).map(|i| val(out, i)).collect();
        assert_eq!(got, expected(cfg.collective, op, &ins, q), "{algo:?} {op:?} rank {q}");
    }
    // Read in place, the inputs give the same outputs (the engines never write an input).
    let slices: Vec<&[u8]> = ins.iter().map(Vec::as_slice).collect();
    let b = common::run_borrowed(&cfg, &slices).unwrap_or_else(|e| panic!("{algo:?} borrowed: {e}"));
    assert_eq!(b.outputs, o.outputs, "{algo:?}: borrowed inputs");
    for groups in [2, 4].into_iter().filter(|&g| g <= r) {
        let (p, _, report) = common::run_partitioned(&cfg, ins.clone(), groups).expect("partitioned");
        assert_eq!(p.outputs, o.outputs, "{algo:?} over {groups} memories");
        assert!(report.bytes_between > 0, "{algo:?}: data crossed between memories");
    }
}

#[test]
fn every_generated_allreduce_computes_the_exact_sum_in_one_and_several_memories() {
    for algo in ["ring-allreduce", "allpairs-allreduce", "hier-allreduce", "tree-allreduce"] {
        for r in ["2", "4", "8", "16"] {
            for place in ["--inplace", "--outofplace"] {
                check(&[algo, r, place], RedOp::Add, 37);
            }
        }
    }
    check(&["ring-allreduce", "5", "--chunks", "3", "--channels", "2"], RedOp::Max, 5);
    check(&["allpairs-allreduce", "6"], RedOp::Min, 3);
}

#[test]
fn generated_reduce_scatters_and_all_gathers_are_exact() {
    for algo in ["ring-reducescatter", "ring-allgather"] {
        for r in ["2", "4", "8", "16"] {
            for place in ["--inplace", "--outofplace"] {
                check(&[algo, r, place], RedOp::Add, 11);
            }
        }
    }
}

/// Two ranks, in place: each sends i[0], then adds what it receives into i[0]. The peer may
/// read the sent chunk after it is rewritten, so the send snapshots it (X8): without that,
/// a rank would add the peer's sum instead of its input.
const EXCHANGE: &str = r#"<algo name="exchange" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="0" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"#;

#[test]
fn a_rewritten_send_reads_its_snapshot() {
    let user = Arc::new(UserAlgo::from_xml("exchange.xml", EXCHANGE).expect("valid"));
    assert_eq!(user.schedule.plan.placement, vec![cce_msccl::Placement::Snapshot; 2]);
    let cfg = Config::from_user(user, RedOp::Add, SdmaDtype::I32, 4096);
    let ins = inputs(2, 4096);
    for _ in 0..20 {
        let o = common::run(&cfg, &ins).expect("runs");
        for q in 0..2 {
            let got: Vec<i32> = (0..4096).map(|i| val(&o.outputs[q], i)).collect();
            assert_eq!(got, expected(Collective::AllReduce, RedOp::Add, &ins, q), "rank {q}");
        }
    }
}
