//! All-reduce over many ranks: int32 equals the exact (wrapping) sum on every rank for every
//! algorithm; reduce-scatter / all-gather alone; failures end every rank, quickly, by name.

mod common;

use common::{exact_sum, i32_inputs};

use std::time::{Duration, Instant};

use cce_collectives::collective::{self, Algo, Collective, CollectiveError, Config, RedOp};
use cce_format::SdmaDtype;

#[test]
fn int32_allreduce_is_the_exact_sum_on_every_rank() {
    for algo in Algo::ALL {
        for ranks in [2usize, 3, 5, 8, 16] {
            if algo.refusal(ranks, 3).is_some() {
                continue; // rdh: powers of two only (refusal tested below)
            }
            for elems in [1usize, 7, 5000] {
                let inputs = i32_inputs(ranks, elems, 3 * ranks as u64 + elems as u64);
                let cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::I32, elems as u64);
                let o =
                    common::run(&cfg, &inputs).unwrap_or_else(|e| panic!("{} R={ranks} n={elems}: {e}", algo.name()));
                let want = exact_sum(&inputs);
                for (r, out) in o.outputs.iter().enumerate() {
                    assert_eq!(out, &want, "{} R={ranks} n={elems} rank {r}", algo.name());
                }
                assert!(o.packets() > 0 && o.model_seconds > 0.0);
            }
        }
    }
}

#[test]
fn min_max_and_arch_2() {
    let inputs = i32_inputs(5, 999, 11);
    for (op, f) in [(RedOp::Min, i32::min as fn(i32, i32) -> i32), (RedOp::Max, i32::max)] {
        for (algo, arch) in [(Algo::Ring, 2), (Algo::KangaRing, 2), (Algo::Mesh, 4), (Algo::Ring2r2w, 3)] {
            let cfg = Config { arch, ..Config::new(5, algo, op, SdmaDtype::I32, 999) };
            let o = common::run(&cfg, &inputs).unwrap();
            let want: Vec<u8> = (0..999)
                .flat_map(|i| {
                    inputs
                        .iter()
                        .map(|b| i32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap()))
                        .reduce(f)
                        .unwrap()
                        .to_le_bytes()
                })
                .collect();
            assert!(o.outputs.iter().all(|x| *x == want), "{:?} {}", op, algo.name());
        }
    }
}

#[test]
fn reduce_scatter_and_all_gather_alone() {
    let inputs = i32_inputs(4, 100, 5);
    let sum = exact_sum(&inputs);
    let rs = common::run(
        &Config {
            collective: Collective::ReduceScatter,
            ..Config::new(4, Algo::Ring, RedOp::Add, SdmaDtype::I32, 100)
        },
        &inputs,
    )
    .unwrap();
    // Ring: rank r ends with chunk r+1.
    for (r, out) in rs.outputs.iter().enumerate() {
        let c = (r + 1) % 4;
        assert_eq!(out[..], sum[c * 25 * 4..(c + 1) * 25 * 4]);
    }
    let ag = common::run(
        &Config { collective: Collective::AllGather, ..Config::new(4, Algo::Mesh, RedOp::Add, SdmaDtype::I32, 100) },
        &inputs,
    )
    .unwrap();
    // Mesh: rank r contributes chunk r of its own buffer.
    let want: Vec<u8> = (0..4).flat_map(|c| inputs[c][c * 100..(c + 1) * 100].to_vec()).collect();
    assert!(ag.outputs.iter().all(|o| *o == want));
}

#[test]
fn a_failed_rank_ends_every_rank_with_its_name_and_step() {
    for algo in Algo::ALL {
        let inputs = i32_inputs(8, 4096, 1);
        let cfg = Config {
            fail: Some((3, 2)),
            timeout: Duration::from_secs(20),
            ..Config::new(8, algo, RedOp::Add, SdmaDtype::I32, 4096)
        };
        let cfg = if algo == Algo::Mesh { Config { fail: Some((3, 1)), ..cfg } } else { cfg };
        let t = Instant::now();
        let err = common::run(&cfg, &inputs).unwrap_err();
        let step = cfg.fail.unwrap().1;
        assert_eq!(
            err,
            CollectiveError::RankFailed { rank: 3, step, reason: "injected failure (the rank stopped)".into() },
            "{}",
            algo.name()
        );
        assert!(err.to_string().starts_with(&format!("rank 3 failed at step {step}")));
        assert!(t.elapsed() < Duration::from_secs(10), "no hang: every rank ended in {:?}", t.elapsed());
    }
}

