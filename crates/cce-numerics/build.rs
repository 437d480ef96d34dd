//! Enables the AVX-512 kernel copy (`cfg(cce_avx512)`) when the compiler is new enough to
//! accept the `avx512*` target features (stable since Rust 1.89); older compilers within the
//! workspace's rust-version build the AVX2 and portable copies only.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cce_avx512)");
    println!("cargo::rerun-if-changed=build.rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("--version").output() else { return };
    let version = String::from_utf8_lossy(&out.stdout).into_owned();
    let minor = version.split_whitespace().nth(1).and_then(|v| v.split('.').nth(1)).and_then(|m| m.parse::<u32>().ok());
    if minor.is_some_and(|m| m >= 89) {
        println!("cargo::rustc-cfg=cce_avx512");
    }
}
