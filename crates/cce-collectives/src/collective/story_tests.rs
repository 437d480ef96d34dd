//! The story against the full run: its output bits equal the run's output for every
//! algorithm, collective, op, dtype, accumulate dtype, rounding, GCE and the example MSCCL
//! schedules, at chunk edges and inside chunks; every step whose destination is some rank's
//! output holds that output's bits; and every reduce step's bits are what the engine writes
//! when that step's packets run alone over the story's operands at the run's addresses.

use std::collections::BTreeSet;

use cce_engine::feed::run_programs;
use cce_engine::{Engine, EngineConfig, Memory, PagedMemory};
use cce_format::SdmaDtype;
use cce_host::Rounding;

use super::*;
use crate::collective::{Compress, UserAlgo, check, owned, run};
use crate::metrics::{Held, generate};

/// What the checks counted.
#[derive(Default)]
struct Counted {
    stories: usize,
    outputs: usize,
    engine_steps: usize,
    reduce_steps: usize,
}

/// The bits at `addr` of whichever rank's output holds it.
fn output_at(cfg: &Config, low: &Lowered, outputs: &[Vec<u8>], addr: u64) -> Option<u64> {
    let size = low.l.size as usize;
    for (q, out) in outputs.iter().enumerate() {
        let mut at = 0u64;
        for (base, kept) in low.outputs(cfg, q) {
            if addr >= base && addr - base < kept {
                let o = (at + addr - base) as usize;
                let mut raw = [0u8; 8];
                raw[..size].copy_from_slice(&out[o..o + size]);
                return Some(u64::from_le_bytes(raw));
            }
            at += kept;
        }
    }
    None
}

/// The bits the engine writes for `step` (a reduce) when its work's packets run alone, its
/// operands placed at the element's position of each source (`None`: buffers that overlap).
fn engine_bits(cfg: &Config, low: &Lowered, step: &StoryStep) -> Option<u64> {
    let size = low.l.size;
    let s = step.step?;
    let d = step.dests[0];
    let w = low.steps[step.rank][s].work.iter().find(|w| match w {
        Work::Reduce { dsts, elems, .. } => dsts.iter().any(|&b| d >= b && d - b < elems * size),
        _ => false,
    })?;
    let Work::Reduce { srcs, dsts, elems, .. } = w else { return None };
    let d0 = dsts.iter().copied().find(|&b| d >= b && d - b < elems * size)?;
    let j = (d - d0) / size;
    let program = plan_work(cfg, step.rank, s, w).ok()??;
    let rings = program.to_rings(None).ok()?;
    let mut mem = PagedMemory::new(1 << 34);
    let bases: BTreeSet<u64> = srcs.iter().chain(dsts).copied().collect();
    for &b in &bases {
        mem.add_region(b, elems * size).ok()?;
    }
    for (&src, op) in srcs.iter().zip(&step.operands) {
        mem.write(src + j * size, &op.value.bits.to_le_bytes()[..size as usize]).ok()?;
    }
    let mut engine = Engine::new(mem, EngineConfig { arch: cfg.arch, ..EngineConfig::default() });
    run_programs(&mut engine, &[rings.queue(RANK_QUEUE)], &mut |m: &mut PagedMemory, a, l| m.add_region(a, l)).ok()?;
    if engine.status(RANK_QUEUE)?.fault.is_some() {
        return None;
    }
    let mem = engine.into_memory();
    let mut raw = [0u8; 8];
    mem.read(d, &mut raw[..size as usize]).ok()?;
    Some(u64::from_le_bytes(raw))
}

/// The elements to tell: each chunk's first, middle and last (a user schedule's MSCCL chunks).
fn elements(low: &Lowered, n: u64) -> Vec<u64> {
    let starts: Vec<u64> = match &low.shape {
        Shape::User(g) => {
            let per = (g.chunk / low.l.size).max(1);
            (0..=n / per).map(|c| c * per).collect()
        }
        Shape::BuiltIn { .. } => (0..=low.l.r).map(|c| low.l.start(c)).collect(),
    };
    let mut v = BTreeSet::new();
    for w in starts.windows(2) {
        if w[1] > w[0] {
            v.extend([w[0], (w[0] + w[1]) / 2, w[1] - 1]);
        }
    }
    v.into_iter().filter(|&i| i < n).collect()
}

