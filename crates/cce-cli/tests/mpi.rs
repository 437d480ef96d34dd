//! `mpirun -n P cce allreduce …` (feature `mpi`; needs Open MPI's `mpirun` on PATH): every
//! rank's output under 1–4 processes equals the single-process run's, bit for bit, for every
//! algorithm and five op / dtype / rounding configurations; a failure in one process, or a
//! process killed, ends the whole job, non-zero, naming the rank.
#![cfg(feature = "mpi")]

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tmp;

const CCE: &str = env!("CARGO_BIN_EXE_cce");

fn mpirun(n: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-n", &n.to_string(), CCE]);
    c
}

const CONFIGS: [(&str, &[&str]); 5] = [
    ("add-bf16-rne", &["--op", "add", "--dtype", "bf16"]),
    ("add-bf16-sr", &["--op", "add", "--dtype", "bf16", "--rounding", "sr", "--seed", "3"]),
    ("avg-fp32", &["--op", "avg", "--dtype", "fp32"]),
    ("max-fp16", &["--op", "max", "--dtype", "fp16"]),
    ("add-int32", &["--op", "add", "--dtype", "i32"]),
];

fn read_all(dir: &std::path::Path, ranks: usize) -> Vec<Vec<u8>> {
    (0..ranks).map(|r| std::fs::read(dir.join(format!("rank{r}.bin"))).unwrap_or_default()).collect()
}

#[test]
fn every_process_count_gives_the_single_process_bits() {
    let ranks = 8;
    for algo in ["ring", "ring-2r2w", "kangaring", "mesh", "rdh"] {
        for (name, flags) in CONFIGS {
            let base: Vec<&str> =
                [&["allreduce", "--ranks", "8", "--algo", algo, "--elems", "3001"][..], flags].concat();
            let one = tmp(&format!("mpi-{algo}-{name}-single"));
            let o =
                Command::new(CCE).args(&base).args(["--output-dir", one.to_str().unwrap(), "--json"]).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{algo} {name}: {}", String::from_utf8_lossy(&o.stderr));
            let single: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let want = read_all(&one, ranks);
            assert!(want.iter().all(|w| !w.is_empty()));
            for p in 1..=4 {
                let dir = tmp(&format!("mpi-{algo}-{name}-{p}"));
                let o =
                    mpirun(p).args(&base[..]).args(["--output-dir", dir.to_str().unwrap(), "--json"]).output().unwrap();
                let what = format!("{algo} {name} under mpirun -n {p}");
                assert_eq!(o.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&o.stderr));
                assert!(read_all(&dir, ranks) == want, "{what}: outputs differ from the single-process run");
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object from process 0");
                assert_eq!(v["processes"], p);
                assert_eq!(v["process_peak_bytes"].as_array().map(Vec::len), Some(p));
                assert_eq!(v["bytes_over_mpi"].as_u64().unwrap() == 0, p == 1, "{what}: {}", v["bytes_over_mpi"]);
                // The error keys, combined over the processes, are the single-process run's.
                for k in ["ranks_identical", "max_abs_err", "max_rel_err", "max_ulp_err", "wrong"] {
                    assert_eq!(v[k], single[k], "{what}: {k}");
                }
                let (a, b) = (v["mean_ulp_err"].as_f64().unwrap(), single["mean_ulp_err"].as_f64().unwrap());
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{what}: mean_ulp_err {a} vs {b}");
            }
        }
    }
}

