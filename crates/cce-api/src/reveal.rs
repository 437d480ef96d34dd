//! `cce reveal`: the tree of any all-reduce, recovered from its own outputs
//! (cce-forensics' [`reveal`](cce_forensics::reveal): the masks, the trees, the classes, the
//! check), with the black boxes a user brings:
//!
//! - [`CommandBox`]: a shell command run once per run, `{in}` and `{out}` in it replaced by
//!   directories; it reads `{in}/rank{r}.bin` and writes `{out}/rank{r}.bin`;
//! - a plan for hardware cce cannot drive ([`write_plan`], [`continue_plan`]): each run's
//!   inputs in `DIR/run{k}/rank{r}.bin`, the outputs read back from `OUT/run{k}/rank{r}.bin`;
//! - any [`BlackBox`] of the caller's (the Python package's calls a Python function).
//!
//! This module, unlike the rest of the crate, touches files and starts processes: the black
//! box's contract is files and a command.
//!
//! ## Guarantees
//! - Sizes are checked against the memory budget before any input is made.
//! - A command that fails, times out, or writes a missing or mis-sized file is an error that
//!   names the run, the command and the file (and the command's last line of stderr); its
//!   process group is killed on a time-out.
//! - A plan is replayed from its files: the inputs of every run are made again and must equal
//!   the files in `DIR` (a plan of other sizes, or edited, is refused), so the answer is the one
//!   the runs support.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cce_forensics::reveal::Reveal;
/// The reveal's black-box trait and its answer, as cce-forensics defines them: a caller's black
/// box implements the trait, and the answer is rendered here.
pub use cce_forensics::reveal::{BlackBox, Class, RevealError, Revealed};
use cce_format::SdmaDtype;
use cce_numerics::NumType;

use crate::error::ApiError;

/// What to reveal: the black box's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RevealParams {
    /// Ranks (2..=64).
    pub ranks: u64,
    /// Elements per rank.
    pub elems: u64,
    /// The buffer dtype (fp32, bf16, fp16).
    pub dtype: SdmaDtype,
}

/// A reveal's answer, rendered by `to_json` / `to_text` (crate::render).
#[derive(Clone, Debug, PartialEq)]
pub struct RevealAnswer {
    /// The answer.
    pub revealed: Revealed,
    /// Where a plan's next run's inputs were written, when it wants one.
    pub next_run: Option<(u32, PathBuf)>,
    /// Seconds the whole reveal took, and the black box's share of them (its runs).
    pub seconds: Option<(f64, f64)>,
}

fn reveal_error(e: RevealError) -> ApiError {
    ApiError::Input(e.to_string())
}

impl RevealParams {
    /// The checked shape: ranks, elements, dtype; refused over the memory budget (every
    /// rank's inputs and outputs, and the check's evaluation: about 4 buffers) before anything
    /// is made.
    fn checked(&self) -> Result<(u32, usize, NumType), ApiError> {
        let t = NumType::from_sdma(self.dtype)?;
        let bytes = self.ranks.saturating_mul(self.elems).saturating_mul(t.size() as u64).saturating_mul(4);
        let budget = cce_collectives::collective::default_budget();
        if bytes > budget {
            return Err(ApiError::Input(format!(
                "the reveal of {} ranks x {} elements of {} needs about {bytes} bytes, over the memory budget of {budget}",
                self.ranks, self.elems, t
            )));
        }
        let ranks = u32::try_from(self.ranks).map_err(|_| reveal_error(RevealError::Ranks(u32::MAX)))?;
        let elems =
            usize::try_from(self.elems).map_err(|_| ApiError::Input(format!("{} elements: too many", self.elems)))?;
        Ok((ranks, elems, t))
    }

    /// A reveal in progress, its shape checked.
    fn start(&self) -> Result<Reveal, ApiError> {
        let (r, n, t) = self.checked()?;
        let mut reveal = Reveal::new(r, n, t).map_err(reveal_error)?;
        reveal.add_candidates(chunk_orders(self.ranks, self.dtype));
        Ok(reveal)
    }
}

