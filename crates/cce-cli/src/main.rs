//! `cce` — the command line of the cce project: parse, call the libraries, print.
//!
//! Exit codes: 0 success; 2 bad input (one line on stderr, nothing on stdout); 1 a run that
//! failed for a reason other than its input. The binary never panics on any input.
#![forbid(unsafe_code)]

mod allreduce_cmd;
mod args;
mod bench_cmd;
mod bits_cmd;
mod convert_cmd;
mod error;
mod reduce_cmd;
mod render;
mod ring_cmd;
mod values;

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
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cce: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let out = match cli.command {
        Command::Encode(a) => bits_cmd::encode(&a)?,
        Command::Decode(a) => bits_cmd::decode(&a)?,
        Command::Tables => bits_cmd::tables(),
        Command::PacketSize(a) => bits_cmd::packet_size(&a)?,
        Command::DtypeGate(a) => bits_cmd::dtype_gate(&a),
        Command::Build(a) => return ring_cmd::build(&a),
        Command::Disasm(a) => return ring_cmd::disasm(&a),
        Command::Bench(a) => return bench_cmd::bench(&a),
        Command::Reduce(a) => return reduce_cmd::reduce(&a),
        Command::Run(a) => return reduce_cmd::run(&a),
        Command::Convert(a) => return convert_cmd::convert(&a),
        Command::Allreduce(a) => return allreduce_cmd::allreduce(&a),
        Command::Demo(a) => return allreduce_cmd::demo(&a),
    };
    print_json(&out);
    Ok(())
}

/// Prints one JSON object on stdout.
pub(crate) fn print_json(v: &serde_json::Value) {
    // serde_json cannot fail on a Value with string keys.
    println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}
