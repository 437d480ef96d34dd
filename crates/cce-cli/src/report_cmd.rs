//! `cce report`: reports computed by the library, printed (and plotted) here.
//!
//! `cce report numerics` runs [`cce_api::collective::NumericsReport`] (the all-reduce error
//! against the rank count, bf16 RNE vs SR vs fp32) and prints it: a table, or with `--json`
//! [`cce_api::report::numerics_json`]; with `--plot FILE.svg` also
//! [`cce_api::report::numerics_chart`], written atomically (after the run: a refused size
//! writes nothing).
//!
//! `cce report model` prints [`cce_api::collective::model_report`] (every public measured
//! collective figure beside the time model's): a table, or with `--json`
//! [`cce_api::report::model_json`]; with `--plot FILE.svg` also [`cce_api::report::model_chart`].

use std::path::PathBuf;
use std::time::Duration;

use cce_api::collective::{NUMERICS_DEFAULT_ELEMS, NumericsReport, Params};
use cce_api::params::Inputs;
use cce_api::plot;

use crate::error::CliError;
use crate::files::write_atomic;

/// The reports `cce report` knows.
const REPORTS: [&str; 2] = ["numerics", "model"];

/// `cce report <REPORT>`.
#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// Which report: numerics (the all-reduce error against the rank count R = 2..64, or with
    /// --max-ranks up to 4096 for several orders: bf16 with round-to-nearest-even, bf16 with
    /// stochastic rounding, fp32).
    pub(crate) report: String,
    /// Elements per rank of each all-reduce (at least --max-ranks).
    #[arg(long, default_value_t = NUMERICS_DEFAULT_ELEMS, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// Seed of the inputs and of stochastic rounding.
    #[arg(long, default_value = "1", value_parser = cce_api::values::parse_u64)]
    pub(crate) seed: u64,
    /// The inputs: `correlated` (every rank within ±2 % of a value shared per element, as
    /// replicated or low-noise values are: RNE drifts, SR does not) or `uniform` (independent
    /// values in [-1, 1), as `cce allreduce` generates: neither drifts, SR's error is larger).
    #[arg(long, default_value = "correlated")]
    pub(crate) inputs: String,
    /// The largest R: 64 (the ring's rows), or a power of two up to 4096 — then every order's
    /// curve besides (the flat ring and RDH up to 1024, hier(ring/ring) and
    /// hier(kangaring/rdh) over nodes of 32), each with the law fitted to it.
    #[arg(long, default_value = "64", value_parser = cce_api::values::parse_u64)]
    pub(crate) max_ranks: u64,
    /// Also write the chart (error against R, log-log) as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn report(a: &ReportArgs) -> Result<(), CliError> {
    match a.report.as_str() {
        "numerics" => numerics(a),
        "model" => model(a),
        other => Err(CliError::Input(format!("unknown report '{other}' (expected one of: {})", REPORTS.join(" ")))),
    }
}

/// `cce report model`: every public measured point beside the model's figure (no run).
/// With `--plot FILE.svg`, also the chart: every table's measured and modelled times against the
/// bytes per rank.
fn model(a: &ReportArgs) -> Result<(), CliError> {
    if let Some(path) = &a.plot {
        crate::files::check_output_file("--plot", path)?;
    }
    let r = cce_api::collective::model_report();
    if let Some(path) = &a.plot {
        let svg = plot::svg(&cce_api::report::model_chart(&r))?;
        write_atomic(path, svg.as_bytes())?;
    }
    if a.json {
        crate::print_json(&cce_api::report::model_json(&r));
    } else {
        crate::output::out!("{}", cce_api::report::model_text(&r));
    }
    Ok(())
}

fn numerics(a: &ReportArgs) -> Result<(), CliError> {
    // The plot's path before anything runs (the report takes minutes at 4096 ranks).
    if let Some(path) = &a.plot {
        crate::files::check_output_file("--plot", path)?;
    }
    let inputs: Inputs = crate::args::named("--inputs", &a.inputs)?;
    let max_ranks = usize::try_from(a.max_ranks).unwrap_or(usize::MAX);
    let params = Params { elems: a.elems, seed: a.seed, inputs, max_ranks };
    // Bad sizes are refused before anything runs.
    let job = NumericsReport::prepare(&params)?;
    // Steps done of the total and the time so far, on a terminal only (indicatif draws nothing
    // off one), and never beside --json.
    let pb = indicatif::ProgressBar::with_draw_target(
        Some(job.all_reduces() as u64),
        crate::output::progress_target(a.json),
    );
    pb.set_style(
        indicatif::ProgressStyle::with_template("{bar:24} {pos}/{len} all-reduces, {msg} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    // Called before each all-reduce: the ones before it are done.
    let mut done = 0;
    let report = job.run(&mut |r, s| {
        pb.set_position(done);
        done += 1;
        pb.set_message(format!("R = {r}, {}", s.label()));
    });
    pb.finish_and_clear();
    let report = report?;
    if let Some(path) = &a.plot {
        let svg = plot::svg(&cce_api::report::numerics_chart(&report))?;
        write_atomic(path, svg.as_bytes())?;
    }
    if a.json {
        crate::print_json(&cce_api::report::numerics_json(&report));
    } else {
        crate::output::out!("{}", cce_api::report::numerics_text(&report));
    }
    Ok(())
}