/// Every distinct chunk order of cce's algorithms at `ranks` ranks (ring, kangaring, mesh, rdh;
/// accumulated in fp32 and in the buffer dtype), named by the algorithm: the listed orders a
/// class too short to measure every pair is found among, beside the families.
fn chunk_orders(ranks: u64, dtype: SdmaDtype) -> Vec<(String, cce_forensics::Rule)> {
    use cce_collectives::collective::{Algo, RedOp};
    let Ok(buffer) = NumType::from_sdma(dtype) else { return Vec::new() };
    let mut out: Vec<(String, cce_forensics::Rule)> = Vec::new();
    for algo in [Algo::Ring, Algo::KangaRing, Algo::Mesh, Algo::Rdh] {
        for accum in [NumType::F32, buffer] {
            let Some(sdma) = accum.to_sdma() else { continue };
            let p = crate::collective::AllreduceParams {
                accum: Some(sdma),
                ..crate::collective::AllreduceParams::new(
                    ranks,
                    crate::params::AlgoChoice::Algo(algo),
                    RedOp::Add,
                    dtype,
                )
            };
            // One element per chunk is enough to tell every chunk's story.
            let Ok(job) = p.prepare(ranks) else { continue };
            for (_, order) in job.orders().unwrap_or_default() {
                let rule = cce_forensics::Rule { order, accum };
                if !out.iter().any(|(_, r)| *r == rule) {
                    out.push((algo.name().to_string(), rule));
                }
            }
        }
    }
    out
}

/// Reveals `bb`'s order: runs it as often as the reveal needs (at most 2 + the number of
/// distinct outputs its ranks give; 3 when all ranks agree).
pub fn reveal(params: &RevealParams, bb: &mut dyn BlackBox) -> Result<RevealAnswer, ApiError> {
    let start = Instant::now();
    let mut in_box = Duration::ZERO;
    let mut r = params.start()?;
    while let Some(inputs) = r.next_inputs() {
        let t = Instant::now();
        let outputs = bb.run(r.runs() + 1, &inputs).map_err(reveal_error)?;
        in_box += t.elapsed();
        r.observe(outputs).map_err(reveal_error)?;
    }
    let mut a = answer(params, r.result());
    a.seconds = Some((start.elapsed().as_secs_f64(), in_box.as_secs_f64()));
    Ok(a)
}

/// The answer, every class's `equals` naming the cce algorithm whose element story gives
/// every class's order, where one does (else the family order cce-forensics found).
fn answer(params: &RevealParams, mut revealed: Revealed) -> RevealAnswer {
    if revealed.revealed && revealed.classes.iter().all(|c| c.rank.is_none()) {
        if let Some((name, segments)) = cce_algorithm(params, &revealed) {
            for c in &mut revealed.classes {
                c.equals = Some(name.clone());
                // Written as the element story writes it (the same bits: the merge key matched).
                let k = segments.partition_point(|(first, _)| *first <= c.first as u64).saturating_sub(1);
                if let Some((_, order)) = segments.get(k) {
                    c.order = order.clone();
                }
            }
        }
    }
    RevealAnswer { revealed, next_run: None, seconds: None }
}

/// The first of cce's algorithms (ring, kangaring, mesh, rdh; accumulated in fp32 or the
/// buffer dtype) whose documented order of every element gives the same bits as the revealed
/// classes' (by cce-forensics' merge key): its label and its element story's segments.
fn cce_algorithm(params: &RevealParams, r: &Revealed) -> Option<(String, Vec<(u64, cce_numerics::order::Order)>)> {
    use cce_collectives::collective::{Algo, RedOp};
    use cce_forensics::{Rounding, Rule, merge_key};
    let key = |o: &cce_numerics::order::Order, a: NumType| {
        merge_key(&Rule { order: o.clone(), accum: a }, r.dtype, Rounding::Rne)
    };
    let classes: Vec<(u64, u64, String)> =
        r.classes.iter().map(|c| (c.first as u64, c.last as u64, key(&c.order, c.accum))).collect();
    for algo in [Algo::Ring, Algo::KangaRing, Algo::Mesh, Algo::Rdh] {
        for accum in [NumType::F32, r.dtype] {
            let Some(sdma) = accum.to_sdma() else { continue };
            let p = crate::collective::AllreduceParams {
                accum: Some(sdma),
                ..crate::collective::AllreduceParams::new(
                    params.ranks,
                    crate::params::AlgoChoice::Algo(algo),
                    RedOp::Add,
                    params.dtype,
                )
            };
            let Ok(job) = p.prepare(params.elems) else { continue };
            let Ok(segments) = job.orders() else { continue };
            // Every story segment lies in classes of its order.
            let fits = !segments.is_empty()
                && segments.iter().enumerate().all(|(k, (first, order))| {
                    let last = segments.get(k + 1).map_or(params.elems, |s| s.0).saturating_sub(1);
                    let want = key(order, accum);
                    classes.iter().filter(|c| c.0 <= last && c.1 >= *first).all(|c| c.2 == want)
                });
            if fits {
                return Some((algo.name().to_string(), segments));
            }
        }
    }
    None
}

