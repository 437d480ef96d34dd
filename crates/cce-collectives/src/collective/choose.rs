//! `--algo auto`: every algorithm's model time for a configuration, and the fastest — the flat
//! algorithms, and when the ranks are two or more whole nodes, every hierarchical pair.

use super::budget::check_model;
use super::config::{Algo, CollectiveError, Config, Hier, Inter, MAX_CHANNELS};
use super::size::schedule_size;
use super::timeline::Timeline;

/// One algorithm considered for a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The algorithm.
    pub algo: Algo,
    /// Its two algorithms, when `algo` is [`Algo::Hier`].
    pub hier: Hier,
    /// The flat ring's channels (1 for every other algorithm).
    pub channels: usize,
    /// Its model timeline, or why it cannot run the configuration.
    pub model: Result<Timeline, String>,
    /// The configuration modelled (whose model a run of it may take, [`super::check_chosen`]).
    modelled: Config,
}

impl Candidate {
    /// `cfg` modelled ([`super::model`]) or refused.
    pub fn of(cfg: &Config) -> Candidate {
        Self::below(cfg, None)
    }

    /// `cfg` modelled, the walk stopped once its time is sure to exceed `bound`
    /// ([`Timeline::stopped`]), or refused.
    fn below(cfg: &Config, bound: Option<f64>) -> Candidate {
        Candidate {
            algo: cfg.algo,
            hier: cfg.hier,
            channels: cfg.channels,
            model: super::model_below(cfg, bound).map_err(|e| e.to_string()),
            modelled: cfg.clone(),
        }
    }

    /// The algorithm's name ([`Config::label`]).
    pub fn label(&self) -> String {
        self.modelled.label()
    }

    /// Whether it is the algorithm `cfg` runs.
    pub fn is(&self, cfg: &Config) -> bool {
        self.algo == cfg.algo && (self.algo != Algo::Hier || self.hier == cfg.hier) && self.channels == cfg.channels
    }

    /// The timeline, when this candidate modelled exactly `cfg` (and to its end).
    pub(super) fn model_of(&self, cfg: &Config) -> Option<&Timeline> {
        self.model.as_ref().ok().filter(|m| self.modelled == *cfg && !m.stopped)
    }
}

/// Whether `cfg`'s ranks are two or more whole nodes of two or more ranks (where a hierarchy
/// can run).
pub fn spans_nodes(cfg: &Config) -> bool {
    let y = cfg.model.ranks_per_node;
    y >= 2 && cfg.ranks % y == 0 && cfg.ranks / y >= 2
}

/// The channels `auto` gives the flat ring of `cfg`, when it considers them (docs/MODEL.md
/// C29): on Trn1 (arch 2) over two or more nodes, where Neuron runs the flat ring as several
/// ring cycles, one per EFA interface of a node — at most its ranks and [`MAX_CHANNELS`], and
/// no more than a chunk has elements (no channel with an empty piece). `None` below two.
pub fn auto_channels(cfg: &Config) -> Option<usize> {
    let per_chunk = usize::try_from(cfg.elems / cfg.ranks.max(1) as u64).unwrap_or(usize::MAX);
    let c = cfg.model.efa_per_node.min(cfg.model.ranks_per_node).min(MAX_CHANNELS).min(per_chunk);
    (cfg.arch == 2 && cfg.nodes() >= 2 && c >= 2).then_some(c)
}

