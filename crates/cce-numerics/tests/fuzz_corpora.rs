//! The properties of the fuzz targets `order` and `npy` (fuzz/fuzz_targets), run on stable as
//! proptests from their seed corpora (fuzz/corpus/order, fuzz/corpus/npy) and mutations of them
//! (bytes flipped, cut, spliced, inserted): any text parses to an order or a refusal, an order
//! prints back to itself; any bytes read as a `.npy` header or a refusal; never a panic.

use std::path::PathBuf;

use cce_numerics::npy;
use cce_numerics::order::Order;
use proptest::prelude::*;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus")).join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 5, "{}: a seed corpus of a handful of files", dir.display());
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// The fuzz target `order`'s property.
fn order_property(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(order) = Order::parse(&text) {
        let printed = order.to_string();
        assert_eq!(Order::parse(&printed).as_ref(), Ok(&order), "{printed}");
        let _ = (order.leaves(), order.roundings());
    }
}

/// The fuzz target `npy`'s property.
fn npy_property(data: &[u8]) {
    let size = npy::header_size(data);
    if let Ok(h) = npy::header(data) {
        assert_eq!(size, Ok(h.data_offset as usize));
        assert!(h.data_offset as usize <= data.len());
        let _ = (h.elems(), h.item_size(), h.shape_text(), h.holds(2, &['f', 'V']));
    }
}

/// A seed (chosen by `pick`) mutated by `edits`: (position, byte, kind) each.
fn mutate(seeds: &[Vec<u8>], pick: usize, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = seeds[pick % seeds.len()].clone();
    for &(at, byte, kind) in edits {
        let at = if b.is_empty() { 0 } else { at % (b.len() + 1) };
        match kind % 5 {
            0 if at < b.len() => b[at] ^= byte.max(1),
            1 => b.insert(at, byte),
            2 if at < b.len() => {
                b.remove(at);
            }
            3 => b.truncate(at),
            _ => {
                // Splice in a piece of another seed.
                let other = &seeds[(pick + byte as usize) % seeds.len()];
                let piece = &other[..other.len().min(at % 17 + 1)];
                b.splice(at..at, piece.iter().copied());
            }
        }
    }
    b
}

#[test]
fn the_seeds_hold_what_they_are_for() {
    let orders = corpus("order");
    let parsed = orders.iter().filter(|t| Order::parse(&String::from_utf8_lossy(t)).is_ok()).count();
    // Every seed but the unbalanced one is an order.
    assert_eq!(parsed, orders.len() - 1);
    let npys = corpus("npy");
    let read = npys.iter().filter(|b| npy::header(b).is_ok()).count();
    // Every seed but the one with a bad shape is a header.
    assert_eq!(read, npys.len() - 1);
    for s in orders.iter().chain(&npys) {
        order_property(s);
        npy_property(s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_orders_parse_or_refuse(pick in 0usize..64, edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6)) {
        order_property(&mutate(&corpus("order"), pick, &edits));
    }

    #[test]
    fn mutated_npy_headers_read_or_refuse(pick in 0usize..64, edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6)) {
        npy_property(&mutate(&corpus("npy"), pick, &edits));
    }

    #[test]
    fn any_bytes_are_an_order_or_a_refusal(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        order_property(&data);
    }

    #[test]
    fn any_bytes_are_a_npy_header_or_a_refusal(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        npy_property(&data);
    }

    #[test]
    fn printed_orders_read_back(ranks in proptest::collection::vec(0u32..1000, 1..12)) {
        for o in [Order::sequential(&ranks), Order::pairwise(&ranks), Order::single(&ranks)] {
            prop_assert_eq!(Order::parse(&o.to_string()), Ok(o));
        }
    }
}