/// Runs `cfg` and holds every story of its chosen elements against it.
fn holds(cfg: &Config, seed: u64, counted: &mut Counted) {
    let name = format!(
        "{} R={} {} {} {} accum {} {:?} {} per node {}",
        cfg.user.as_ref().map_or(cfg.algo.name().to_string(), |u| u.file.clone()),
        cfg.ranks,
        cfg.collective.name(),
        cfg.op.name(),
        cfg.dtype.name(),
        cfg.accum.name(),
        cfg.rounding,
        cfg.compress.name(),
        cfg.model.ranks_per_node
    );
    let checked = check(cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
    let inputs = generate(cfg, seed);
    let (outcome, inputs) = run(&checked, owned(inputs)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let low = Lowered::new(cfg);
    let held = Held::new(cfg, &inputs);
    let size = low.l.size as usize;
    let writers = entries(cfg, &low).unwrap();
    for index in elements(&low, cfg.elems) {
        let ranks: Vec<Option<usize>> =
            if cfg.collective == Collective::ReduceScatter { vec![None] } else { (0..cfg.ranks).map(Some).collect() };
        for rank in ranks {
            let st = story(cfg, &held, index, rank).unwrap_or_else(|e| panic!("{name} element {index}: {e}"));
            let (first, _) = if cfg.collective == Collective::ReduceScatter { share_of(&low, st.rank) } else { (0, 0) };
            let o = (index - first) as usize * size;
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(&outcome.outputs[st.rank][o..o + size]);
            let want = u64::from_le_bytes(raw);
            assert_eq!(st.output.bits, want, "{name}: element {index} of rank {}: {:#?}", st.rank, st.steps);
            assert_eq!(st.leaves, st.expr.leaves());
            counted.stories += 1;
            for step in &st.steps {
                for &d in &step.dests {
                    // A destination some rank's output holds, that no later step rewrites.
                    let last = writers.iter().rev().find(|e| e.writes(d, low.l.size).is_some());
                    if last.is_none_or(|e| (e.rank, e.step) != (step.rank, step.step)) {
                        continue;
                    }
                    if let Some(bits) = output_at(cfg, &low, &outcome.outputs, d) {
                        assert_eq!(step.rounded.bits, bits, "{name}: element {index}, step {step:#?}");
                        counted.outputs += 1;
                    }
                }
                if step.kind == StepKind::Reduce {
                    counted.reduce_steps += 1;
                    if let Some(bits) = engine_bits(cfg, &low, step) {
                        assert_eq!(step.rounded.bits, bits, "{name}: element {index}, the engine on step {step:#?}");
                        counted.engine_steps += 1;
                    }
                }
            }
        }
    }
}

fn config(algo: Algo, ranks: usize, collective: Collective, elems: u64) -> Config {
    let mut cfg = Config::new(ranks, algo, RedOp::Add, SdmaDtype::Bf16, elems);
    cfg.collective = collective;
    cfg
}

fn runs(algo: Algo, ranks: usize) -> bool {
    !(algo == Algo::Ring2r2w && ranks < 3) && algo.refusal(ranks, 3).is_none()
}

#[test]
fn every_algorithm_and_collective_gives_the_runs_bits() {
    let mut counted = Counted::default();
    for algo in Algo::ALL {
        for ranks in (2..=9).chain([16]) {
            if !runs(algo, ranks) {
                continue;
            }
            for collective in Collective::ALL {
                holds(&config(algo, ranks, collective, 1000 + ranks as u64), 11, &mut counted);
            }
        }
        // Fewer elements than ranks: empty chunks.
        if runs(algo, 8) {
            holds(&config(algo, 8, Collective::AllReduce, 5), 12, &mut counted);
        }
    }
    assert!(counted.stories > 1000 && counted.outputs > counted.stories, "{}", counted.stories);
    assert!(
        counted.engine_steps * 10 >= counted.reduce_steps * 9,
        "{} of {}",
        counted.engine_steps,
        counted.reduce_steps
    );
}

#[test]
fn every_dtype_op_and_rounding_gives_the_runs_bits() {
    let mut counted = Counted::default();
    for algo in Algo::ALL {
        for ranks in [4usize, 5, 8] {
            if !runs(algo, ranks) {
                continue;
            }
            let mut cases = Vec::new();
            for dtype in [SdmaDtype::Bf16, SdmaDtype::Fp16, SdmaDtype::Fp32] {
                for op in RedOp::ALL {
                    let mut cfg = config(algo, ranks, Collective::AllReduce, 700);
                    (cfg.dtype, cfg.op) = (dtype, op);
                    cases.push(cfg);
                }
            }
            for seed in [1u32, 77] {
                let mut cfg = config(algo, ranks, Collective::AllReduce, 700);
                cfg.rounding = Rounding::Stochastic { seed };
                cases.push(cfg.clone());
                cfg.accum = SdmaDtype::Bf16;
                cases.push(cfg.clone());
                cfg.op = RedOp::Avg;
                cases.push(cfg);
            }
            let mut bf16_acc = config(algo, ranks, Collective::ReduceScatter, 700);
            bf16_acc.accum = SdmaDtype::Bf16;
            cases.push(bf16_acc);
            for cfg in cases {
                holds(&cfg, 21, &mut counted);
            }
        }
    }
    assert!(
        counted.engine_steps * 10 >= counted.reduce_steps * 9,
        "{} of {}",
        counted.engine_steps,
        counted.reduce_steps
    );
}

/// The flat rings of several channels (docs/MODEL.md C29): one node and nodes of 2–4 ranks (a
/// short last one), every collective, RNE and SR, pieces empty or not.
#[test]
fn channels_give_the_runs_bits() {
    let mut counted = Counted::default();
    for algo in [Algo::Ring, Algo::Ring2r2w] {
        for (ranks, per_node, channels) in [(4, 4, 2), (6, 3, 3), (8, 4, 4), (7, 3, 2), (5, 2, 5)] {
            for collective in Collective::ALL {
                for (elems, rounding) in
                    [(997, Rounding::Rne), (12, Rounding::Rne), (500, Rounding::Stochastic { seed: 9 })]
                {
                    let mut cfg = config(algo, ranks, collective, elems);
                    (cfg.channels, cfg.model.ranks_per_node, cfg.rounding) = (channels, per_node, rounding);
                    holds(&cfg, 41, &mut counted);
                }
            }
        }
    }
    assert!(counted.stories > 300, "{}", counted.stories);
}

#[test]
fn gce_hops_give_the_runs_bits() {
    let mut counted = Counted::default();
    for ranks in 2..=9 {
        for per_node in 1..=3 {
            for (dtype, rounding) in [
                (SdmaDtype::Bf16, Rounding::Rne),
                (SdmaDtype::Fp32, Rounding::Rne),
                (SdmaDtype::Bf16, Rounding::Stochastic { seed: 5 }),
            ] {
                let mut cfg = config(Algo::Ring, ranks, Collective::AllReduce, 3000);
                cfg.compress = Compress::Gce;
                cfg.model.ranks_per_node = per_node;
                (cfg.dtype, cfg.rounding) = (dtype, rounding);
                if cfg.nodes() < 2 {
                    continue;
                }
                holds(&cfg, 31, &mut counted);
            }
        }
    }
    assert!(counted.stories > 100);
}

#[test]
fn the_example_msccl_schedules_give_the_runs_bits() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/msccl");
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(user) = UserAlgo::from_xml(&path.display().to_string(), &text) else { continue };
        let user = std::sync::Arc::new(user);
        let n = user.schedule.program.nchunks;
        let Some(elems) = (0..20).map(|k| n << k).find(|&e| user.schedule.check_size(e, 2).is_ok()) else { continue };
        for op in [RedOp::Add, RedOp::Max] {
            let cfg = Config::from_user(user.clone(), op, SdmaDtype::Bf16, elems);
            if check(&cfg).is_err() {
                continue;
            }
            holds(&cfg, 41, &mut Counted::default());
            ran += 1;
        }
    }
    assert!(ran >= 4, "{ran} schedules ran");
}