/// The configurations `auto` considers for `cfg`: every flat algorithm in [`Algo::ALL`] order
/// (one channel), the flat ring of `cfg`'s channels (more than one) or of [`auto_channels`]
/// where it considers them, then, when the
/// ranks span whole nodes, every (intra, inter) pair (intra in [`Algo::ALL`] order, inter in
/// [`Inter::ALL`] order).
fn considered(cfg: &Config) -> Vec<Config> {
    let one = Config { channels: 1, ..cfg.clone() };
    let mut v: Vec<Config> = Algo::ALL.into_iter().map(|algo| Config { algo, ..one.clone() }).collect();
    // Channels given (more than one) are the ones considered, on any instance.
    let channels = if cfg.channels > 1 { Some(cfg.channels) } else { auto_channels(cfg) };
    if let Some(channels) = channels {
        v.push(Config { algo: Algo::Ring, channels, ..one.clone() });
    }
    if spans_nodes(&one) {
        for intra in Algo::ALL {
            for inter in Inter::ALL {
                v.push(Config { algo: Algo::Hier, hier: Hier { intra, inter }, ..one.clone() });
            }
        }
    }
    v
}

/// Schedules of more steps and work items than this (over all ranks) stop modelling once they
/// cannot win; smaller ones are modelled to their end, so `--explain` shows their figures.
pub(super) const STOP_ABOVE: u64 = 1 << 20;

/// Every candidate's model (or refusal) for `cfg` with its algorithm replaced, and the
/// configuration with the least model time (the first considered on a tie); refused when none
/// can run it. The candidates are modelled smallest schedule first ([`schedule_size`]'s steps
/// and work items), the walk of one larger than 2^20 of them stopped once its time exceeds
/// the least so far ([`Timeline::stopped`]: it cannot win); they are listed in the order
/// considered.
pub fn choose(cfg: &Config) -> Result<(Config, Vec<Candidate>), CollectiveError> {
    choose_with(cfg, true)
}

/// [`choose`] with every candidate modelled to its end (none stopped): for runs of every
/// algorithm, each of which takes its candidate's model.
pub fn choose_every(cfg: &Config) -> Result<(Config, Vec<Candidate>), CollectiveError> {
    choose_with(cfg, false)
}

fn choose_with(cfg: &Config, stop: bool) -> Result<(Config, Vec<Candidate>), CollectiveError> {
    let configs = considered(cfg);
    // Sized only past the shape rules (schedule_size's premise: 0 or 1 ranks would underflow
    // its counts); a candidate they refuse is sized last and refused when it is modelled.
    let size = |c: &Config| match check_model(c) {
        Ok(()) => schedule_size(c).map_or(u64::MAX, |z| z.steps.saturating_add(z.works)),
        Err(_) => u64::MAX,
    };
    let sizes: Vec<u64> = configs.iter().map(size).collect();
    let mut order: Vec<usize> = (0..configs.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let mut modelled: Vec<Option<Candidate>> = vec![None; configs.len()];
    let mut least: Option<f64> = None;
    for i in order {
        let stops = stop && sizes[i] > STOP_ABOVE;
        let c = Candidate::below(&configs[i], least.filter(|_| stops));
        if let Some(m) = c.model.as_ref().ok().filter(|m| !m.stopped) {
            least = Some(least.map_or(m.seconds, |l| l.min(m.seconds)));
        }
        modelled[i] = Some(c);
    }
    let candidates: Vec<Candidate> = modelled.into_iter().flatten().collect();
    let finished = |c: &Candidate| c.model.as_ref().ok().filter(|m| !m.stopped).map(|m| m.seconds);
    let best = candidates.iter().filter_map(|c| finished(c).map(|t| (c, t))).fold(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::RedOp;
    use cce_format::SdmaDtype;

    /// Ranks outside the shape rules are refused with their message, never sized (found by
    /// the page's fuzz target, crates/cce-web/fuzz: a request without `ranks` asked `auto`).
    #[test]
    fn ranks_out_of_range_are_refused_not_sized() {
        for ranks in [0, 1, crate::collective::MAX_RANKS + 1] {
            let cfg = Config::new(ranks, Algo::Ring, RedOp::Add, SdmaDtype::Bf16, 64);
            let e = choose(&cfg).expect_err("refused").to_string();
            assert!(e.contains("ranks: between"), "{ranks}: {e}");
        }
    }
}
