//! `cce allreduce` and `cce demo`: the configuration and the JSON are [`cce_api::collective`]'s;
//! inputs and outputs on disk, progress and printing here.

use std::borrow::Cow;
use std::time::Duration;

use cce_api::collective::{self as api, AllreduceParams, Config, Demo, Prepared};
use cce_api::params::{AlgoChoice, Compress};

use crate::args::{AllreduceArgs, DemoArgs, named};
use crate::error::CliError;
use crate::files::write_atomic;

fn input(m: impl Into<String>) -> CliError {
    CliError::Input(m.into())
}

/// The command's parameters, every name parsed, with the user's schedule read and checked when
/// one is given.
fn params(a: &AllreduceArgs) -> Result<AllreduceParams, CliError> {
    let algo_file = a.algo_file.as_deref().map(crate::algo_cmd::load).transpose()?;
    // Ranks: given, or the file's (cce-api checks that the two agree).
    let ranks = a.ranks.or(algo_file.as_ref().map(|u| u.ranks() as u64)).unwrap_or(0);
    let algo = match algo_file {
        Some(u) => AlgoChoice::File(u),
        // clap requires --algo without --algo-file.
        None => named("--algo", a.algo.as_deref().unwrap_or("file"))?,
    };
    let op = named("--op", &a.op)?;
    let instance = a.instance.as_deref().map(|i| named("--instance", i)).transpose()?;
    let rounding = named("--rounding", &a.rounding)?;
    let collective = a.collective.as_deref().map(|c| named("--collective", c)).transpose()?;
    let compress = a.compress.as_deref().map(|c| named("--compress", c)).transpose()?;
    let intra = a.intra.as_deref().map(|c| cce_api::params::intra_algo(c).map_err(|e| input(format!("--intra {e}"))));
    let intra = intra.transpose()?;
    let inter = a.inter.as_deref().map(|c| named("--inter", c)).transpose()?;
    Ok(AllreduceParams {
        nodes: a.nodes,
        intra,
        inter,
        accum: a.accum,
        seed: a.seed,
        arch: a.arch,
        rounding,
        collective,
        fail: a.fail_rank.zip(a.fail_step),
        timeout_secs: a.timeout,
        instance,
        alpha_ns: a.alpha_ns,
        dma_gbps: a.dma_gbps,
        engines: a.engines,
        hbm_gbps: a.hbm_gbps,
        link_gbps: a.link_gbps,
        inter_link_gbps: a.inter_link_gbps,
        efa_per_node: a.efa_per_node,
        cce_rate: a.cce_rate,
        latency_us: a.latency_us,
        inter_latency_us: a.inter_latency_us,
        ranks_per_node: a.ranks_per_node,
        cores_per_chip: a.cores_per_chip,
        budget: a.budget,
        compress: compress.unwrap_or(Compress::None),
        check: a.check,
        ..AllreduceParams::new(ranks, algo, op, a.dtype)
    })
}

fn read_inputs(cfg: &Config, dir: &std::path::Path) -> Result<Vec<Vec<u8>>, CliError> {
    cce_api::collective::check_rank_files(cfg, dir)?;
    (0..cfg.ranks)
        .map(|r| {
            let p = dir.join(format!("rank{r}.bin"));
            std::fs::read(&p).map_err(|source| CliError::Io { path: p.display().to_string(), source })
        })
        .collect()
}

fn spinner(msg: String) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

/// Whether an MPI launcher started this process (Open MPI, MPICH / PMI).
pub(crate) fn under_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some())
}

