//! Runs the `cce bench numerics` jobs: `cargo run --release -p cce-bench --example
//! numerics_bench -- [MiB per source | NK (KiB)] [avx2 | portable] [--json]`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut bytes: usize = 64 << 20;
    for a in &args {
        if let Some(k) = a.strip_suffix('K') {
            bytes = k.parse::<usize>().unwrap_or(64) << 10;
        } else if let Ok(m) = a.parse::<usize>() {
            bytes = m << 20;
        }
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = if all > 1 { vec![1, all] } else { vec![1] };
    let reps = if bytes < (1 << 20) { 200 } else { 5 };
    let max_isa = if args.iter().any(|a| a == "portable") {
        cce_numerics::Isa::Portable
    } else if args.iter().any(|a| a == "avx2") {
        cce_numerics::Isa::Avx2
    } else {
        cce_numerics::Isa::Avx512
    };
    let report = cce_numerics::bench::run_numerics_bench_at(bytes, &threads, reps, max_isa);
    if args.iter().any(|a| a == "--json") {
        let bench = cce_bench::numerics::NumericsBench::from(report);
        println!("{}", serde_json::to_string(&bench).expect("a bench report serialises"));
    } else {
        print!("{}", report.to_table());
    }
}