#[test]
fn rdh_is_the_exact_sum_at_every_power_of_two_and_refuses_the_rest() {
    for ranks in [2usize, 4, 8, 16, 32, 64] {
        for collective in [Collective::AllReduce, Collective::ReduceScatter] {
            let elems = 3 * ranks + 5; // ragged chunks
            let inputs = i32_inputs(ranks, elems, ranks as u64);
            let cfg = Config { collective, ..Config::new(ranks, Algo::Rdh, RedOp::Add, SdmaDtype::I32, elems as u64) };
            let o = common::run(&cfg, &inputs).unwrap_or_else(|e| panic!("R={ranks}: {e}"));
            let want = exact_sum(&inputs);
            assert_eq!(
                o.steps,
                if collective == Collective::AllReduce { 2 } else { 1 } * ranks.trailing_zeros() as usize
            );
            for (r, out) in o.outputs.iter().enumerate() {
                if collective == Collective::AllReduce {
                    assert_eq!(out, &want, "R={ranks} rank {r}");
                } else {
                    // Rank r ends with chunk r of the sum.
                    let (a, b) = (r * elems / ranks * 4, (r + 1) * elems / ranks * 4);
                    assert_eq!(&out[..], &want[a..b], "R={ranks} rank {r}: its chunk");
                }
            }
        }
    }
    for ranks in [3usize, 6, 12, 48] {
        let e = common::run(&Config::new(ranks, Algo::Rdh, RedOp::Add, SdmaDtype::I32, 64), &i32_inputs(ranks, 64, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("power-of-two") && e.contains(&ranks.to_string()), "{e}");
    }
}

#[test]
fn refusals() {
    let one = i32_inputs(2, 4, 0);
    let e = |cfg: Config| common::run(&cfg, &one).unwrap_err().to_string();
    assert!(e(Config::new(1, Algo::Ring, RedOp::Add, SdmaDtype::I32, 4)).contains("ranks"));
    assert!(e(Config { arch: 2, ..Config::new(2, Algo::Ring2r2w, RedOp::Add, SdmaDtype::I32, 4) }).contains("arch"));
    assert!(e(Config::new(2, Algo::Ring, RedOp::Avg, SdmaDtype::I32, 4)).contains("float"));
    assert!(
        e(Config { fail: Some((5, 0)), ..Config::new(2, Algo::Ring, RedOp::Add, SdmaDtype::I32, 4) }).contains("fail")
    );
    assert!(e(Config { budget: 10, ..Config::new(2, Algo::Ring, RedOp::Add, SdmaDtype::I32, 4) }).contains("budget"));
    assert!(
        common::run(&Config::new(40, Algo::Mesh, RedOp::Add, SdmaDtype::I32, 4), &i32_inputs(40, 4, 0))
            .unwrap_err()
            .to_string()
            .contains("32")
    );
}

#[test]
fn memory_need_counts_every_buffer() {
    // By hand, from the module's buffer layout: the inputs (R · elems · size) are the ranks' IN
    // buffers; per rank one W region per chunk (an empty chunk maps 1 byte); under back pressure
    // at most two steps' scratch buffers per rank — the ring writes one P chunk per step, chunks
    // q−1 and q−2 first, so two consecutive chunks (ring-2r2w: P and RECV, twice that); the
    // outputs add one rank's buffer.
    let need = |algo, elems| collective::memory_need(&Config::new(4, algo, RedOp::Add, SdmaDtype::I32, elems)).unwrap();
    // 10 elements over 4 ranks: chunks of 2, 3, 2, 3 elements (8, 12, 8, 12 bytes).
    let n = need(Algo::Ring, 10);
    assert_eq!((n.inputs, n.buffers, n.outputs), (160, 4 * 40 + 4 * (8 + 12), 40));
    let n = need(Algo::Ring2r2w, 10);
    assert_eq!(n.buffers, 4 * 40 + 4 * 2 * (8 + 12));
    // 2 elements over 4 ranks: chunks of 0, 1, 0, 1 elements (1, 4, 1, 4 bytes mapped).
    let n = need(Algo::Ring, 2);
    assert_eq!(n.buffers, 4 * (1 + 4 + 1 + 4) + 4 * (1 + 4));
    // The rings: at least 32 descriptors of 16 bytes in each of a rank's two ring regions.
    let rings = n.rings.unwrap();
    assert!(rings >= 4 * 2 * 32 * 16, "{rings}");
    // check accepts a budget of exactly the need and refuses one byte less.
    let cfg = Config::new(4, Algo::Mesh, RedOp::Add, SdmaDtype::I32, 1000);
    let total = collective::check(&cfg).unwrap().need().total();
    assert!(collective::check(&Config { budget: total, ..cfg.clone() }).is_ok());
    let e = collective::check(&Config { budget: total - 1, ..cfg.clone() }).unwrap_err();
    assert!(matches!(e, CollectiveError::Budget { .. }), "{e}");
    // And run, under exactly that budget, completes.
    let inputs = i32_inputs(4, 1000, 9);
    let o = common::run(&Config { budget: total, ..cfg }, &inputs).unwrap();
    assert_eq!(o.outputs[0], exact_sum(&inputs));
}

#[test]
fn mesh_runs_32_ranks_and_refuses_33() {
    assert_eq!(collective::MESH_MAX_RANKS, 32);
    let inputs = i32_inputs(32, 64, 2);
    let o = common::run(&Config::new(32, Algo::Mesh, RedOp::Add, SdmaDtype::I32, 64), &inputs).unwrap();
    assert!(o.outputs.iter().all(|x| *x == exact_sum(&inputs)));
    let e = collective::check(&Config::new(33, Algo::Mesh, RedOp::Add, SdmaDtype::I32, 64)).unwrap_err();
    assert!(e.to_string().contains("at most 32"), "{e}");
    assert!(collective::check(&Config::new(33, Algo::Ring, RedOp::Add, SdmaDtype::I32, 64)).is_ok());
}

/// The model memory a run maps at once stays within what memory_need counts for it (inputs,
/// buffers, rings; the outputs are outside the model), for every algorithm and collective at
/// several rank counts; and from 8 ranks on within 2.5 × the data plus the rings (the scratch
/// buffers of two steps are 2/R of a rank's data, 4/R for ring-2r2w's partial and its copy).
/// Inputs read in place (`run_borrowed`) give the same outputs within the same need.
#[test]
fn the_model_memory_stays_within_its_need() {
    for algo in Algo::ALL {
        for ranks in [3usize, 4, 7, 8, 16] {
            if algo.refusal(ranks, 3).is_some() {
                continue;
            }
            for collective in [Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather] {
                let cfg = Config { collective, ..Config::new(ranks, algo, RedOp::Add, SdmaDtype::I32, 3000) };
                let need = collective::memory_need(&cfg).unwrap();
                let inputs = i32_inputs(ranks, 3000, 5);
                let (o, back) = common::run_owned(&cfg, inputs.clone()).unwrap();
                assert_eq!(back, inputs, "the inputs come back unchanged");
                let model = need.inputs + need.buffers + need.rings.unwrap();
                let name = format!("{} R={ranks} {collective:?}", algo.name());
                assert!(o.model_peak_bytes <= model, "{name}: peak {} > need {model}", o.model_peak_bytes);
                let data = (ranks * 3000 * 4) as u64;
                assert!(
                    ranks < 8 || o.model_peak_bytes <= data * 5 / 2 + need.rings.unwrap(),
                    "{name}: peak {} over 2.5 x the data ({data}) plus the rings",
                    o.model_peak_bytes
                );
                if collective == Collective::AllReduce {
                    assert!(o.outputs.iter().all(|x| *x == exact_sum(&inputs)), "{name}");
                }
                // Read in place, the inputs give the same outputs within the same need (the
                // engines never write an input; a borrowed one counts as a moved one).
                let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                let b = common::run_borrowed(&cfg, &slices).unwrap();
                assert!(b.outputs == o.outputs, "{name}: borrowed");
                assert!(b.model_peak_bytes <= model, "{name}: borrowed, peak {} > need {model}", b.model_peak_bytes);
            }
        }
    }
}
