//! `--algo auto`: every algorithm's model time for a configuration, and the fastest — the flat
//! algorithms, and when the ranks are two or more whole nodes, every hierarchical pair.

use super::budget::check_model;
use super::config::{Algo, CollectiveError, Config, Hier, Inter};
use super::timeline::Timeline;

/// One algorithm considered for a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The algorithm.
    pub algo: Algo,
    /// Its two algorithms, when `algo` is [`Algo::Hier`].
    pub hier: Hier,
    /// Its model timeline, or why it cannot run the configuration.
    pub model: Result<Timeline, String>,
    /// The configuration modelled (whose model a run of it may take, [`super::check_chosen`]).
    modelled: Config,
}

impl Candidate {
    /// `cfg` modelled ([`super::model`]) or refused.
    pub fn of(cfg: &Config) -> Candidate {
        Candidate {
            algo: cfg.algo,
            hier: cfg.hier,
            model: super::model(cfg, false).map_err(|e| e.to_string()),
            modelled: cfg.clone(),
        }
    }

    /// The algorithm's name, a hierarchy's as `hier(intra/inter)`.
    pub fn label(&self) -> String {
        self.algo.label(self.hier)
    }

    /// Whether it is the algorithm `cfg` runs.
    pub fn is(&self, cfg: &Config) -> bool {
        self.algo == cfg.algo && (self.algo != Algo::Hier || self.hier == cfg.hier)
    }

    /// The timeline, when this candidate modelled exactly `cfg`.
    pub(super) fn model_of(&self, cfg: &Config) -> Option<&Timeline> {
        self.model.as_ref().ok().filter(|_| self.modelled == *cfg)
    }
}

/// Whether `cfg`'s ranks are two or more whole nodes of two or more ranks (where a hierarchy
/// can run).
pub fn spans_nodes(cfg: &Config) -> bool {
    let y = cfg.model.ranks_per_node;
    y >= 2 && cfg.ranks % y == 0 && cfg.ranks / y >= 2
}

/// The configurations `auto` considers for `cfg`: every flat algorithm in [`Algo::ALL`] order,
/// then, when the ranks span whole nodes, every (intra, inter) pair (intra in [`Algo::ALL`]
/// order, inter in [`Inter::ALL`] order).
fn considered(cfg: &Config) -> Vec<Config> {
    let mut v: Vec<Config> = Algo::ALL.into_iter().map(|algo| Config { algo, ..cfg.clone() }).collect();
    if spans_nodes(cfg) {
        for intra in Algo::ALL {
            for inter in Inter::ALL {
                v.push(Config { algo: Algo::Hier, hier: Hier { intra, inter }, ..cfg.clone() });
            }
        }
    }
    v
}

/// Every candidate's model (or refusal) for `cfg` with its algorithm replaced, and the
/// configuration with the least model time (the first considered on a tie); refused when none
/// can run it.
pub fn choose(cfg: &Config) -> Result<(Config, Vec<Candidate>), CollectiveError> {
    let candidates: Vec<Candidate> = considered(cfg).iter().map(Candidate::of).collect();
    let best = candidates.iter().filter_map(|c| c.model.as_ref().ok().map(|m| (c, m.seconds))).fold(
        None,
        |best: Option<(&Candidate, f64)>, (c, t)| match best {
            Some((_, b)) if b <= t => best,
            _ => Some((c, t)),
        },
    );
    match best {
        Some((c, _)) => Ok((c.modelled.clone(), candidates)),
        None => {
            check_model(cfg)?;
            Err(CollectiveError::Config("no algorithm can run this configuration".into()))
        }
    }
}
