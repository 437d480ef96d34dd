//! `cce reveal --timeout`: a run past its time is refused naming the run, and the command's
//! whole process group is killed — its children too, and nothing else.

mod common;

use common::{cce, tmp};

/// The state letter of process `pid` (`None` once it is gone).
fn state(pid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

#[test]
fn a_run_past_its_timeout_is_killed_with_its_children() {
    let pidfile = tmp("reveal-sleep.pid");
    let _ = std::fs::remove_file(&pidfile);
    let run = format!("sleep 30 & echo $! > '{}'; wait # {{in}} {{out}}", pidfile.display());
    let o = cce(&["reveal", "--run", &run, "--timeout", "1", "--ranks", "4", "--elems", "64", "--dtype", "bf16"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("run 1: `sleep 30 & echo") && err.contains("did not finish within 1 s"), "{err}");
    let pid = std::fs::read_to_string(&pidfile).expect("the command started its child");
    // The child was killed with its group: gone, or a zombie not yet reaped; never running.
    let s = state(pid.trim());
    assert!(s.is_none() || s == Some('Z'), "the command's child {} is still {s:?}", pid.trim());
    // This test process (outside the group) is alive to assert it.
    assert!(state(&std::process::id().to_string()).is_some());
}
