//! The pass over a [`ReproPlan`]: input group by input group, every configuration run once,
//! its outputs digested, a new class measured and compared with the group's reference while
//! they are held (see the module above for the memory bound).

use std::borrow::Cow;

use cce_collectives::metrics::{self, Metrics};
use cce_forensics::repro::{self as forensics, Classes, Configuration, Difference, Digests, bits};
use cce_format::SdmaDtype;
use cce_numerics::NumType;

use super::analysis::{self, Pair, Verdict};
use super::{Axis, Environment, Group, ReproConfig, ReproPlan, Skipped, input};
use crate::collective::{ElementStory, StoryInputs};
use crate::error::ApiError;

/// Where the inputs come from.
#[derive(Clone, Copy, Debug)]
pub enum ReproInputs<'a> {
    /// Generated from the plan's input seed (rank r's as `cce gen --seed <seed + r>`).
    Generated,
    /// One raw little-endian buffer of the dtype per rank, equally long, holding at least
    /// [`ReproPlan::ranks_needed`] ranks and [`ReproPlan::elems_needed`] elements (read in place).
    Given(&'a [&'a [u8]]),
}

/// A configuration as it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The configuration.
    pub config: ReproConfig,
    /// The algorithm that ran (`auto`'s choice; a user's schedule as `file`).
    pub ran: &'static str,
    /// What ran as reports label it: a hierarchy as `hier(intra/inter)`, a ring of C > 1
    /// channels as `ring(C channels)`, a user's schedule by its name.
    pub label: String,
    /// The flat ring's channels that ran (the configuration's, or `auto`'s choice; 1 for every
    /// other algorithm).
    pub channels: usize,
    /// Its class (an index into [`Repro::classes`]).
    pub class: usize,
    /// Whether every rank's output is the same bytes.
    pub ranks_agree: bool,
    /// Wall-clock seconds of its run.
    pub seconds: f64,
}

/// Configurations whose outputs are bit-identical: every rank, every element.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// The configurations, ascending; the first ran first and stands for the class.
    pub members: Vec<usize>,
    /// The first member's outputs against the exact reduction of their inputs (every member's,
    /// as they hold the same bytes over the same inputs).
    pub errors: Metrics,
}

/// The first element at which two classes differ, both values, their distance, and how each
/// configuration made it (its element story).
#[derive(Clone, Debug, PartialEq)]
pub struct FirstDifference {
    /// The element's index.
    pub element: u64,
    /// The lowest rank whose outputs differ there.
    pub rank: usize,
    /// The dtype both values are of.
    pub dtype: SdmaDtype,
    /// The first class's bits.
    pub a: u64,
    /// The second class's bits.
    pub b: u64,
    /// Their distance in ulps (`None` when either is NaN).
    pub ulps: Option<u64>,
    /// How the first class's configuration made the element on that rank.
    pub story_a: Box<ElementStory>,
    /// How the second's made it.
    pub story_b: Box<ElementStory>,
}

/// What was given or generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputsUsed {
    /// Generated from this seed.
    Generated {
        /// The input seed.
        seed: u64,
    },
    /// Given, this shape.
    Given(super::GivenShape),
}

/// `cce repro`'s report.
#[derive(Clone, Debug, PartialEq)]
pub struct Repro {
    /// Every configuration that ran, in the space's order.
    pub configs: Vec<RunConfig>,
    /// The classes, in the order their first members ran.
    pub classes: Vec<Class>,
    /// Each class against the first of its input group (and with `all_pairs`, every pair).
    pub pairs: Vec<Pair>,
    /// Each algorithm's invariance over each swept axis.
    pub verdicts: Vec<Verdict>,
    /// The axes with more than one value.
    pub swept: Vec<Axis>,
    /// The combinations that could not run.
    pub skipped: Vec<Skipped>,
    /// The inputs.
    pub inputs: InputsUsed,
    /// Whether every pair of classes of an input group was compared.
    pub all_pairs: bool,
    /// Runs made again to compare classes with each other (`all_pairs`).
    pub reruns: usize,
    /// The machine and build.
    pub env: Environment,
}

/// What the pass keeps between runs.
#[derive(Default)]
struct Pass {
    configs: Vec<Option<RunConfig>>,
    /// Every configuration as the analysis sees it.
    keyed: Vec<Configuration<Axis>>,
    digests: Vec<Digests>,
    classes: Classes,
    /// Each class's error, in the classes' order.
    errors: Vec<Metrics>,
    pairs: Vec<Pair>,
    reruns: usize,
}

/// A run's outputs with the ranks that hold the same bytes stored once: what the reference
/// keeps (ranks that agree cost one output, not R).
struct Kept {
    distinct: Vec<Vec<u8>>,
    of_rank: Vec<usize>,
}

impl Kept {
    fn of(outputs: Vec<Vec<u8>>) -> Kept {
        let mut kept = Kept { distinct: Vec::new(), of_rank: Vec::with_capacity(outputs.len()) };
        for o in outputs {
            match kept.distinct.iter().position(|d| *d == o) {
                Some(k) => kept.of_rank.push(k),
                None => {
                    kept.of_rank.push(kept.distinct.len());
                    kept.distinct.push(o);
                }
            }
        }
        kept
    }

