//! The API's one error type, [`ApiError`], and its policy: every error is either bad input
//! (exit code 2, a `ValueError`-like refusal) or a run that executed and failed (exit code 1:
//! an engine fault of host-built rings, a failed rank, a failed check). The fields a front end
//! maps to its own exceptions are reachable without parsing messages: [`ApiError::fault`]
//! (queue, descriptor, reason), [`ApiError::rank_failure`] (rank, step), [`ApiError::kind`].
//!
//! Messages are one line. A message names a parameter in backquotes, by the CLI's option name
//! without its dashes (`` `seed` is for `rounding` sr ``), and never spells a flag: each front
//! turns every `` `name` `` into its own spelling with [`ApiError::message_with`] (the CLI, the
//! Python module and the C library all give [`crate::render::flag`], so every message reads as
//! it always has: `--seed is for --rounding sr`).

/// Why a collective was refused or failed ([`ApiError::Collective`]).
pub use cce_collectives::collective::CollectiveError;
use cce_engine::{EngineError, Fault, MemError};
/// Why bits were refused ([`ApiError::Format`]).
pub use cce_format::FormatError;
/// Why a ring dump file was refused ([`ApiError::RingFile`]).
pub use cce_format::ringfile::RingFileError;
/// Why the host refused a request ([`ApiError::Host`]).
pub use cce_host::HostError;
/// Why the whole path (host rings, engine) failed ([`ApiError::Path`]).
pub use cce_job::PathError;
use cce_numerics::NumericsError;

impl From<cce_collectives::collective::StoryError> for ApiError {
    /// An element or rank out of range, or an input that cannot be read, is bad input; a
    /// schedule whose data the story cannot follow is the model's own failure.
    fn from(e: cce_collectives::collective::StoryError) -> Self {
        use cce_collectives::collective::StoryError as S;
        match e {
            S::Collective(c) => ApiError::Collective(c),
            S::Range(_) | S::Input { .. } => ApiError::Input(e.to_string()),
            S::Schedule(_) => ApiError::Failed(e.to_string()),
        }
    }
}

impl From<cce_collectives::demo::DemoError> for ApiError {
    fn from(e: cce_collectives::demo::DemoError) -> Self {
        match e {
            cce_collectives::demo::DemoError::Collective(c) => ApiError::Collective(c),
            cce_collectives::demo::DemoError::Story(s) => s.into(),
        }
    }
}

