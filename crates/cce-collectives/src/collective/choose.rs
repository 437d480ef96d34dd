//! `--algo auto`: every algorithm's model time for a configuration, and the fastest.

use super::budget::check_model;
use super::config::{Algo, CollectiveError, Config};
use super::timeline::Timeline;

/// One algorithm considered for a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The algorithm.
    pub algo: Algo,
    /// Its model timeline, or why it cannot run the configuration.
    pub model: Result<Timeline, String>,
    /// The configuration modelled (whose model a run of it may take, [`super::check_chosen`]).
    modelled: Config,
}

impl Candidate {
    /// `cfg` modelled ([`super::model`]) or refused.
    pub fn of(cfg: &Config) -> Candidate {
        Candidate { algo: cfg.algo, model: super::model(cfg, false).map_err(|e| e.to_string()), modelled: cfg.clone() }
    }

    /// The timeline, when this candidate modelled exactly `cfg`.
    pub(super) fn model_of(&self, cfg: &Config) -> Option<&Timeline> {
        self.model.as_ref().ok().filter(|_| self.modelled == *cfg)
    }
}

/// Every algorithm's model (or refusal) for `cfg` with its algorithm replaced, and the one with
/// the least model time (the first of [`Algo::ALL`] on a tie); refused when none can run it.
pub fn choose(cfg: &Config) -> Result<(Algo, Vec<Candidate>), CollectiveError> {
    let candidates: Vec<Candidate> =
        Algo::ALL.into_iter().map(|algo| Candidate::of(&Config { algo, ..cfg.clone() })).collect();
    let best = candidates.iter().filter_map(|c| c.model.as_ref().ok().map(|m| (c.algo, m.seconds))).fold(
        None,
        |best: Option<(Algo, f64)>, (a, t)| match best {
            Some((_, b)) if b <= t => best,
            _ => Some((a, t)),
        },
    );
    match best {
        Some((algo, _)) => Ok((algo, candidates)),
        None => {
            check_model(cfg)?;
            Err(CollectiveError::Config("no algorithm can run this configuration".into()))
        }
    }
}