    /// Every rank's output.
    fn ranks(&self) -> Vec<&[u8]> {
        self.of_rank.iter().map(|&k| self.distinct[k].as_slice()).collect()
    }
}

/// One run's outputs and wall time.
struct Ran {
    outputs: Vec<Vec<u8>>,
    seconds: f64,
    ran: &'static str,
    label: String,
    channels: usize,
}

impl ReproPlan {
    /// Runs every configuration once over `inputs` (see the module for the memory bound),
    /// calling `progress` after each run, then compares and judges.
    ///
    /// # Errors
    /// Given inputs that do not fit the plan; a run that fails.
    pub fn run(&self, inputs: ReproInputs<'_>, progress: &mut dyn FnMut()) -> Result<Repro, ApiError> {
        if let ReproInputs::Given(given) = inputs {
            self.check_inputs(given)?;
        }
        let mut pass = Pass {
            configs: vec![None; self.configs.len()],
            keyed: self.configs.iter().map(|p| analysis::configuration(&p.config)).collect(),
            digests: vec![Digests::default(); self.configs.len()],
            ..Pass::default()
        };
        for g in &self.groups {
            let held = self.group_inputs(g, inputs);
            self.run_group(g, &held, &mut pass, progress)?;
            if self.params.all_pairs {
                self.every_pair(g, &held, &mut pass)?;
            }
        }
        let configs: Vec<RunConfig> = pass.configs.into_iter().flatten().collect();
        let swept = self.params.swept();
        let verdicts = forensics::verdicts(&pass.keyed, &pass.digests, &swept, Axis::Algo);
        let mut pairs = pass.pairs;
        for p in &mut pairs {
            p.separated_by = forensics::separations(&pass.keyed, &pass.classes, (p.class_a, p.class_b), (p.a, p.b));
        }
        let classes = pass
            .classes
            .members()
            .iter()
            .zip(pass.errors)
            .map(|(members, errors)| Class { members: members.clone(), errors })
            .collect();
        Ok(Repro {
            configs,
            classes,
            pairs,
            verdicts,
            swept,
            skipped: self.skipped.clone(),
            inputs: match self.given {
                Some(g) => InputsUsed::Given(g),
                None => InputsUsed::Generated { seed: self.params.input_seed },
            },
            all_pairs: self.params.all_pairs,
            reruns: pass.reruns,
            env: cce_bench::machine::environment(),
        })
    }

    /// Given inputs: enough ranks, equally long, whole elements, enough of them.
    fn check_inputs(&self, given: &[&[u8]]) -> Result<(), ApiError> {
        let size = self.groups.first().map_or(1, |g| usize::from(g.dtype.bytes().max(1)));
        let len = given.first().map_or(0, |b| b.len());
        if let Some((r, b)) = given.iter().enumerate().find(|(_, b)| b.len() != len) {
            return Err(input(format!(
                "rank {r}'s input holds {} bytes, rank 0's {len}: the inputs must be equally long",
                b.len()
            )));
        }
        let need = self.elems_needed() as usize * size;
        if given.len() < self.ranks_needed() || len < need || len % size != 0 {
            return Err(input(format!(
                "the inputs hold {} ranks of {len} bytes: the plan needs {} ranks of at least {need} bytes, whole elements of {size} bytes",
                given.len(),
                self.ranks_needed()
            )));
        }
        Ok(())
    }

