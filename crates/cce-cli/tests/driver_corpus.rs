//! `cce run` on rings built the way the public Neuron driver builds plain memory-to-memory
//! copies (aws-neuron-driver `udma/udma.h`, `udma/udma_m2m.c`; GAPS.md §12). The rings come from
//! scripts/driver_corpus.py, which works only from those facts and never reads the engine's code.
//! There are single copies, copies cut into 64 KiB chunks, the barrier each arch puts on the
//! last chunk, INT_EN, the page-list path, raw rings at every phase with short tails, version-2
//! ring dumps that wrap over several laps, and several queues at once. Every destination starts
//! as the bitwise NOT of its source, and must end as the bytes the script expects, byte for
//! byte. Needs python3 (standard library only).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// One case of the manifest: its name, the arguments after `cce run` and its (dump, expect) pairs.
struct Case {
    name: String,
    args: Vec<String>,
    checks: Vec<(String, String)>,
}

fn parse_addr(s: &str) -> u64 {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|e| panic!("bad address {s:?}: {e}"))
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn parse_case(v: &Value) -> Case {
    let name = v["name"].as_str().expect("case name").to_string();
    let args = v["args"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: args"))
        .iter()
        .map(|a| a.as_str().unwrap_or_else(|| panic!("{name}: an argument is not a string")).to_string())
        .collect();
    let checks: Vec<(String, String)> = v["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: checks"))
        .iter()
        .map(|c| (c["dump"].as_str().unwrap().to_string(), c["expect"].as_str().unwrap().to_string()))
        .collect();
    assert!(!checks.is_empty(), "{name}: a case without checks");
    Case { name, args, checks }
}

/// The corpus must not pass on an engine that does nothing: for every case, the bytes its
/// `--load`s put in some dumped range (zero where nothing is loaded) differ from what is
/// expected there. Also checks that every check names a `--dump` of the right length.
fn assert_not_a_no_op(dir: &Path, case: &Case) {
    let mut loads: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut dumps: Vec<(u64, usize, String)> = Vec::new();
    let mut it = case.args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--load" => {
                let spec = it.next().expect("--load value");
                let (addr, file) = spec.split_once('=').expect("--load ADDR=FILE");
                loads.push((parse_addr(addr), read(dir, file)));
            }
            "--dump" => {
                let spec = it.next().expect("--dump value");
                let (range, file) = spec.split_once('=').expect("--dump ADDR:LEN=FILE");
                let (addr, len) = range.split_once(':').expect("--dump ADDR:LEN=FILE");
                dumps.push((parse_addr(addr), len.parse().expect("dump length"), file.to_string()));
            }
            _ => {}
        }
    }
    let mut differs = false;
    for (dump, expect) in &case.checks {
        let &(addr, len, _) =
            dumps.iter().find(|d| &d.2 == dump).unwrap_or_else(|| panic!("{}: check {dump} has no --dump", case.name));
        let want = read(dir, expect);
        assert_eq!(want.len(), len, "{}: {expect} is not as long as the dump {dump}", case.name);
        let mut initial = vec![0u8; len];
        for (at, bytes) in &loads {
            let lo = addr.max(*at);
            let hi = (addr + len as u64).min(at + bytes.len() as u64);
            if lo < hi {
                initial[(lo - addr) as usize..(hi - addr) as usize]
                    .copy_from_slice(&bytes[(lo - at) as usize..(hi - at) as usize]);
            }
        }
        differs |= initial != want;
    }
    assert!(differs, "{}: every expected dump equals the memory before the run", case.name);
}

/// Runs one case and returns what went wrong, if anything. Dumps that match are removed.
fn run_case(dir: &Path, case: &Case) -> Option<String> {
    for (dump, _) in &case.checks {
        let _ = std::fs::remove_file(dir.join(dump));
    }
    let out =
        Command::new(env!("CARGO_BIN_EXE_cce")).arg("run").args(&case.args).current_dir(dir).output().expect("run cce");
    if !out.status.success() {
        return Some(format!(
            "{}: `cce run` exited with {:?}\n  args: {}\n  stderr: {}",
            case.name,
            out.status.code(),
            case.args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    let mut problems = Vec::new();
    for (dump, expect) in &case.checks {
        let Ok(got) = std::fs::read(dir.join(dump)) else {
            problems.push(format!("{}: exit 0 but no dump {dump}", case.name));
            continue;
        };
        let want = read(dir, expect);
        if got == want {
            let _ = std::fs::remove_file(dir.join(dump));
            continue;
        }
        let first = got.iter().zip(&want).position(|(g, w)| g != w).unwrap_or(got.len().min(want.len()));
        let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        problems.push(format!(
            "{}: {dump} differs from {expect}: {} bytes vs {} expected, {wrong} bytes differ, the first at \
             offset {first} (got {:02x?}, want {:02x?})",
            case.name,
            got.len(),
            want.len(),
            got.get(first),
            want.get(first)
        ));
    }
    if problems.is_empty() { None } else { Some(problems.join("\n")) }
}

#[test]
fn driver_built_rings_copy_bit_exact() {
    let dir: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("driver_corpus");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("remove the old corpus");
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/driver_corpus.py");
    let out = Command::new("python3").arg(script).arg(&dir).output().expect("python3 is needed for the corpus");
    assert!(
        out.status.success(),
        "scripts/driver_corpus.py failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest.json")).expect("JSON");
    let cases: Vec<Case> = manifest.as_array().expect("the manifest is a list").iter().map(parse_case).collect();
    assert!(cases.len() >= 30, "only {} cases in the manifest", cases.len());
    std::fs::create_dir_all(dir.join("dumps")).unwrap();
    for case in &cases {
        assert_not_a_no_op(&dir, case);
    }

    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(case) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Some(problem) = run_case(&dir, case) {
                        failures.lock().unwrap().push(problem);
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} driver-built cases failed (files in {}):\n{}",
        failures.len(),
        cases.len(),
        dir.display(),
        failures.join("\n")
    );
}