/// Out of range: one line naming the element or rank, never a panic.
#[test]
fn elements_and_ranks_out_of_range_are_refused() {
    let cfg = config(Algo::Ring, 4, Collective::AllReduce, 100);
    let inputs = generate(&cfg, 1);
    let held = Held::new(&cfg, &inputs);
    let e = story(&cfg, &held, 100, None).unwrap_err().to_string();
    assert!(e.contains("`element` 100") && e.contains("0..=99"), "{e}");
    let e = story(&cfg, &held, 5, Some(4)).unwrap_err().to_string();
    assert!(e.contains("`rank` 4") && e.contains("0..=3"), "{e}");
    let rs = config(Algo::Ring, 4, Collective::ReduceScatter, 100);
    let e = story(&rs, &held, 0, Some(0)).unwrap_err().to_string();
    assert!(e.contains("does not hold element 0") && e.contains("rank 3 does"), "{e}");
}

/// The grammar: ring chunk 0 at R = 4 is `(((0+1)+2)+3)` and the mesh's one packet `(0+1+2+3)`.
#[test]
fn the_orders_are_the_documented_ones() {
    let expr = |algo: Algo, index: u64| {
        let cfg = config(algo, 4, Collective::AllReduce, 400);
        let inputs = generate(&cfg, 1);
        story(&cfg, &Held::new(&cfg, &inputs), index, None).unwrap().expr.to_string()
    };
    assert_eq!(expr(Algo::Ring, 0), "(((0+1)+2)+3)");
    assert_eq!(expr(Algo::Ring, 399), "(((3+0)+1)+2)");
    assert_eq!(expr(Algo::Mesh, 150), "(0+1+2+3)");
    assert_eq!(expr(Algo::Rdh, 0), "((0+1)+(2+3))");
    assert_eq!(expr(Algo::KangaRing, 0), "((0+1+2)+3)");
}

