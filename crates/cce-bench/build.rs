//! Records the git commit the crate is built from (`CCE_GIT_COMMIT`, read by
//! `machine::Environment`) when the source is a git checkout and git is installed; a build
//! from a source archive has none, and the environment says so. Re-runs when `HEAD` moves.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) else { return };
    // HEAD names the branch; logs/HEAD grows on every commit, checkout and reset.
    for file in ["HEAD", "logs/HEAD"] {
        println!("cargo::rerun-if-changed={dir}/{file}");
    }
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
        println!("cargo::rustc-env=CCE_GIT_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    }
}
