//! `cce reveal`: the arguments, the scratch directory of a command's runs, and printing; the
//! reveal, its black boxes and its plan are cce-api's ([`cce_api::reveal`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use cce_api::ApiError;
use cce_api::reveal::{self as api, CommandBox, RevealAnswer, RevealParams};

use crate::error::CliError;

/// `cce reveal` (see its help).
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Black box: --run 'CMD' is run by sh as often as the reveal needs (3 times when every rank's \
output is the same), {in} and {out} replaced by directories: it reads {in}/rank{r}.bin and writes \
{out}/rank{r}.bin (raw little-endian elements, r = 0..R-1), e.g. \
'mpirun -n 8 python my_allreduce.py {in} {out}'. For hardware cce cannot run: --plan DIR writes \
run 1's inputs and a README; --input-dir DIR --observed OUT reads OUT/run{k}/rank{r}.bin back and \
writes the next run's inputs when it wants one. \
Exit 0 revealed; 1 not revealed (or a plan that wants another run), with one line saying why; 2 on \
bad input (a command that fails or writes the wrong files included).")]
pub(crate) struct RevealArgs {
    /// The black box: a shell command with {in} and {out} in it.
    #[arg(long, value_name = "CMD", conflicts_with_all = ["plan", "input_dir"], required_unless_present_any = ["plan", "input_dir"])]
    pub(crate) run: Option<String>,
    /// Write run 1's inputs (DIR/run1/rank{r}.bin) and DIR/README.md for hardware cce cannot
    /// run; DIR must be empty or new unless --force.
    #[arg(long, value_name = "DIR", conflicts_with = "input_dir")]
    pub(crate) plan: Option<PathBuf>,
    /// A plan's directory (its runs' inputs), with --observed.
    #[arg(long, value_name = "DIR", requires = "observed")]
    pub(crate) input_dir: Option<PathBuf>,
    /// The plan's outputs: OUT/run{k}/rank{r}.bin.
    #[arg(long, value_name = "OUT", requires = "input_dir")]
    pub(crate) observed: Option<PathBuf>,
    /// Ranks of the all-reduce (2 to 64).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) ranks: u64,
    /// Elements per rank. A class of elements that shares a tree is rebuilt from its masks when
    /// it holds R(R-1)/2 elements, else found among the listed orders (families, cce's
    /// algorithms).
    #[arg(long, value_parser = cce_api::values::parse_u64)]
    pub(crate) elems: u64,
    /// Buffer dtype: fp32, bf16 or fp16.
    #[arg(long, value_parser = cce_api::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_api::SdmaDtype,
    /// Seconds one run of --run may take before it is killed.
    #[arg(long, default_value = "600", value_parser = cce_api::values::parse_u64)]
    pub(crate) timeout: u64,
    /// Where --run's runs keep their files (each run's removed once read); default: a new
    /// directory under the system's temporary directory, removed at the end.
    #[arg(long, value_name = "DIR")]
    pub(crate) work_dir: Option<PathBuf>,
    /// With --plan: write into a directory that already holds files.
    #[arg(long, requires = "plan")]
    pub(crate) force: bool,
    /// One JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also draw every distinct tree (at most 16) as an SVG document in FILE; checked writable
    /// before the black box first runs.
    #[arg(long, value_name = "FILE", conflicts_with = "plan")]
    pub(crate) plot: Option<PathBuf>,
}

/// A scratch directory removed when dropped (unless the user named it).
struct Scratch {
    path: PathBuf,
    remove: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn scratch(a: &RevealArgs) -> Result<Scratch, CliError> {
    if let Some(p) = &a.work_dir {
        std::fs::create_dir_all(p).map_err(CliError::io(p))?;
        return Ok(Scratch { path: p.clone(), remove: false });
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let p = std::env::temp_dir().join(format!("cce-reveal-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&p).map_err(CliError::io(&p))?;
    Ok(Scratch { path: p, remove: true })
}

pub(crate) fn reveal(a: &RevealArgs) -> Result<(), CliError> {
    let params = RevealParams { ranks: a.ranks, elems: a.elems, dtype: a.dtype };
    if let Some(dir) = &a.plan {
        return plan(a, &params, dir);
    }
    if let Some(path) = &a.plot {
        crate::files::check_output_file("--plot", path)?;
    }
    let answer = match (&a.run, &a.input_dir, &a.observed) {
        (Some(cmd), _, _) => {
            let work = scratch(a)?;
            let mut bb = CommandBox::new(cmd, &work.path, Duration::from_secs(a.timeout.max(1)), a.ranks)?;
            api::reveal(&params, &mut bb)?
        }
        (None, Some(input), Some(observed)) => api::continue_plan(&params, input, observed)?,
        _ => return Err(CliError::Input("give --run 'CMD', --plan DIR, or --input-dir DIR --observed OUT".into())),
    };
    print(a, &answer)
}

fn print(a: &RevealArgs, answer: &RevealAnswer) -> Result<(), CliError> {
    if let Some(path) = &a.plot {
        crate::files::write_atomic(path, answer.to_svg().as_bytes())?;
    }
    if a.json {
        crate::print_json(&answer.to_json());
    } else {
        crate::output::out!("{}", answer.to_text());
    }
    let r = &answer.revealed;
    if let Some((k, dir)) = &answer.next_run {
        return Err(CliError::Api(ApiError::Failed(format!(
            "the reveal wants run {k}: its inputs are in {}",
            dir.display()
        ))));
    }
    if !r.revealed {
        return Err(CliError::Api(ApiError::Failed(format!(
            "not revealed: {}",
            r.reason.as_deref().unwrap_or("no reason given")
        ))));
    }
    Ok(())
}

fn plan(a: &RevealArgs, params: &RevealParams, dir: &Path) -> Result<(), CliError> {
    crate::files::empty_or_forced("--plan", dir, a.force)?;
    let written = api::write_plan(params, dir)?;
    let shown = written.dir.display();
    let line = format!(
        "plan: run 1's inputs in {shown}/run1/rank{{0..{}}}.bin; run your all-reduce on them into OUT/run1/rank{{r}}.bin, then: cce reveal --input-dir {shown} --observed OUT --ranks {} --elems {} --dtype {} (see {shown}/README.md)",
        a.ranks - 1,
        a.ranks,
        a.elems,
        a.dtype.name()
    );
    if a.json {
        crate::print_json(
            &serde_json::json!({"plan": shown.to_string(), "runs": written.runs, "readme": format!("{shown}/README.md")}),
        );
    } else {
        crate::output::outln!("{line}");
    }
    Ok(())
}
