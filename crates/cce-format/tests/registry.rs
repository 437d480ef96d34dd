//! The registry is complete and every bit of every word is declared once: no two fields of a
//! word claim the same bit, no field claims a fixed bit, every word declared under
//! `src/words/` is in the registry, and every field declared there belongs to a word in it.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use cce_format::layout::{FieldDef, Layout};
use cce_format::words::REGISTRY;

/// Files under `src/words/` that declare no word of their own.
const NOT_WORDS: [&str; 7] =
    ["mod.rs", "declare.rs", "field_type.rs", "registry.rs", "shared.rs", "len_ctrl.rs", "data_frame.rs"];

/// Every `(file, text)` under `src/words/`.
fn word_sources() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/words");
    let mut out: Vec<_> = fs::read_dir(&dir)
        .expect("src/words is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).expect("a source file"))
        })
        .collect();
    out.sort();
    out
}

/// Bits two fields of `layout` both claim in word `w`, or a field and the fixed bits.
fn overlaps(layout: &Layout) -> Vec<String> {
    let mut found = Vec::new();
    for (i, a) in layout.fields.iter().enumerate() {
        let fixed = layout.fixed[a.word as usize] & a.span.mask();
        if fixed != 0 {
            found.push(format!("{}: {} claims fixed bits 0x{fixed:08x}", layout.name, a.name));
        }
        for b in &layout.fields[i + 1..] {
            let both = a.span.mask() & b.span.mask();
            if a.word == b.word && both != 0 {
                found.push(format!("{}: {} and {} both claim W{} 0x{both:08x}", layout.name, a.name, b.name, a.word));
            }
        }
    }
    found
}

#[test]
fn no_two_declarations_claim_the_same_bits_of_a_word() {
    let found: Vec<String> = REGISTRY.iter().flat_map(|e| overlaps(e.layout)).collect();
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_overlap_check_can_fail() {
    // A word whose second field claims bit 3, which the first one holds.
    const A: FieldDef = cce_format::words::MC_SUB;
    let mut b = cce_format::words::FMA_MC_F6;
    b.span = cce_format::BitSpan::new(2, 2);
    let fields: &'static [FieldDef] = Box::leak(Box::new([A, b]));
    let bad = Layout { fields, ..cce_format::words::FMA_META_CTRL };
    assert_eq!(overlaps(&bad).len(), 1);
    let fixed = Layout { fixed: [0x1, 0, 0, 0], ..cce_format::words::EXT_META_CTRL };
    assert_eq!(overlaps(&fixed), ["ext-meta-ctrl: sub claims fixed bits 0x00000001"]);
}

#[test]
fn every_field_sits_inside_its_word_and_names_are_unique() {
    for e in &REGISTRY {
        let l = e.layout;
        let mut names = BTreeSet::new();
        for f in l.fields {
            assert!(f.word < l.words, "{}: {} is in W{} of a {}-word layout", l.name, f.name, f.word, l.words);
            assert!(names.insert(f.name), "{}: two fields are named {}", l.name, f.name);
        }
        assert!(l.fixed[l.words as usize..].iter().all(|w| *w == 0), "{}: fixed bits past its words", l.name);
    }
    let mut names = BTreeSet::new();
    for e in &REGISTRY {
        assert!(names.insert(e.layout.name), "two words are named {}", e.layout.name);
    }
}

/// The `name: "…"` of each word declared in `text` (a `word!` or a `Layout` literal).
fn declared_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("name: \""))
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn every_declared_word_is_in_the_registry() {
    let registered: BTreeSet<&str> = REGISTRY.iter().map(|e| e.layout.name).collect();
    let mut declared = BTreeSet::new();
    for (file, text) in word_sources() {
        let names = declared_names(&text);
        if NOT_WORDS.contains(&file.as_str()) {
            assert!(names.is_empty(), "{file} declares words {names:?} but is not a word's file");
            continue;
        }
        assert_eq!(names.len(), 1, "{file} must declare exactly one word, found {names:?}");
        assert_eq!(file.trim_end_matches(".rs").replace('_', "-"), names[0], "a word's file is named for it");
        declared.insert(names[0].clone());
    }
    let declared: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
    assert_eq!(declared, registered, "words declared under src/words/ against the registry");
}

#[test]
fn every_declared_field_belongs_to_a_registered_word() {
    let used: BTreeSet<(&str, u8, u32)> =
        REGISTRY.iter().flat_map(|e| e.layout.fields.iter().map(|f| (f.name, f.word, f.span.mask()))).collect();
    let mut count = 0;
    for (file, text) in word_sources() {
        for decl in text.split("pub const ").skip(1).filter(|d| d.contains(": FieldDef")) {
            let ident = decl.split(':').next().unwrap().trim();
            // FieldDef::new("name", word, lo, width, …)
            let args = decl.split("FieldDef::new(").nth(1).expect("a FieldDef::new call");
            let parts: Vec<&str> = args.split(',').map(str::trim).take(4).collect();
            let name = parts[0].trim_matches('"');
            let word: u8 = parts[1].parse().unwrap();
            let (lo, width): (u32, u32) = (parts[2].parse().unwrap(), parts[3].parse().unwrap());
            let mask = ((1u64 << width) - 1) as u32;
            assert!(used.contains(&(name, word, mask << lo)), "{file}: {ident} is in no registered word");
            count += 1;
        }
    }
    assert!(count >= 60, "only {count} field declarations found: the scan is broken");
}
