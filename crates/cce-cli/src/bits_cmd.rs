//! `cce encode`: the encoder's fields as flags (built from [`cce_api::encoder_fields`], so
//! `--help` lists each field's bits, tag and note), parsed by clap, encoded by the library.

use clap::{Arg, ArgAction, Command};

use crate::args::EncodeArgs;
use crate::error::CliError;

/// One field's flag: its value parser and help, from the library's field listing.
fn field_arg(f: cce_api::FieldInfo) -> Arg {
    let kind = f.value;
    let arg = Arg::new(f.name)
        .long(f.name)
        .action(ArgAction::Set)
        .help(f.help())
        .value_name(kind.value_name())
        .value_parser(move |s: &str| kind.parse(s));
    if kind == cce_api::ValueKind::Float { arg.allow_negative_numbers(true) } else { arg }
}

/// The encoded words and whether `--json` was given (it sits among the encoder's fields).
pub(crate) fn encode(a: &EncodeArgs) -> Result<(cce_api::Encoded, bool), CliError> {
    if matches!(a.encoder.as_str(), "-h" | "--help" | "help") {
        let mut cmd = cce_api::encoders().fold(
            Command::new("cce encode").about("Encode a meta-control word or a 16-byte descriptor from its fields"),
            |c, e| c.subcommand(Command::new(e.name).about(e.source)),
        );
        return Err(CliError::Help(cmd.render_help().to_string()));
    }
    let encoder = cce_api::encoder(&a.encoder)?;
    let fields = encoder.fields();
    let names: Vec<&'static str> = fields.iter().map(|f| f.name).collect();
    let cmd = fields.into_iter().fold(
        Command::new(encoder.name)
            .no_binary_name(true)
            .bin_name(format!("cce encode {}", encoder.name))
            .about(encoder.source)
            .arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("One JSON object instead of text")),
        |c, f| c.arg(field_arg(f)),
    );
    let m = cmd.try_get_matches_from(&a.fields).map_err(CliError::Clap)?;
    let given: Vec<(&str, u64)> = names.iter().filter_map(|n| m.get_one::<u64>(n).map(|v| (*n, *v))).collect();
    Ok((cce_api::encode_values(encoder.name, &given)?, m.get_flag("json")))
}