/// `orders` (one story per chunk, over zero inputs) gives every element the order its own
/// story over real inputs tells: every algorithm at 2–9 ranks, every element of a run whose
/// chunks are uneven, and the example MSCCL schedules.
#[test]
fn the_orders_of_chunks_are_every_elements_order() {
    let mut told = 0;
    let mut agree = |cfg: &Config| {
        let segments = orders(cfg, None).unwrap();
        assert!(!segments.is_empty() && segments[0].0 == 0, "{:?}", cfg.algo);
        let inputs = generate(cfg, 3);
        let held = Held::new(cfg, &inputs);
        for i in 0..cfg.elems {
            let seg = segments.iter().rev().find(|(first, _)| *first <= i).unwrap();
            let s = story(cfg, &held, i, None).unwrap();
            assert_eq!(seg.1, s.expr, "{:?} at {} ranks, element {i}", cfg.algo, cfg.ranks);
            told += 1;
        }
    };
    for algo in Algo::ALL {
        for ranks in 2..=9 {
            if runs(algo, ranks) {
                agree(&config(algo, ranks, Collective::AllReduce, 61 + ranks as u64));
            }
        }
    }
    // Channels: a chunk's pieces have orders of their own.
    for (ranks, per_node, channels) in [(6, 3, 3), (8, 4, 2), (5, 5, 4)] {
        let mut cfg = config(Algo::Ring, ranks, Collective::AllReduce, 70 + ranks as u64);
        (cfg.channels, cfg.model.ranks_per_node) = (channels, per_node);
        agree(&cfg);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/msccl");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(user) = UserAlgo::from_xml(&path.display().to_string(), &text) else { continue };
        let n = user.schedule.program.nchunks;
        let Some(elems) = (0..20).map(|k| n << k).find(|&e| user.schedule.check_size(e, 2).is_ok()) else { continue };
        let cfg = Config::from_user(std::sync::Arc::new(user), RedOp::Add, SdmaDtype::Bf16, elems);
        if check(&cfg).is_ok() && cfg.collective == Collective::AllReduce {
            agree(&cfg);
        }
    }
    assert!(told > 2000, "{told} elements told");
}

/// Element `index`'s story told from the whole schedule: every rank's every work, by step then
/// rank, and each queue counted from its planned steps — what the slice must equal.
fn whole_story(cfg: &Config, source: &dyn InputSource, index: u64, rank: Option<usize>) -> Story {
    let low = Lowered::new(cfg);
    let (q, addr) = output_address(cfg, &low, index, rank).unwrap();
    let mut ev = Eval::new(cfg, &low, source, index, entries(cfg, &low).unwrap(), None);
    let root = ev.value(addr, ev.entries.len()).unwrap();
    ev.tell(root, index, q)
}

/// The configurations whose stories are held against the whole schedule's: every flat
/// algorithm and collective at 2–9 and 16 ranks, every hierarchy over three node shapes and
/// every collective, GCE rings flat (nodes of 1–3) and between nodes; with avg, SR and arch 2
/// besides; at element counts that split evenly, unevenly and below one per chunk.
fn slice_cases() -> Vec<Config> {
    let mut base = Vec::new();
    for algo in Algo::ALL {
        for ranks in (2..=9).chain([16]) {
            for collective in Collective::ALL {
                base.push(config(algo, ranks, collective, 0));
            }
        }
    }
    for intra in Algo::ALL {
        for inter in crate::collective::Inter::ALL {
            for (x, y) in [(2, 2), (3, 2), (2, 3), (4, 2)] {
                for collective in Collective::ALL {
                    let mut cfg = config(Algo::Hier, x * y, collective, 0);
                    cfg.model.ranks_per_node = y;
                    cfg.hier = crate::collective::Hier { intra, inter };
                    base.push(cfg.clone());
                    if inter == crate::collective::Inter::Ring && collective == Collective::AllReduce {
                        cfg.compress = Compress::Gce;
                        base.push(cfg);
                    }
                }
            }
        }
    }
    for ranks in 2..=9 {
        for per_node in 1..=3 {
            let mut cfg = config(Algo::Ring, ranks, Collective::AllReduce, 0);
            cfg.compress = Compress::Gce;
            cfg.model.ranks_per_node = per_node;
            base.push(cfg);
        }
    }
    let mut out = Vec::new();
    for cfg in base {
        for variant in 0..4 {
            let mut c = cfg.clone();
            c.elems = [c.ranks as u64 * 40, 700 + c.ranks as u64, 5, 3000][variant];
            match variant {
                1 => c.op = RedOp::Avg,
                2 => c.arch = 2,
                3 => c.rounding = Rounding::Stochastic { seed: 9 },
                _ => {}
            }
            if check(&c).is_ok() {
                out.push(c);
            }
        }
    }
    out
}