/// Everything the API refuses or a run fails with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// Bad input, as one line.
    #[error("{0}")]
    Input(String),
    /// A format-layer rule (a field out of range, a malformed struct).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A host rule (the dispatcher's asserts, the options of a reduce).
    #[error(transparent)]
    Host(#[from] HostError),
    /// Ring dump bytes that are not a valid dump.
    #[error(transparent)]
    RingFile(#[from] RingFileError),
    /// The numerics refused (an unsupported dtype, a bad length).
    #[error(transparent)]
    Numerics(#[from] NumericsError),
    /// Memory refused a region or an access (the budget, an overlap).
    #[error(transparent)]
    Memory(#[from] MemError),
    /// The engine's API refused something (a queue, a ring geometry).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The reduce path refused or failed; a queue fault is [`PathError::Fault`].
    #[error(transparent)]
    Path(#[from] PathError),
    /// A collective: a configuration refused, or a rank that failed
    /// ([`CollectiveError::RankFailed`]).
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// Bytes that are not whole elements of their dtype.
    #[error("{len} bytes is not a multiple of the {dtype} element size ({size})")]
    Ragged {
        /// Bytes given.
        len: u64,
        /// The dtype, as it was named.
        dtype: String,
        /// Its element size.
        size: usize,
    },
    /// A load of [`crate::run::run_ring`] (by its index) that memory refused.
    #[error("load {index} at 0x{addr:x}: {problem}")]
    Load {
        /// Index in the loads given.
        index: usize,
        /// Its address.
        addr: u64,
        /// Why.
        problem: LoadProblem,
    },
    /// A dump of [`crate::run::run_ring`] (by its index) that memory refused.
    #[error("dump {index} at 0x{addr:x}: {error}")]
    Dump {
        /// Index in the dumps given.
        index: usize,
        /// Its address.
        addr: u64,
        /// Why.
        error: MemError,
    },
    /// A run whose queues stopped on faults (each with queue, descriptor and reason).
    #[error("{} queue(s) faulted: {}", .0.len(), faults_text(.0))]
    Faulted(Vec<Fault>),
    /// A run that executed and whose checks failed.
    #[error("{0}")]
    Failed(String),
}

/// Why a load was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadProblem {
    /// No bytes to load.
    #[error("nothing to load (0 bytes)")]
    Empty,
    /// Memory refused the region; `overlaps` is the index of an earlier load whose region it
    /// overlaps.
    #[error("{error}")]
    Region {
        /// Why.
        error: MemError,
        /// The earlier load it overlaps, if that is why.
        overlaps: Option<usize>,
    },
}

/// What kind of failure an [`ApiError`] is, for a front end's exception types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input (exit code 2).
    BadInput,
    /// An engine fault of a run (exit code 1); see [`ApiError::fault`].
    EngineFault,
    /// A rank of a collective failed (exit code 1); see [`ApiError::rank_failure`].
    RankFailed,
    /// A run that executed and failed its checks (exit code 1).
    Failed,
}

fn faults_text(faults: &[Fault]) -> String {
    faults.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// `invalid value '{value}' for '{param}': {why}`, the form of the CLI argument parser's
/// refusals; `param` names the parameter as messages do (`` `queue` <QUEUE> ``).
pub(crate) fn invalid_value(param: &str, value: impl std::fmt::Display, why: &str) -> ApiError {
    ApiError::Input(format!("invalid value '{value}' for '{param}': {why}"))
}

/// `message` with every parameter it names (`` `name` ``: backquotes around a word without
/// spaces) in a front's spelling, `spell(name)`; any other text, a lone backquote included,
/// stays as it is.
pub fn spell_parameters(message: &str, spell: impl Fn(&str) -> String) -> String {
    let is_name = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    let mut out = String::with_capacity(message.len() + 8);
    let mut rest = message;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        match after.find('`') {
            Some(close) if is_name(&after[..close]) => {
                out.push_str(&rest[..open]);
                out.push_str(&spell(&after[..close]));
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl ApiError {
    /// The exit code of the policy: 1 for a run that executed and failed (an engine fault of
    /// host-built rings, unless the request names something the model does not execute; a
    /// failed rank; a failed check), 2 for everything else (bad input).
    pub fn exit_code(&self) -> u8 {
        match self.kind() {
            ErrorKind::BadInput => 2,
            ErrorKind::EngineFault | ErrorKind::RankFailed | ErrorKind::Failed => 1,
        }
    }

    /// The kind of failure (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ApiError::Collective(CollectiveError::RankFailed { .. }) => ErrorKind::RankFailed,
            // A fault of host-built rings is the model's own failure, unless the request names
            // something the model does not execute (a dtype in a role it cannot take, an
            // unsupported combination): that is input.
            ApiError::Path(PathError::Fault(f)) if f.reason.is_unsupported_request() => ErrorKind::BadInput,
            ApiError::Path(PathError::Fault(_)) | ApiError::Faulted(_) => ErrorKind::EngineFault,
            ApiError::Failed(_) => ErrorKind::Failed,
            _ => ErrorKind::BadInput,
        }
    }

    /// The engine fault, if a queue stopped on one (the first, when several did): its `queue`,
    /// `tx_index` / `rx_index` (the packet's first descriptors) and `reason`.
    pub fn fault(&self) -> Option<&Fault> {
        match self {
            ApiError::Path(PathError::Fault(f)) => Some(f),
            ApiError::Faulted(faults) => faults.first(),
            _ => None,
        }
    }

    /// The message, every parameter it names in a front's spelling ([`spell_parameters`]):
    /// what a front prints or raises.
    pub fn message_with(&self, spell: impl Fn(&str) -> String) -> String {
        spell_parameters(&self.to_string(), spell)
    }

    /// The rank and step of a failed collective.
    pub fn rank_failure(&self) -> Option<(usize, usize)> {
        match self {
            ApiError::Collective(CollectiveError::RankFailed { rank, step, .. }) => Some((*rank, *step)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use cce_engine::FaultReason;

    use super::*;

    #[test]
    fn policy() {
        assert_eq!(ApiError::Input("x".into()).exit_code(), 2);
        let f = Fault { queue: 3, tx_index: 7, rx_index: 2, reason: FaultReason::Selector(3) };
        let e = ApiError::Path(PathError::Fault(f.clone()));
        assert_eq!((e.kind(), e.exit_code()), (ErrorKind::EngineFault, 1));
        assert_eq!(e.fault().map(|f| (f.queue, f.tx_index)), Some((3, 7)));
        let e = ApiError::Faulted(vec![f.clone(), f]);
        assert!(e.to_string().starts_with("2 queue(s) faulted: queue 3: packet at tx descriptor 7"));
        let e = ApiError::Collective(CollectiveError::RankFailed { rank: 1, step: 4, reason: "x".into() });
        assert_eq!((e.kind(), e.exit_code(), e.rank_failure()), (ErrorKind::RankFailed, 1, Some((1, 4))));
        assert_eq!(ApiError::Failed("checks".into()).exit_code(), 1);
    }

    #[test]
    fn parameters_are_spelled_by_the_front() {
        let dashes = |name: &str| format!("<{name}>");
        assert_eq!(spell_parameters("`seed` is for `rounding` sr", dashes), "<seed> is for <rounding> sr");
        assert_eq!(spell_parameters("'`queue` <QUEUE>': x", dashes), "'<queue> <QUEUE>': x");
        assert_eq!(
            spell_parameters("`ranks-per-node` below `fail_rank`", dashes),
            "<ranks-per-node> below <fail_rank>"
        );
        // Not a name between the backquotes: left as it is.
        for text in ["no names", "a ` b", "`a b` c", "``", "x `a", "`a` `b c`"] {
            let want = if text == "`a` `b c`" { "<a> `b c`".to_string() } else { text.to_string() };
            assert_eq!(spell_parameters(text, dashes), want);
        }
        let e = ApiError::Input("`threads` must be at least 1".into());
        assert_eq!(e.message_with(|n| n.to_uppercase()), "THREADS must be at least 1");
    }
}