    /// A group's inputs at its largest size: generated, or the given ones cut (not copied).
    fn group_inputs<'a>(&self, g: &Group, inputs: ReproInputs<'a>) -> Vec<Cow<'a, [u8]>> {
        let bytes = g.max_elems() as usize * usize::from(g.dtype.bytes().max(1));
        match inputs {
            ReproInputs::Given(given) => given[..g.ranks as usize].iter().map(|b| Cow::Borrowed(&b[..bytes])).collect(),
            ReproInputs::Generated => {
                let first = &self.configs[g.members[0]].prepared;
                let cfg = crate::collective::Config { elems: g.max_elems(), ..first.config().clone() };
                (0..g.ranks as usize)
                    .map(|r| Cow::Owned(metrics::generate_rank(&cfg, self.params.input_seed, r)))
                    .collect()
            }
        }
    }

    /// Runs configuration `i` over the first elements of `held`.
    fn run_one(&self, i: usize, held: &[Cow<'_, [u8]>]) -> Result<Ran, ApiError> {
        let p = &self.configs[i].prepared;
        let bytes = p.input_bytes() as usize;
        let r = p.run(held.iter().map(|b| Cow::Borrowed(&b[..bytes])).collect())?;
        let cfg = p.config();
        let (ran, label, channels) = (cfg.algo.name(), crate::collective::algo_label(cfg), cfg.channels);
        Ok(Ran { outputs: r.outcome.outputs, seconds: r.outcome.seconds, ran, label, channels })
    }

    /// The first pass over one input group.
    fn run_group(
        &self,
        g: &Group,
        held: &[Cow<'_, [u8]>],
        pass: &mut Pass,
        progress: &mut dyn FnMut(),
    ) -> Result<(), ApiError> {
        let size = usize::from(g.dtype.bytes().max(1));
        let mut reference: Option<(usize, Kept)> = None;
        for &i in &g.members {
            let ran = self.run_one(i, held)?;
            let c = &self.configs[i].config;
            pass.digests[i] = Digests::of(&ran.outputs, &g.sizes, c.elems, size, metrics::check_threads());
            let (class, new_class) = pass.classes.place(&pass.keyed, &pass.digests, i);
            if new_class {
                let p = &self.configs[i].prepared;
                let slices: Vec<&[u8]> = held.iter().map(|b| &b[..p.input_bytes() as usize]).collect();
                pass.errors.push(metrics::measure(p.config(), &slices, &ran.outputs));
            }
            let ranks_agree = ran.outputs.windows(2).all(|w| w[0] == w[1]);
            let (algo, label, channels, seconds) = (ran.ran, ran.label, ran.channels, ran.seconds);
            let config = c.clone();
            pass.configs[i] = Some(RunConfig { config, ran: algo, label, channels, class, ranks_agree, seconds });
            match &reference {
                None => reference = Some((i, Kept::of(ran.outputs))),
                Some((r, kept)) if new_class => {
                    let pair = self.pair((*r, &kept.ranks()), (i, &slices_of(&ran.outputs)), held, pass)?;
                    pass.pairs.push(pair);
                }
                Some(_) => {}
            }
            progress();
        }
        Ok(())
    }

    /// With `all_pairs`: every pair of the group's classes but the first's (compared in the
    /// first pass), each side run again, one held at a time.
    fn every_pair(&self, g: &Group, held: &[Cow<'_, [u8]>], pass: &mut Pass) -> Result<(), ApiError> {
        let reps: Vec<usize> = pass
            .classes
            .members()
            .iter()
            .map(|k| k[0])
            .filter(|&r| self.configs[r].config.ranks == g.ranks && self.configs[r].config.dtype == g.dtype)
            .collect();
        for (x, &a) in reps.iter().enumerate().skip(1) {
            if x + 1 >= reps.len() {
                break;
            }
            let first = Kept::of(self.run_one(a, held)?.outputs);
            pass.reruns += 1;
            for &b in &reps[x + 1..] {
                let second = self.run_one(b, held)?;
                pass.reruns += 1;
                let pair = self.pair((a, &first.ranks()), (b, &slices_of(&second.outputs)), held, pass)?;
                pass.pairs.push(pair);
            }
        }
        Ok(())
    }

    /// Configurations `a` and `b` (first members of their classes, each with its outputs)
    /// compared over their common elements; the first differing element's story told for
    /// both over the group's inputs `held`.
    fn pair(
        &self,
        (a, sa): (usize, &[&[u8]]),
        (b, sb): (usize, &[&[u8]]),
        held: &[Cow<'_, [u8]>],
        pass: &Pass,
    ) -> Result<Pair, ApiError> {
        let (ca, cb) = (&self.configs[a].config, &self.configs[b].config);
        let size = usize::from(ca.dtype.bytes().max(1));
        let n = ca.elems.min(cb.elems) as usize;
        let diff: Difference = bits::compare(sa, sb, size, n);
        let first = match diff.first {
            None => None,
            Some((element, rank)) => {
                let (x, y) =
                    (bits::bits_at(sa[rank], size, element as usize), bits::bits_at(sb[rank], size, element as usize));
                Some(FirstDifference {
                    element,
                    rank,
                    dtype: ca.dtype,
                    a: x,
                    b: y,
                    ulps: NumType::from_sdma(ca.dtype).ok().and_then(|t| bits::ulp_distance(t, x, y)),
                    story_a: Box::new(self.story(a, element, rank, held)?),
                    story_b: Box::new(self.story(b, element, rank, held)?),
                })
            }
        };
        let class_of = |i: usize| pass.configs[i].as_ref().map_or(0, |c| c.class);
        Ok(Pair { a, b, class_a: class_of(a), class_b: class_of(b), diff, first, separated_by: Vec::new() })
    }

    /// How configuration `i` made element `element` of rank `rank`'s output, told over the
    /// first elements of `held` (no run).
    fn story(&self, i: usize, element: u64, rank: usize, held: &[Cow<'_, [u8]>]) -> Result<ElementStory, ApiError> {
        let p = &self.configs[i].prepared;
        let bytes = p.input_bytes() as usize;
        let slices: Vec<&[u8]> = held.iter().map(|b| &b[..bytes]).collect();
        p.element_story(element, Some(rank as u64), StoryInputs::Arrays(&slices))
    }
}

fn slices_of(outputs: &[Vec<u8>]) -> Vec<&[u8]> {
    outputs.iter().map(Vec::as_slice).collect()
}
