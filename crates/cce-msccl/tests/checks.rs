//! The checks of docs/MODEL.md X2–X7 on files written here: a valid ring passes at every
//! rank count; each defect is refused with one line naming where and the rule.

mod common;

use cce_msccl::Schedule;
use common::{S, ring};

fn refused(xml: &str) -> String {
    match Schedule::from_xml(xml) {
        Ok(_) => panic!("accepted:\n{xml}"),
        Err(e) => {
            let m = e.to_string();
            assert_eq!(m.lines().count(), 1, "{m}");
            m
        }
    }
}

#[test]
fn the_ring_passes_at_every_rank_count() {
    for r in 2..=16 {
        let s = Schedule::from_xml(&ring(r).xml()).unwrap_or_else(|e| panic!("R={r}: {e}"));
        let sum = s.summary();
        assert_eq!(sum.steps, r * (2 * r - 1));
        // One step per hop: the first send, R − 1 reduces, R − 1 forwards.
        assert_eq!(sum.longest_chain, 2 * r - 1, "R={r}");
        assert_eq!(sum.messages_snapshot, 0, "R={r}");
    }
}

/// The ring with `f` applied to rank `q`'s thread block's steps.
fn ring_with(r: usize, q: usize, f: impl FnOnce(&mut Vec<S>)) -> String {
    let mut a = ring(r);
    f(&mut a.gpus[q].tbs[0].steps);
    a.xml()
}

#[test]
fn an_unmatched_send_is_refused_at_the_send() {
    // Rank 1 no longer receives its last message from rank 0.
    let m = refused(&ring_with(4, 1, |s| {
        s.pop();
    }));
    assert!(m.starts_with("rank 0 tb 0 step 5"), "{m}");
    assert!(m.contains("sends message 5 of link 0->1 channel 0, but rank 1 receives only 5"), "{m}");
}

#[test]
fn receives_reordered_on_a_link_are_refused() {
    // Rank 2 swaps its first two rrs: each message is added to another chunk of its input.
    let m = refused(&ring_with(4, 2, |s| s.swap(1, 2)));
    assert!(m.contains("the allreduce is wrong"), "{m}");
    assert!(m.contains("a sum of chunk"), "{m}");
}