/// A shell command as the black box (module docs).
#[derive(Debug)]
pub struct CommandBox {
    command: String,
    scratch: PathBuf,
    timeout: Duration,
    ranks: usize,
}

impl CommandBox {
    /// `command` run by `sh -c`, each run in `scratch/run{k}/{in,out}` (made, and removed after
    /// the run is read), killed after `timeout`.
    pub fn new(command: &str, scratch: &Path, timeout: Duration, ranks: u64) -> Result<CommandBox, ApiError> {
        if !command.contains("{in}") || !command.contains("{out}") {
            return Err(ApiError::Input(format!(
                "`run` '{command}': the command must name {{in}} and {{out}} (the directories of the inputs and the outputs)"
            )));
        }
        Ok(CommandBox { command: command.to_string(), scratch: scratch.to_path_buf(), timeout, ranks: ranks as usize })
    }

    fn fail(&self, run: u32, what: String) -> RevealError {
        RevealError::BlackBox { run, message: what }
    }
}

/// `p` as one shell word.
fn shell_word(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,=:".contains(c)) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The last non-empty line of a command's stderr, shortened.
fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(nothing on stderr)").trim();
    line.chars().take(300).collect()
}

impl BlackBox for CommandBox {
    fn run(&mut self, run: u32, inputs: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, RevealError> {
        let dir = self.scratch.join(format!("run{run}"));
        let (din, dout) = (dir.join("in"), dir.join("out"));
        let io = |what: &str, p: &Path, e: std::io::Error| self.fail(run, format!("{what} {}: {e}", p.display()));
        for d in [&din, &dout] {
            std::fs::create_dir_all(d).map_err(|e| io("cannot make", d, e))?;
        }
        for (r, buf) in inputs.iter().enumerate() {
            let p = din.join(format!("rank{r}.bin"));
            std::fs::write(&p, buf).map_err(|e| io("cannot write", &p, e))?;
        }
        let line = self.command.replace("{in}", &shell_word(&din)).replace("{out}", &shell_word(&dout));
        let stderr = dir.join("stderr");
        let err_file = std::fs::File::create(&stderr).map_err(|e| io("cannot write", &stderr, e))?;
        let mut command = Command::new("sh");
        command.arg("-c").arg(&line).stdin(Stdio::null()).stdout(Stdio::null()).stderr(err_file);
        // Its own process group, so a time-out ends everything it started (unix; elsewhere
        // only the shell is ended).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|e| self.fail(run, format!("cannot start `sh -c {line}`: {e}")))?;
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() > self.timeout => {
                    // `-s KILL --`: procps-ng 4.0.2's kill reads `kill -KILL -PGID` as
                    // kill(-1, SIGKILL), every process the user may signal.
                    #[cfg(unix)]
                    let _ = Command::new("kill").args(["-s", "KILL", "--"]).arg(format!("-{}", child.id())).status();
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(self.fail(run, format!("`{line}` did not finish within {} s", self.timeout.as_secs())));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(self.fail(run, format!("waiting for `{line}`: {e}"))),
            }
        };
        let mut err_text = Vec::new();
        if let Ok(mut f) = std::fs::File::open(&stderr) {
            let _ = f.read_to_end(&mut err_text);
        }
        if !status.success() {
            return Err(self.fail(run, format!("`{line}` failed ({status}): {}", last_line(&err_text))));
        }
        let len = inputs.first().map_or(0, Vec::len);
        let outputs =
            read_outputs(&dout, self.ranks, len).map_err(|what| self.fail(run, format!("`{line}` {what}")))?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(outputs)
    }
}

