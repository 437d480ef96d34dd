//! `cce allreduce` and `cce demo`: the configuration and the JSON are [`cce_api::collective`]'s;
//! inputs and outputs on disk, progress and printing here.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cce_api::SdmaDtype;
use cce_api::collective::{self as api, AllreduceParams, Config, Demo, Prepared};
use cce_api::params::{AlgoChoice, Compress};

use crate::args::{AllreduceArgs, DemoArgs, named};
use crate::error::CliError;
use crate::files::{Layout, write_atomic};

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
        launch_us: a.launch_us,
        step_us: a.step_us,
        dma_share: a.dma_share,
        ranks_per_node: a.ranks_per_node,
        cores_per_chip: a.cores_per_chip,
        budget: a.budget,
        compress: compress.unwrap_or(Compress::None),
        check: a.check,
        channels: a.channels,
        ..AllreduceParams::new(ranks, algo, op, a.dtype)
    })
}

/// `--input-dir`'s rank files (rank{r}.bin or rank{r}.npy, ranks 0..R−1 none missing, as
/// `repro` and `identify` read them), each measured: nothing read but an .npy header.
fn input_files(dir: &Path, dtype: SdmaDtype) -> Result<Vec<(PathBuf, Layout)>, CliError> {
    let size = u64::from(dtype.bytes().max(1));
    let kinds = crate::files::npy_kinds(dtype);
    let mut files = Vec::new();
    for f in crate::files::rank_files(dir)? {
        let at = crate::files::layout(&f.path, size, kinds, dtype.name())?;
        files.push((f.path, at));
    }
    Ok(files)
}

/// The first `ranks` of `files`, each holding exactly `elems` elements of `dtype`.
fn check_files<'a>(
    (ranks, elems, dtype): (usize, u64, SdmaDtype),
    dir: &Path,
    files: &'a [(PathBuf, Layout)],
) -> Result<&'a [(PathBuf, Layout)], CliError> {
    if files.len() < ranks {
        return Err(input(format!(
            "{}: rank{}.bin (or .npy) is missing: the run has {ranks} ranks",
            dir.display(),
            files.len()
        )));
    }
    let size = u64::from(dtype.bytes().max(1));
    for (p, at) in &files[..ranks] {
        if at.elems != elems {
            return Err(input(format!(
                "{}: {} bytes, expected {} ({elems} elements of {})",
                p.display(),
                at.elems * size,
                elems * size,
                dtype.name()
            )));
        }
    }
    Ok(&files[..ranks])
}

fn read_inputs(cfg: &Config, dir: &Path, files: &[(PathBuf, Layout)]) -> Result<Vec<Vec<u8>>, CliError> {
    let size = u64::from(cfg.dtype.bytes().max(1));
    let files = check_files((cfg.ranks, cfg.elems, cfg.dtype), dir, files)?;
    files.iter().map(|(p, at)| crate::files::read_elements(p, *at, cfg.elems, size)).collect()
}

/// `--element` and `--rank` as the story takes them: a negative one refused with the range
/// (one past the end is the story's to refuse, with the same range).
fn element_and_rank(index: i128, rank: Option<i128>, elems: u64, ranks: u64) -> Result<(u64, Option<u64>), CliError> {
    if index < 0 {
        return Err(input(format!(
            "--element {index} is before the run's {elems} elements per rank (0..={})",
            elems.saturating_sub(1)
        )));
    }
    if let Some(r) = rank.filter(|&r| r < 0) {
        // The rank count is the library's to work out with --nodes.
        let range = if ranks > 0 { format!("0..={}", ranks - 1) } else { "numbered from 0".to_string() };
        return Err(input(format!("--rank {r}: the run has ranks {range}")));
    }
    let big = |v: i128| u64::try_from(v).unwrap_or(u64::MAX);
    Ok((big(index), rank.map(big)))
}

fn spinner(msg: String, json: bool) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::with_draw_target(None, crate::output::progress_target(json));
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
    // Every output path, before any work: a long run never ends on a path it cannot write.
    for (flag, path) in [("--trace", &a.trace), ("--plot", &a.plot)] {
        if let Some(path) = path {
            crate::files::check_output_file(flag, path)?;
        }
    }
    if let Some(dir) = &a.output_dir {
        crate::files::check_output_dir("--output-dir", dir)?;
    }
    let p = params(a)?;
    if let Some(sweep) = &a.sweep {
        return sweep_rows(a, &p, sweep);
    }
    // With --elems, the whole configuration and its memory budget before any file is looked at.
    let early = match (a.elems, &a.input_dir) {
        (Some(e), Some(_)) if a.element.is_none() && !a.explain => Some(p.prepare(e)?),
        _ => None,
    };
    let files = a.input_dir.as_deref().map(|d| input_files(d, a.dtype)).transpose()?;
    let elems = match (a.elems, &files) {
        (Some(e), _) => e,
        // Without --elems, the element count follows rank 0's file (its length or its .npy
        // header only: nothing is read).
        (None, Some(f)) => f[0].1.elems,
        (None, None) => return Err(input("--elems is required without --input-dir")),
    };
    if let Some(index) = a.element {
        let (index, rank) = element_and_rank(index, a.rank, elems, p.ranks)?;
        // One element's story: the schedule for that element alone, no run (any size).
        let at: Vec<(PathBuf, u64)>;
        let inputs = match (&a.input_dir, &files) {
            (Some(d), Some(f)) => {
                // Every rank's file when the rank count is the library's to work out (--nodes).
                let ranks = if p.ranks > 0 { p.ranks as usize } else { f.len() };
                at = check_files((ranks, elems, a.dtype), d, f)?.iter().map(|(p, l)| (p.clone(), l.offset)).collect();
                api::StoryInputs::Files(&at)
            }
            _ => api::StoryInputs::Generated { seed: a.seed },
        };
        let s = p.element_story(elems, index, rank, inputs)?;
        if a.json {
            crate::print_json(&s.to_json());
        } else {
            crate::output::out!("{}", s.to_text());
        }
        return Ok(());
    }
    if a.explain {
        // The model only: every algorithm's time and the parameters, for any size (no budget);
        // seconds at thousands of ranks, so a spinner on a terminal meanwhile.
        let pb = spinner(format!("modelling {elems} elements per rank"), a.json);
        let e = p.explain(elems);
        pb.finish_and_clear();
        let e = e?;
        if a.json {
            crate::print_json(&e.to_json());
        } else {
            crate::output::out!("{}", e.to_text());
        }
        return Ok(());
    }
    // The whole configuration, the memory budget included, before any input is generated or read.
    let job = match early {
        Some(job) => job,
        None => p.prepare(elems)?,
    };
    #[cfg(feature = "mpi")]
    if under_mpi() {
        return crate::mpi_cmd::allreduce(a, &job);
    }
    // The trace's timeline (refused when it would hold too many packets) before anything runs.
    let timeline = a.trace.as_ref().map(|_| job.timeline()).transpose()?;
    let inputs = match (&a.input_dir, &files) {
        (Some(d), Some(f)) => read_inputs(job.config(), d, f)?,
        _ => job.generate_inputs(a.seed),
    };
    let pb = spinner(format!("{} over {} ranks", job.label(), job.config().ranks), a.json);
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
    let pb = indicatif::ProgressBar::with_draw_target(Some(jobs.len() as u64), crate::output::progress_target(a.json));
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
        let pb = indicatif::ProgressBar::with_draw_target(Some(runs), crate::output::progress_target(a.json));
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
    let pb = spinner(String::new(), a.json);
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