#[test]
fn a_cycle_across_two_ranks_is_named_step_by_step() {
    // Each rank: tb0 receives from the peer; tb1 sends to the peer after tb0's receive.
    let a = common::Algo {
        coll: "allreduce",
        nchunks: 1,
        inplace: false,
        gpus: (0..2)
            .map(|q| common::Gpu {
                chunks: (1, 1, 0),
                tbs: vec![
                    common::Tb {
                        send: -1,
                        recv: 1 - q,
                        chan: 0,
                        steps: vec![S::new("rrc", ("i", 0), ("o", 0)).flag()],
                    },
                    common::Tb {
                        send: 1 - q,
                        recv: -1,
                        chan: 0,
                        steps: vec![S::new("s", ("i", 0), ("o", -1)).dep(0, 0)],
                    },
                ],
            })
            .collect(),
    };
    let m = refused(&a.xml());
    assert!(m.contains("deadlock"), "{m}");
    for part in
        ["rank 0 tb 0 step 0 (rrc)", "rank 0 tb 1 step 0 (s)", "rank 1 tb 0 step 0 (rrc)", "rank 1 tb 1 step 0 (s)"]
    {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert!(m.contains("waits for") && m.contains("receives from"), "{m}");
}

#[test]
fn an_offset_past_i_chunks_is_refused() {
    let m = refused(&ring_with(4, 3, |s| s[0].src.1 = 4));
    assert_eq!(m, "rank 3 tb 0 step 0 (line 37): src i[4..5) is outside the buffer: i_chunks = 4");
}

#[test]
fn unreadable_files_are_refused_with_their_line() {
    let good = ring(2).xml();
    let cases = [
        (good.replacen("type=\"rrcs\"", "type=\"rrx\"", 1), "line 5: unknown step type \"rrx\""),
        (good.replacen(" cnt=\"1\"", "", 1), "line 4: <step> lacks the attribute cnt"),
        (good.replacen("cnt=\"1\"", "cnt=\"one\"", 1), "line 4: cnt=\"one\" is not a decimal integer"),
        (good.replacen("<step", "<op", 1), "newer <op> format"),
        (good.replacen("</tb>", "", 1), "not well-formed XML"),
        (
            good.replacen("coll=\"allreduce\"", "coll=\"alltoall\"", 1),
            "cce runs allreduce, reducescatter and allgather",
        ),
        (good.replacen("srcbuf=\"i\"", "srcbuf=\"x\"", 1), "srcbuf=\"x\": expected i, o or s"),
        (good.replace("<algo", "<algorithm").replace("</algo>", "</algorithm>"), "expected <algo>"),
        (good.replacen(" nchannels=\"1\"", "", 1), "lacks the attribute nchannels"),
    ];
    for (xml, want) in cases {
        let m = refused(&xml);
        assert!(m.contains(want), "want {want:?}, got {m}");
    }
}

#[test]
fn shape_rules_name_rank_tb_and_step() {
    let cases: Vec<(String, &str)> = vec![
        (ring_with(3, 1, |s| s[2].t = "nop"), "a nop must carry a dependency"),
        (ring(3).xml().replacen(" s=\"1\"", " s=\"7\"", 1), "s=\"7\" at position 1"),
        (ring(3).xml().replacen("send=\"1\"", "send=\"0\"", 1), "send 0 is the rank itself"),
        (ring(3).xml().replacen("recv=\"2\"", "recv=\"9\"", 1), "recv 9: -1 or a rank 0 to 2"),
        (ring(3).xml().replacen("<tb id=\"0\"", "<tb id=\"1\"", 1), "tb id 1: thread block ids must be dense"),
        (ring(3).xml().replacen("chan=\"0\"", "chan=\"1\"", 1), "chan 1: 0 to 0"),
        (ring(3).xml().replacen("ngpus=\"3\"", "ngpus=\"4\"", 1), "ngpus is 4, but the file has 3"),
        (ring(3).xml().replacen("i_chunks=\"3\"", "i_chunks=\"4\"", 1), "more would reach past the user's buffer"),
        (ring_with(3, 2, |s| s[1].cnt = 72), "cnt 72: 1 to 71"),
        (ring_with(3, 2, |s| s[1].hasdep = 2), "hasdep 2: 0 or 1"),
        (ring_with(3, 2, |s| s[1] = s[1].clone().dep(0, 9)), "deps 9: tb 0 has steps 0 to 4"),
        (ring_with(3, 2, |s| s[1] = s[1].clone().dep(3, 0)), "depid 3: -1 or a thread block 0 to 0"),
        (ring_with(3, 2, |s| s[4].cnt = 2), "receives 2 chunks as message 3 of link 1->2 channel 0"),
    ];
    for (xml, want) in cases {
        let m = refused(&xml);
        assert!(m.contains(want), "want {want:?}, got {m}");
        assert!(m.contains("line "), "{m}");
    }
}

#[test]
fn a_wait_nothing_meets_is_refused() {
    // Rank 1 waits on its own step 3 (no flag anywhere): the executor would wait forever.
    let m = refused(&ring_with(3, 1, |s| s[1] = s[1].clone().dep(0, 3)));
    assert!(m.starts_with("rank 1 tb 0 step 1"), "{m}");
    assert!(m.contains("no transmission of tb 0 at or after step 3 sets a flag"), "{m}");
    // With the flag set, it waits on itself: a cycle.
    let m = refused(&ring_with(3, 1, |s| {
        s[1] = s[1].clone().dep(0, 3);
        s[3] = s[3].clone().flag();
    }));
    assert!(m.contains("deadlock") && m.contains("waits for rank 1 tb 0 step 3"), "{m}");
}

#[test]
fn races_and_undefined_reads_are_refused() {
    // Two thread blocks of rank 0 write o[0] with nothing ordering them.
    let mut a = ring(2);
    a.gpus[0].tbs.push(common::Tb { send: -1, recv: -1, chan: 0, steps: vec![S::new("cpy", ("i", 1), ("o", 0))] });
    let m = refused(&a.xml());
    assert!(m.contains("a data race on rank 0"), "{m}");
    // A copy out of the scratch buffer nothing wrote.
    let mut a = ring(2);
    a.gpus[0].chunks.2 = 2;
    a.gpus[0].tbs.push(common::Tb { send: -1, recv: -1, chan: 0, steps: vec![S::new("cpy", ("s", 0), ("s", 1))] });
    let m = refused(&a.xml());
    assert!(m.contains("reads s[0], which nothing writes before it"), "{m}");
    // A copy whose source overlaps its destination one chunk further on.
    let mut a = ring(4);
    let mut c = S::new("cpy", ("o", 0), ("o", 1));
    c.cnt = 2;
    a.gpus[0].tbs[0].steps.push(c);
    let m = refused(&a.xml());
    assert!(m.contains("overlaps dst o[1..3) at another offset"), "{m}");
}

#[test]
fn allpairs_fuses_every_re_into_one_packet_up_to_32_sources() {
    for r in [2, 4, 8, 16, 32] {
        let s = Schedule::from_xml(&common::allpairs(r).xml()).unwrap_or_else(|e| panic!("R={r}: {e}"));
        let sum = s.summary();
        // Each rank: one reduction of R − 1 re steps plus its destination.
        assert_eq!(sum.max_reduce_sources, r, "R={r}");
        assert_eq!(sum.fused_reductions, if r > 2 { r } else { 0 }, "R={r}");
        assert_eq!(sum.fused_beyond_executor, if r - 1 > 16 { r } else { 0 }, "R={r}");
        // The fused reduce is one work item per chunk: [o[q], s[p0], s[p1], …] → o[q].
        let q = 1;
        let reduce =
            s.plan.steps[q].iter().flat_map(|st| &st.works).find(|w| w.op == cce_msccl::Op::Reduce).expect("a reduce");
        let peers: Vec<u64> = (0..r as u64).filter(|&p| p != q as u64).collect();
        let mut want = vec![cce_msccl::Loc { rank: q, area: cce_msccl::Area::Output, chunk: q as u64 }];
        want.extend(peers.iter().map(|&p| cce_msccl::Loc { rank: q, area: cce_msccl::Area::Scratch, chunk: p }));
        assert_eq!(reduce.srcs, want, "R={r}");
    }
    // 33 ranks would need 33 sources: cce fuses 31 members and starts a second reduction.
    let s = Schedule::from_xml(&common::allpairs(33).xml()).expect("33 ranks");
    let reduces: Vec<usize> = s.plan.steps[0]
        .iter()
        .flat_map(|st| &st.works)
        .filter(|w| w.op == cce_msccl::Op::Reduce)
        .map(|w| w.srcs.len())
        .collect();
    assert_eq!(reduces, vec![32, 2]);
}

#[test]
fn a_send_whose_chunk_is_rewritten_unordered_is_snapshotted() {
    let s = Schedule::from_xml(&common::exchange().xml()).expect("the exchange is a valid in-place all-reduce");
    assert_eq!(s.plan.placement, vec![cce_msccl::Placement::Snapshot; 2]);
    // Rank 0: step 0 copies i[0] into its staging slot; step 1 adds rank 1's copy into i[0].
    let w0 = &s.plan.steps[0][0].works;
    assert_eq!(w0.len(), 1);
    assert_eq!(w0[0].dst.area, cce_msccl::Area::Staging);
    let w1 = &s.plan.steps[0][1].works;
    assert_eq!(w1[0].srcs[0], cce_msccl::Loc { rank: 1, area: cce_msccl::Area::Staging, chunk: 0 });
    assert!(s.plan.writes_input);
    // The ring reads every message where the sender keeps it.
    let ring = Schedule::from_xml(&ring(5).xml()).expect("ring");
    let sum = ring.summary();
    assert_eq!((sum.messages_in_place, sum.messages_staged, sum.messages_snapshot), (5 * 5, 5 * 3, 0));
}

#[test]
fn the_sizes_a_file_accepts_are_the_multiples_of_its_chunks_within_its_bytes() {
    let with = |min: u64, max: u64| {
        let xml = ring(4).xml().replacen(
            "minBytes=\"0\" maxBytes=\"0\"",
            &format!("minBytes=\"{min}\" maxBytes=\"{max}\""),
            1,
        );
        Schedule::from_xml(&xml).unwrap()
    };
    // No limits: from one element per chunk up.
    let any = with(0, 0);
    assert_eq!(any.accepted_elems(2), Some((4, u64::MAX / 2 / 4 * 4)));
    // msccl-scheduler's ndv4 r48ll-like range at 2-byte elements: 266240..=2078719 bytes.
    let (lo, hi) = with(266_240, 2_078_719).accepted_elems(2).unwrap();
    assert_eq!((lo, hi), (133_120, 1_039_356));
    let s = with(266_240, 2_078_719);
    for elems in [lo, hi] {
        assert!(s.check_size(elems, 2).is_ok(), "{elems}");
    }
    for elems in [lo - 4, hi + 4] {
        assert!(s.check_size(elems, 2).is_err(), "{elems}");
        assert!(!s.selects(elems * 2), "{elems}");
    }
    // A minBytes that is not a multiple of the element size rounds up.
    assert_eq!(with(33, 0).accepted_elems(4).map(|r| r.0), Some(12));
    // maxBytes below one element per chunk, or minBytes past maxBytes: nothing fits.
    assert_eq!(with(0, 7).accepted_elems(2), None);
    assert_eq!(with(100, 90).accepted_elems(1), None);
    // 0-byte elements (fp32r): every count is 0 bytes, accepted when minBytes is 0.
    assert_eq!(with(0, 64).accepted_elems(0).map(|r| r.0), Some(4));
    assert_eq!(with(1, 64).accepted_elems(0), None);
}
