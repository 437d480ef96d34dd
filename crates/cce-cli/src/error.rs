//! The CLI's errors: its own (flags, files, clap) and the library's ([`ApiError`], whose
//! exit-code policy it keeps).

use std::process::ExitCode;

use cce_api::ApiError;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// Bad input the command line itself names (flags, files): exit 2.
    #[error("{0}")]
    Input(String),
    /// Help text that a command produced instead of a result: stdout, exit 0.
    #[error("{0}")]
    Help(String),
    /// What the library refused or a run that failed: its exit code ([`ApiError::exit_code`]),
    /// its message as [`api_message`] spells it.
    #[error("{}", api_message(.0))]
    Api(#[from] ApiError),
    /// A ring dump file that cannot be read, by its path: exit 2.
    #[error("{path}: {source}")]
    RingFileAt {
        /// The file.
        path: String,
        /// Why.
        source: cce_api::ringfile::RingFileError,
    },
    /// A file that cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A sub-command's own argument parser (help included).
    #[error("{}", clap_line(.0))]
    Clap(clap::Error),
}

/// The library errors a command passes on with `?`, through [`ApiError`].
macro_rules! via_api {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                CliError::Api(e.into())
            }
        }
    )*};
}

via_api!(
    cce_api::error::FormatError,
    cce_api::error::HostError,
    cce_api::error::PathError,
    cce_api::error::CollectiveError,
    cce_api::ringfile::RingFileError
);

impl CliError {
    /// A ring dump at `path` that `RingFile::parse` refused.
    pub(crate) fn ring_file(path: &std::path::Path, source: cce_api::ringfile::RingFileError) -> CliError {
        CliError::RingFileAt { path: path.display().to_string(), source }
    }

    /// `path`'s I/O error.
    pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> CliError + '_ {
        move |source| CliError::Io { path: path.display().to_string(), source }
    }

    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Help(_) => 0,
            CliError::Api(e) => e.exit_code(),
            CliError::Input(_) | CliError::Clap(_) | CliError::RingFileAt { .. } | CliError::Io { .. } => 2,
        }
    }
}

/// A library message as the CLI prints it: every parameter it names (`` `seed` ``) as the
/// CLI's flag (`--seed`, [`cce_api::render::flag`]).
pub(crate) fn api_message(e: &ApiError) -> String {
    e.message_with(cce_api::render::flag)
}

/// Turns a clap error into the CLI's policy: help and version print as usual and exit 0;
/// anything else is one line on stderr and exit 2.
pub(crate) fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            eprintln!("cce: {}", clap_line(&e));
            ExitCode::from(2)
        }
    }
}

/// A clap error as one complete line: every missing argument by its flag, and clap's
/// "did you mean" suggestion kept.
pub(crate) fn clap_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let strings = |kind: ContextKind| -> Vec<String> {
        match e.get(kind) {
            Some(ContextValue::String(s)) => vec![s.clone()],
            Some(ContextValue::Strings(v)) => v.clone(),
            _ => Vec::new(),
        }
    };
    // `--op <OP>` → `--op`; a positional `<FILE>` stays as it is.
    let flag = |a: &str| {
        if a.starts_with('-') { a.split([' ', '=']).next().unwrap_or(a).to_string() } else { a.to_string() }
    };
    let mut line = match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            let missing: Vec<String> = strings(ContextKind::InvalidArg).iter().map(|a| flag(a)).collect();
            if missing.is_empty() { one_line(&e.to_string()) } else { format!("missing {}", missing.join(", ")) }
        }
        _ => one_line(&e.to_string()),
    };
    let suggested: Vec<String> =
        [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg].into_iter().flat_map(strings).collect();
    if !suggested.is_empty() && !line.contains("did you mean") {
        let quoted: Vec<String> = suggested.iter().map(|s| format!("'{s}'")).collect();
        line.push_str(&format!("; did you mean {}?", quoted.join(" or ")));
    }
    line
}

/// The first line of a clap message, without its `error: ` prefix.
pub(crate) fn one_line(msg: &str) -> String {
    let first = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("invalid arguments");
    first.trim_start_matches("error: ").trim().to_string()
}