/// Every rank's `rank{r}.bin` in `dir`, each `len` bytes, or what is wrong (for a message that
/// starts with the command or the directory).
fn read_outputs(dir: &Path, ranks: usize, len: usize) -> Result<Vec<Vec<u8>>, String> {
    (0..ranks)
        .map(|r| {
            let p = dir.join(format!("rank{r}.bin"));
            let got = std::fs::metadata(&p).map_err(|_| format!("wrote no {}", p.display()))?.len();
            if got != len as u64 {
                return Err(format!("wrote {} with {got} bytes; the inputs hold {len}", p.display()));
            }
            std::fs::read(&p).map_err(|e| format!("wrote {} that cannot be read: {e}", p.display()))
        })
        .collect()
}

/// What [`write_plan`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanWritten {
    /// The directory.
    pub dir: PathBuf,
    /// The runs whose inputs are there.
    pub runs: u32,
}

fn write_run(dir: &Path, run: u32, inputs: &[Vec<u8>]) -> Result<PathBuf, ApiError> {
    let d = dir.join(format!("run{run}"));
    std::fs::create_dir_all(&d).map_err(|e| ApiError::Input(format!("cannot make {}: {e}", d.display())))?;
    for (r, buf) in inputs.iter().enumerate() {
        let p = d.join(format!("rank{r}.bin"));
        std::fs::write(&p, buf).map_err(|e| ApiError::Input(format!("cannot write {}: {e}", p.display())))?;
    }
    Ok(d)
}

/// Writes run 1's inputs (`DIR/run1/rank{r}.bin`) and `DIR/README.md` on running them. The
/// later runs' inputs depend on what run 1 shows; [`continue_plan`] writes each when it is
/// wanted.
pub fn write_plan(params: &RevealParams, dir: &Path) -> Result<PlanWritten, ApiError> {
    let r = params.start()?;
    let inputs = r.next_inputs().unwrap_or_default();
    write_run(dir, 1, &inputs)?;
    let readme = dir.join("README.md");
    std::fs::write(&readme, crate::render::reveal_readme(params))
        .map_err(|e| ApiError::Input(format!("cannot write {}: {e}", readme.display())))?;
    Ok(PlanWritten { dir: dir.to_path_buf(), runs: 1 })
}

/// Replays a plan: every run whose outputs are in `observed/run{k}` is checked against the
/// inputs the reveal asks for (`input_dir/run{k}` must hold exactly them) and read; then either
/// the answer, or the next run's inputs written to `input_dir/run{k}` (`next_run`).
pub fn continue_plan(params: &RevealParams, input_dir: &Path, observed: &Path) -> Result<RevealAnswer, ApiError> {
    let mut r = params.start()?;
    while let Some(inputs) = r.next_inputs() {
        let k = r.runs() + 1;
        let out_dir = observed.join(format!("run{k}"));
        let in_dir = input_dir.join(format!("run{k}"));
        if !out_dir.is_dir() {
            if k == 1 {
                return Err(ApiError::Input(format!("{}: no outputs of run 1", out_dir.display())));
            }
            let written = write_run(input_dir, k, &inputs)?;
            return Ok(RevealAnswer { revealed: r.result(), next_run: Some((k, written)), seconds: None });
        }
        for (rank, buf) in inputs.iter().enumerate() {
            let p = in_dir.join(format!("rank{rank}.bin"));
            if std::fs::read(&p).ok().as_ref() != Some(buf) {
                return Err(ApiError::Input(format!(
                    "{}: not the input this reveal asks for in run {k} (a plan of other `ranks`, `elems` or `dtype`, or an edited file)",
                    p.display()
                )));
            }
        }
        let len = inputs.first().map_or(0, Vec::len);
        let outputs = read_outputs(&out_dir, inputs.len(), len).map_err(|what| {
            ApiError::Input(format!("{}: run {k}'s outputs: {}", observed.display(), what.trim_start_matches("wrote ")))
        })?;
        r.observe(outputs).map_err(reveal_error)?;
    }
    Ok(answer(params, r.result()))
}