/// Every story told from the slice ([`story`]) is the whole schedule's story: the same steps
/// in the same order, packets, operands, bits and orders.
#[test]
fn stories_from_the_slice_are_the_whole_schedules() {
    let mut told = 0;
    for cfg in slice_cases() {
        let inputs = generate(&cfg, 17);
        let held = Held::new(&cfg, &inputs);
        let low = Lowered::new(&cfg);
        let ranks: Vec<Option<usize>> = if cfg.collective == Collective::ReduceScatter {
            vec![None]
        } else {
            vec![None, Some(cfg.ranks - 1), Some(cfg.ranks / 2)]
        };
        for index in elements(&low, cfg.elems) {
            for &rank in &ranks {
                let got = story(&cfg, &held, index, rank).unwrap();
                assert_eq!(
                    got,
                    whole_story(&cfg, &held, index, rank),
                    "{} {:?} R={} {} elems {} element {index} rank {rank:?}",
                    cfg.algo.name(),
                    cfg.hier,
                    cfg.ranks,
                    cfg.collective.name(),
                    cfg.elems
                );
                told += 1;
            }
        }
    }
    assert!(told > 10_000, "{told}");
}

/// Every hierarchy (every intra and inter algorithm, three node shapes, every collective, and
/// GCE between the nodes): the story's output bits are the run's.
#[test]
fn every_hierarchy_gives_the_runs_bits() {
    let mut counted = Counted::default();
    for intra in Algo::ALL {
        for inter in crate::collective::Inter::ALL {
            for (x, y) in [(2, 2), (2, 3), (3, 2)] {
                for collective in Collective::ALL {
                    let mut cfg = config(Algo::Hier, x * y, collective, 300 + x as u64);
                    cfg.model.ranks_per_node = y;
                    cfg.hier = crate::collective::Hier { intra, inter };
                    if check(&cfg).is_err() {
                        continue;
                    }
                    holds(&cfg, 51, &mut counted);
                    if inter == crate::collective::Inter::Ring && collective == Collective::AllReduce {
                        cfg.compress = Compress::Gce;
                        holds(&cfg, 52, &mut counted);
                    }
                }
            }
        }
    }
    assert!(counted.stories > 5000 && counted.outputs > counted.stories, "{}", counted.stories);
}

/// A 4096-rank flat ring's story — its element passes through 8,190 works — is made from its
/// chunk's works alone and told on a thread of 1 MiB of stack: nothing in it recurses through
/// the chain. It holds the run's order, and its queue positions are the ring's.
#[test]
fn a_4096_rank_ring_story_needs_no_deep_stack() {
    let told = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let cfg = config(Algo::Ring, 4096, Collective::AllReduce, 4096 * 3 + 5);
            let inputs = crate::metrics::Generated::new(&cfg, 5);
            let s = story(&cfg, &inputs, 7, None).unwrap();
            // Chunk 2 (elements 6..9; 5 of the 4096 chunks hold 4): 4095 reduces from rank 3
            // on, 4095 copies from its owner, rank 1, round to rank 0.
            assert_eq!((s.chunk, s.steps.len()), (2, 2 * 4095));
            assert_eq!(s.leaves, (2..4096).chain([0, 1]).collect::<Vec<u32>>());
            let last = s.steps.last().unwrap();
            // Rank 0 copies chunk 0 at its last step, behind 8189 one-packet works.
            assert_eq!((last.rank, last.step, last.packet.as_ref().map(|p| p.packet)), (0, Some(8189), Some(8189)));
            s.expr.to_string().len()
        })
        .unwrap();
    assert!(told.join().unwrap() > 4096 * 4);
}
