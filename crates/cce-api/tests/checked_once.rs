//! One all-reduce, as the CLI runs it through cce-api ([`AllreduceParams::prepare`], then
//! [`Prepared::run`](cce_api::collective::Prepared::run)), checks its configuration once, and
//! with `auto` runs the time model of each candidate once: counted by cce-collectives' own
//! per-thread counters of checks and timelines (the checks and the models run on the caller's
//! thread). A second check or model anywhere on the path would fail these tests.
//!
//! Each test uses element counts no other test of this binary uses: the collectives keep a few
//! runs' prepared work, and a kept run would model nothing.

use std::borrow::Cow;

use cce_api::SdmaDtype;
use cce_api::collective::{AllreduceParams, sweep_every_algorithm};
use cce_api::params::{Algo, AlgoChoice, RedOp};
use cce_collectives::collective::{Calls, calls};

/// What `f` added to this thread's counts.
fn counted<T>(f: impl FnOnce() -> T) -> (T, Calls) {
    let before = calls();
    let out = f();
    let after = calls();
    (out, Calls { checks: after.checks - before.checks, models: after.models - before.models })
}

fn params(algo: AlgoChoice) -> AllreduceParams {
    AllreduceParams::new(8, algo, RedOp::Add, SdmaDtype::Bf16)
}

/// The CLI's path: prepare (the whole check), generate the inputs, run.
fn cli_run(p: &AllreduceParams, elems: u64) -> cce_api::AllreduceResult {
    let job = p.prepare(elems).unwrap();
    let inputs = job.generate_inputs(1);
    job.run(inputs.into_iter().map(Cow::Owned).collect()).unwrap()
}

#[test]
fn a_named_algorithm_is_checked_once_and_modelled_once() {
    for (algo, elems) in [(Algo::Ring, 1237), (Algo::Mesh, 1239), (Algo::Rdh, 1241)] {
        let (r, n) = counted(|| cli_run(&params(AlgoChoice::Algo(algo)), elems));
        assert_eq!(n, Calls { checks: 1, models: 1 }, "{}", algo.name());
        assert!(r.outcome.model_seconds > 0.0);
        assert!(r.candidates.is_none());
    }
}

#[test]
fn auto_models_each_candidate_once_and_its_choice_is_the_runs_model() {
    let (r, n) = counted(|| cli_run(&params(AlgoChoice::Auto), 2473));
    let e = r.candidates.as_ref().expect("auto reports its candidates");
    assert_eq!(e.candidates.len(), Algo::ALL.len());
    assert!(e.candidates.iter().all(|c| c.model.is_ok()), "8 ranks on arch 3: every algorithm runs");
    assert_eq!(n, Calls { checks: 1, models: Algo::ALL.len() as u64 });
    // The run reports the chosen candidate's model time, not a second model's.
    let chosen = e.candidates.iter().find(|c| c.algo == r.config.algo).unwrap();
    assert_eq!(chosen.model.as_ref().unwrap().seconds, r.outcome.model_seconds);
}

#[test]
fn a_sweep_checks_each_size_once() {
    let p = params(AlgoChoice::Algo(Algo::Ring));
    let counts = [3001, 3003, 3005];
    let (jobs, n) = counted(|| p.prepare_sweep(&counts).unwrap());
    assert_eq!(n, Calls { checks: 3, models: 3 }, "each size checked once, and modelled by its check");
    let (_, n) = counted(|| {
        for job in &jobs {
            job.run(job.generate_inputs(1).into_iter().map(Cow::Owned).collect()).unwrap();
        }
    });
    assert_eq!(n, Calls { checks: 0, models: 0 }, "a run checks and models nothing again");
}

#[test]
fn the_sweep_over_every_algorithm_checks_each_run_once_and_models_each_once() {
    let p = params(AlgoChoice::Auto);
    let counts = [4007, 4011];
    let (points, n) = counted(|| sweep_every_algorithm(&p, &counts, || {}).unwrap());
    assert_eq!(points.len(), counts.len() * Algo::ALL.len());
    assert_eq!(n, Calls { checks: points.len() as u64, models: points.len() as u64 });
}

#[test]
fn the_counters_see_a_second_check() {
    // The counters are the test's instrument: a path that checked twice would show it.
    let p = params(AlgoChoice::Algo(Algo::Ring));
    let (_, n) = counted(|| {
        p.prepare(5003).unwrap();
        p.prepare(5003).unwrap();
    });
    assert_eq!(n.checks, 2);
}