pub(crate) fn allreduce(a: &AllreduceArgs) -> Result<(), CliError> {
    if under_mpi() {
        if cfg!(not(feature = "mpi")) {
            return Err(input(
                "started by an MPI launcher, but this cce was built without MPI: cargo build --release --features mpi",
            ));
        }
        if a.sweep.is_some() {
            return Err(input("--sweep does not run under MPI: give --elems"));
        }
        if a.compress.is_some() {
            return Err(input("--compress does not run under MPI yet: run it in one process"));
        }
    }
    let p = params(a)?;
    if let Some(sweep) = &a.sweep {
        return sweep_rows(a, &p, sweep);
    }
    let elems = if let Some(dir) = &a.input_dir {
        // Without --elems, the element count follows rank0.bin (its length only: nothing is read).
        match a.elems {
            Some(e) => e,
            None => {
                let p = dir.join("rank0.bin");
                let len = std::fs::metadata(&p).map_err(CliError::io(&p))?.len();
                len / a.dtype.bytes().max(1) as u64
            }
        }
    } else {
        a.elems.ok_or_else(|| input("--elems is required without --input-dir"))?
    };
    if let Some(index) = a.element {
        // One element's story: the schedule for that element alone, no run (any size).
        let inputs = match &a.input_dir {
            Some(d) => api::StoryInputs::RankFiles(d),
            None => api::StoryInputs::Generated { seed: a.seed },
        };
        let s = p.element_story(elems, index, a.rank, inputs)?;
        if a.json {
            crate::print_json(&s.to_json());
        } else {
            crate::output::out!("{}", s.to_text());
        }
        return Ok(());
    }
    if a.explain {
        // The model only: every algorithm's time and the parameters, for any size (no budget).
        let e = p.explain(elems)?;
        if a.json {
            crate::print_json(&e.to_json());
        } else {
            crate::output::out!("{}", e.to_text());
        }
        return Ok(());
    }
    // The whole configuration, the memory budget included, before any input is generated or read.
    let job = p.prepare(elems)?;
    #[cfg(feature = "mpi")]
    if under_mpi() {
        return crate::mpi_cmd::allreduce(a, &job);
    }
    // The trace's timeline (refused when it would hold too many packets) before anything runs.
    let timeline = a.trace.as_ref().map(|_| job.timeline()).transpose()?;
    let inputs = match &a.input_dir {
        Some(d) => read_inputs(job.config(), d)?,
        None => job.generate_inputs(a.seed),
    };
    let pb = spinner(format!("{} over {} ranks", job.label(), job.config().ranks));
    let result = job.run(inputs.into_iter().map(Cow::Owned).collect());
    pb.finish_and_clear();
    let r = result?;
    if let (Some(path), Some(t)) = (&a.trace, &timeline) {
        let trace = cce_api::trace::chrome_trace(job.config(), t, &r.outcome.step_walls);
        write_atomic(path, serde_json::to_string(&trace).unwrap_or_default().as_bytes())?;
    }
    let o = &r.outcome;
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(CliError::io(dir))?;
        for (r, out) in o.outputs.iter().enumerate() {
            write_atomic(&dir.join(format!("rank{r}.bin")), out)?;
        }
    }
    if a.json {
        crate::print_json(&r.to_json());
    } else {
        crate::output::out!("{}", r.to_text());
    }
    Ok(())
}

fn sweep_rows(a: &AllreduceArgs, p: &AllreduceParams, sweep: &str) -> Result<(), CliError> {
    let counts = p.sweep_counts(sweep)?;
    // Every size's configuration and memory budget, before any size runs.
    let jobs: Vec<Prepared> = p.prepare_sweep(&counts)?;
    let pb = indicatif::ProgressBar::with_draw_target(Some(jobs.len() as u64), indicatif::ProgressDrawTarget::stderr());
    let mut rows = Vec::new();
    if !a.json {
        crate::output::out!("{}", cce_api::AllreduceResult::sweep_header());
    }
    for job in jobs {
        let inputs = job.generate_inputs(a.seed);
        let r = job.run(inputs.into_iter().map(Cow::Owned).collect())?;
        pb.inc(1);
        if a.json {
            rows.push(r.sweep_row());
        } else {
            pb.suspend(|| crate::output::out!("{}", r.sweep_text_row()));
        }
    }
    pb.finish_and_clear();
    if a.json {
        crate::print_json(&cce_api::render::collective::sweep_json(rows));
    }
    if let Some(path) = &a.plot {
        let runs = p.every_algorithm_runs(&counts);
        let pb = indicatif::ProgressBar::with_draw_target(Some(runs), indicatif::ProgressDrawTarget::stderr());
        let points = api::sweep_every_algorithm(p, &counts, || pb.inc(1));
        pb.finish_and_clear();
        let svg = cce_api::plot::svg(&api::sweep_chart(&points?, p.ranks, p.dtype))?;
        write_atomic(path, svg.as_bytes())?;
    }
    Ok(())
}

pub(crate) fn demo(a: &DemoArgs) -> Result<(), CliError> {
    // Bad sizes (and a memory budget the all-reduce would exceed) are refused before any output.
    let demo = Demo::prepare(a.elems)?;
    let examples = &demo.examples;
    if !a.json {
        for ex in examples {
            crate::output::out!("{}", cce_api::render::collective::example_text(ex));
        }
        crate::output::out!("{}", cce_api::render::collective::demo_allreduce_heading(a.elems));
    }
    let pb = spinner(String::new());
    let run = demo.allreduce_rows(|algo| pb.set_message(format!("{} ...", algo.name())));
    pb.finish_and_clear();
    let run = run?;
    let failures = api::demo_failures(examples, &run.rows);
    if a.json {
        crate::print_json(&cce_api::render::collective::demo_json(examples, &run, a.elems));
    } else {
        crate::output::out!("{}", cce_api::render::collective::demo_rows_text(&run, failures.is_empty()));
    }
    Ok(api::demo_check(&failures)?)
}
