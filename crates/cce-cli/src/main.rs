//! `cce` — the command line of the cce project: parse (clap), call the library API
//! (`cce-api`), print.
//!
//! Output: text for humans by default; with `--json`, exactly one JSON object on one line
//! ([`output`]). Exit codes: 0 success; 2 bad input (one line on stderr, nothing on stdout); 1 a
//! run that failed for a reason other than its input. The binary never panics on any input.
#![forbid(unsafe_code)]

mod algo_cmd;
mod allreduce_cmd;
mod args;
mod bench_cmd;
mod bits_cmd;
mod convert_cmd;
mod error;
mod files;
mod gen_cmd;
mod identify_cmd;
#[cfg(feature = "mpi")]
mod mpi_cmd;
mod output;
mod reduce_cmd;
mod report_cmd;
mod repro_cmd;
mod reveal_cmd;
mod ring_cmd;
mod ring_input;
mod value_cmd;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::error::CliError;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return error::clap_exit(e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Clap(e)) => error::clap_exit(e),
        Err(CliError::Help(text)) => {
            crate::output::out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cce: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Encode(a) => {
            let (v, json) = bits_cmd::encode(&a)?;
            output::emit(&v, json, cce_api::Encoded::to_text);
        }
        Command::Decode(a) => {
            output::emit(&cce_api::decode(&a.encoder, &a.hex.join(""))?, a.json, cce_api::Decoded::to_text);
        }
        Command::Tables(a) => output::emit(&cce_api::tables(), a.json, cce_api::Tables::to_text),
        Command::PacketSize(a) => {
            let size = cce_api::packet_size(a.dtype, a.elems, a.prio, a.cap)?;
            output::emit(&size, a.json, cce_api::PacketSize::to_text);
        }
        Command::DtypeGate(a) => {
            let gate = cce_api::dtype_gate(a.in_dt, a.out_dt, !a.no_compute);
            output::emit(&gate, a.json, cce_api::DtypeGate::to_text);
        }
        Command::Build(a) => ring_cmd::build(&a)?,
        Command::Disasm(a) => ring_cmd::disasm(&a)?,
        Command::Bench(a) => bench_cmd::bench(&a)?,
        Command::Reduce(a) => reduce_cmd::reduce(&a)?,
        Command::Run(a) => reduce_cmd::run(&a)?,
        Command::Convert(a) => convert_cmd::convert(&a)?,
        Command::Gen(a) => gen_cmd::generate(&a)?,
        Command::Value(a) => value_cmd::value(&a)?,
        Command::Allreduce(a) => allreduce_cmd::allreduce(&a)?,
        Command::Algo(a) => algo_cmd::algo(&a)?,
        Command::Report(a) => report_cmd::report(&a)?,
        Command::Demo(a) => allreduce_cmd::demo(&a)?,
        Command::Identify(a) => identify_cmd::identify(&a)?,
        Command::Repro(a) => repro_cmd::repro(&a)?,
        Command::Reveal(a) => reveal_cmd::reveal(&a)?,
    }
    Ok(())
}

/// Prints one JSON object on one line of stdout (see [`output`]).
pub(crate) fn print_json(v: &serde_json::Value) {
    output::print_json(v);
}