#[test]
fn a_failure_in_one_process_ends_the_job_naming_the_rank() {
    let dir = tmp("mpi-fail");
    let t = Instant::now();
    let o = mpirun(4)
        .args(["allreduce", "--ranks", "8", "--algo", "ring", "--op", "add", "--dtype", "bf16", "--elems", "4096"])
        .args(["--fail-rank", "5", "--fail-step", "2", "--timeout", "20", "--output-dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("rank 5 failed at step 2"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "ended after {:?}", t.elapsed());
    assert!(!dir.exists() || read_all(&dir, 8).iter().all(Vec::is_empty), "outputs presented as results");
}

/// Starts an 8-rank job on 4 processes, SIGKILLs one of them `delay` after all four run, and
/// returns (the killed process's index, how long the job outlived it, its status, its stderr).
fn kill_one_process(seed: &str, delay: Duration) -> (usize, Duration, Option<i32>, String) {
    let job = mpirun(4)
        .args(["allreduce", "--ranks", "8", "--algo", "ring", "--op", "add", "--dtype", "bf16"])
        .args(["--elems", "16777216", "--seed", seed, "--timeout", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let (victim, process) = loop {
        let procs: Vec<(u32, usize)> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                if !(cmd.starts_with(CCE) && cmd.contains(&format!("--seed {seed} "))) {
                    return None;
                }
                // Its MPI process index, from the launcher's environment.
                let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                let env = String::from_utf8_lossy(&env).into_owned();
                let rank = env.split('\0').find_map(|v| v.strip_prefix("OMPI_COMM_WORLD_RANK="))?;
                Some((pid, rank.parse().ok()?))
            })
            .collect();
        if procs.len() == 4 {
            break procs[2];
        }
        assert!(t.elapsed() < Duration::from_secs(30), "the job never started its processes");
        std::thread::sleep(Duration::from_millis(20));
    };
    // The kill lands inside the steps: wait until the victim runs its ranks (their threads,
    // named `rank<i>`, start with the first run, after MPI is up and the inputs are made), then
    // `delay` more. (A kill during MPI's start-up can leave Open MPI's mpirun waiting forever.)
    let running = || {
        std::fs::read_dir(format!("/proc/{victim}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("rank")))
    };
    while !running() {
        assert!(t.elapsed() < Duration::from_secs(60), "the process to kill never started its ranks");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(delay);
    assert!(Command::new("kill").args(["-9", &victim.to_string()]).status().unwrap().success());
    let t = Instant::now();
    // Read the launcher's stderr on the side, and give the job a deadline rather than waiting
    // for it forever.
    let mut job = job;
    let mut stderr = job.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let code = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status.code();
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = job.kill();
            let _ = job.wait();
            panic!("the job outlived its killed process by more than 60 s: {}", reader.join().unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let outlived = t.elapsed();
    (process, outlived, code, reader.join().unwrap_or_default())
}

#[test]
fn a_killed_process_ends_the_job() {
    // The kill must land while the ranks run their steps for a survivor to name the lost rank;
    // where this machine's speed puts it before or after them (the delay counts from the
    // victim's first step), try again earlier or later.
    let mut delay = Duration::from_millis(50);
    let mut last = String::new();
    for attempt in 0..6 {
        let (process, outlived, code, err) = kill_one_process(&format!("91827{attempt}"), delay);
        assert!(outlived < Duration::from_secs(30), "the job outlived its killed process by {outlived:?}");
        assert_ne!(code, Some(0), "{err}");
        assert!(err.contains("signal 9") || err.contains("Killed") || err.contains("killed"), "{err}");
        last.clone_from(&err);
        if !err.contains("stopped by the launcher") {
            // The others had finished (or had not yet started) when the kill landed: try again
            // sooner.
            delay /= 3;
        } else if err.contains("before its ranks' first step") && !err.contains("waited at step") {
            delay += Duration::from_millis(400);
        } else if err.contains("after its ranks' last step") && !err.contains("waited at step") {
            delay /= 3;
        } else {
            // A survivor names a rank of the killed process (8 ranks over 4: process p holds
            // 2p and 2p+1) as the one whose messages never came. (Where every survivor was
            // still computing, or waited for another survivor, when the launcher stopped it,
            // none can: try again.)
            let lost = [2 * process, 2 * process + 1].map(|q| format!("for rank {q} (process {process})"));
            if lost.iter().any(|l| err.contains(l)) {
                return;
            }
        }
    }
    panic!("no kill landed while the ranks ran their steps, or no survivor named the killed process's ranks: {last}");
}

#[test]
fn mpi_refusals() {
    let run = |n: usize, extra: &[&str]| {
        let o = mpirun(n)
            .args(["allreduce", "--algo", "ring", "--op", "add", "--dtype", "bf16"])
            .args(extra)
            .output()
            .unwrap();
        assert_ne!(o.status.code(), Some(0), "{extra:?}");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    assert!(run(2, &["--ranks", "4", "--sweep", "1024:4096"]).contains("--sweep does not run under MPI"));
    let err = run(2, &["--ranks", "4", "--elems", "64", "--compress", "gce"]);
    assert!(err.contains("--compress does not run under MPI yet"), "{err}");
    assert!(run(3, &["--ranks", "2", "--elems", "64"]).contains("3 processes for 2 ranks: at most one per rank"));
    let dir = tmp("mpi-short-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rank0.bin"), [0u8; 128]).unwrap();
    std::fs::write(dir.join("rank1.bin"), [0u8; 64]).unwrap();
    let err = run(2, &["--ranks", "2", "--elems", "64", "--input-dir", dir.to_str().unwrap(), "--timeout", "5"]);
    assert!(err.contains("rank 1's input has 64 bytes, expected 128"), "{err}");
}

/// A user's MSCCL XML schedule (docs/MODEL.md X13) under 2 and 4 processes: the bytes of the
/// single-process run, for a ring and a hierarchical schedule that rewrites its buffers in
/// place (so a chunk is read in one version and later another).
#[test]
fn msccl_schedules_give_the_single_process_bits_over_mpi() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/msccl_gen.py");
    for (algo, place) in
        [("ring-allreduce", "--inplace"), ("hier-allreduce", "--inplace"), ("allpairs-allreduce", "--outofplace")]
    {
        let xml = tmp(&format!("mpi-{algo}.xml"));
        let g = Command::new("python3").args([script, algo, "8", place, "-o", xml.to_str().unwrap()]).output().unwrap();
        assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
        let base = [
            "allreduce",
            "--algo-file",
            xml.to_str().unwrap(),
            "--op",
            "add",
            "--dtype",
            "bf16",
            "--elems",
            "4096",
            "--rounding",
            "sr",
            "--seed",
            "5",
        ];
        let one = tmp(&format!("mpi-{algo}-single"));
        let o = Command::new(CCE).args(base).args(["--output-dir", one.to_str().unwrap()]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{algo}: {}", String::from_utf8_lossy(&o.stderr));
        let want = read_all(&one, 8);
        for p in [2, 4] {
            let dir = tmp(&format!("mpi-{algo}-{p}"));
            let o = mpirun(p).args(base).args(["--output-dir", dir.to_str().unwrap(), "--json"]).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{algo} -n {p}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(read_all(&dir, 8) == want, "{algo} under mpirun -n {p}: outputs differ from one process");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
            assert_eq!(v["algo"], "file");
            assert!(v["algorithm_name"].as_str().is_some_and(|n| n.starts_with(algo)), "{v}");
            assert!(v["bytes_over_mpi"].as_u64().unwrap() > 0);
        }
    }
}

/// A hierarchy with a node per process (`mpirun -n X`) and with two nodes per process gives the
/// single process's bits on every rank, for every intra algorithm, with stochastic rounding; and
/// a process holds its own ranks only (its model peak well under the single process's).
#[test]
fn a_hierarchy_with_a_node_per_process_gives_the_single_process_bits() {
    let (nodes, per_node) = (4, 8);
    let ranks = nodes * per_node;
    for intra in ["ring", "kangaring", "mesh", "rdh"] {
        let base: Vec<String> = [
            "allreduce",
            "--nodes",
            "4",
            "--ranks-per-node",
            "8",
            "--algo",
            "hier",
            "--intra",
            intra,
            "--inter",
            "rdh",
            "--op",
            "add",
            "--dtype",
            "bf16",
            "--rounding",
            "sr",
            "--seed",
            "5",
            "--elems",
            "4099",
        ]
        .map(String::from)
        .to_vec();
        let one = tmp(&format!("mpi-hier-{intra}-single"));
        let o = Command::new(CCE).args(&base).args(["--output-dir", one.to_str().unwrap(), "--json"]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{intra}: {}", String::from_utf8_lossy(&o.stderr));
        let single: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let want = read_all(&one, ranks);
        assert!(want.iter().all(|w| !w.is_empty()));
        for p in [2, 4] {
            let dir = tmp(&format!("mpi-hier-{intra}-{p}"));
            let o = mpirun(p).args(&base).args(["--output-dir", dir.to_str().unwrap(), "--json"]).output().unwrap();
            let what = format!("hier({intra}/rdh) under mpirun -n {p}");
            assert_eq!(o.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(read_all(&dir, ranks) == want, "{what}: outputs differ from the single-process run");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let peaks: Vec<u64> =
                v["process_peak_bytes"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).collect();
            let whole = single["model_peak_bytes"].as_u64().unwrap();
            assert!(peaks.iter().all(|&b| b > 0 && b < whole), "{what}: {peaks:?} against {whole}");
        }
    }
}
