//! The fuzz target `reveal_outputs` (fuzz/fuzz_targets) run on stable as a proptest: its
//! property (fuzz/fuzz_targets/reveal_outputs_property.rs, included here by path) on its seed
//! corpus (fuzz/corpus/reveal_outputs), on mutations of the seeds (bytes flipped, cut,
//! inserted) and on random bytes: any outputs handed to `Reveal::observe` give a refusal (wrong
//! shape only) or a step, never a panic, and every reveal ends within `ranks + 2` runs.

use std::path::PathBuf;

use proptest::prelude::*;

#[path = "../../../fuzz/fuzz_targets/reveal_outputs_property.rs"]
mod property;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/reveal_outputs"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 5, "{}: a seed corpus of a handful of files", dir.display());
    files.iter().map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(p).unwrap())).collect()
}

#[test]
fn the_seeds_hold_what_they_are_for() {
    for (name, bytes) in corpus() {
        let got = property::property(&bytes);
        if name.starts_with("honest-") {
            // A black box that sums with one tree, answered honestly every run: revealed.
            let got = got.unwrap_or_else(|| panic!("{name}: the reveal ran to its end"));
            assert!(got.revealed, "{name}: {:?}", got.reason);
            assert_eq!(got.classes.len(), 1, "{name}");
        } else if name.starts_with("flipped-") || name.starts_with("echo-") {
            // Outputs no tree gives: the reveal ends, not revealed.
            let got = got.unwrap_or_else(|| panic!("{name}: the reveal ran to its end"));
            assert!(!got.revealed, "{name}: revealed {:?}", got.classes);
        } else if name == "int-dtype" {
            assert!(got.is_none(), "an integer dtype has no masks");
        }
    }
}

/// A seed (chosen by `pick`) mutated by `edits`: (position, byte, kind) each.
fn mutate(seeds: &[(String, Vec<u8>)], pick: usize, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = seeds[pick % seeds.len()].1.clone();
    for &(at, byte, kind) in edits {
        let at = if b.is_empty() { 0 } else { at % (b.len() + 1) };
        match kind % 4 {
            0 if at < b.len() => b[at] ^= byte.max(1),
            1 => b.insert(at, byte),
            2 if at < b.len() => {
                b.remove(at);
            }
            _ => b.truncate(at),
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn mutated_seeds_never_panic_and_end(pick in 0usize..64, edits in prop::collection::vec((0usize..256, any::<u8>(), any::<u8>()), 0..8)) {
        let seeds = corpus();
        property::property(&mutate(&seeds, pick, &edits));
    }

    #[test]
    fn random_bytes_never_panic_and_end(data in prop::collection::vec(any::<u8>(), 0..400)) {
        property::property(&data);
    }
}
