//! The property of the fuzz target `reveal_outputs`, shared with its stable run
//! (crates/cce-forensics/tests/reveal_fuzz.rs includes this file by path).
//!
//! The bytes choose a reveal's shape and then, run by run, what the black box answers: the
//! outputs of a real tree (so the later runs are reached), that tree's outputs with bytes
//! flipped, the inputs echoed back, the fuzzer's own bytes, or outputs of the wrong shape. The
//! property: `Reveal::observe` never panics, refuses exactly the outputs of the wrong shape
//! (and then nothing has changed: the same run is asked for again), and every sequence ends —
//! `next_inputs` becomes `None` — after at most `ranks + 2` runs it took.

use cce_forensics::eval::rne_block;
use cce_forensics::reveal::{Reveal, Revealed};
use cce_forensics::rule::Rule;
use cce_numerics::NumType;
use cce_numerics::order::Order;

/// The bytes, read front to back; zeros once they run out.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// `len` bytes: the rest of the data, repeated (zeros when there is none).
    fn fill(&mut self, len: usize) -> Vec<u8> {
        let rest = self.data.get(self.at..).unwrap_or(&[]);
        if rest.is_empty() {
            return vec![0; len];
        }
        let v: Vec<u8> = rest.iter().copied().cycle().take(len).collect();
        self.at += len.min(rest.len());
        v
    }
}

/// The tree the honest answers sum with: sequential, pairwise or one rounding over a rotation
/// of the ranks, accumulated in the buffer dtype or fp32.
fn tree(b: &mut Bytes<'_>, ranks: u32, dtype: NumType) -> Rule {
    let shift = u32::from(b.byte()) % ranks;
    let perm: Vec<u32> = (0..ranks).map(|k| (k + shift) % ranks).collect();
    let kind = b.byte();
    let order = match kind % 3 {
        0 => Order::sequential(&perm),
        1 => Order::pairwise(&perm),
        _ => Order::single(&perm),
    };
    let accum = if kind & 0x80 != 0 { dtype } else { NumType::F32 };
    Rule { order, accum }
}

/// The outputs of one run, as the bytes choose; `true` when they are of the right shape.
fn answer(b: &mut Bytes<'_>, rule: &Rule, dtype: NumType, inputs: &[Vec<u8>]) -> (Vec<Vec<u8>>, bool) {
    let len = inputs[0].len();
    let ranks = inputs.len();
    let honest = || {
        let slices: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
        let out = rne_block(rule, dtype, &slices, 0, len / dtype.size()).expect("a tree over every rank").into_owned();
        vec![out; ranks]
    };
    match b.byte() % 8 {
        0..=2 => (honest(), true),
        3 => {
            // The tree's outputs, a few bytes flipped on some ranks.
            let mut out = honest();
            for _ in 0..(b.byte() % 8) {
                let (r, at, x) = (b.byte() as usize % ranks, b.u16() as usize % len.max(1), b.byte().max(1));
                if let Some(v) = out[r].get_mut(at) {
                    *v ^= x;
                }
            }
            (out, true)
        }
        4 => (inputs.to_vec(), true),
        5 => ((0..ranks).map(|_| b.fill(len)).collect(), true),
        6 => {
            // A rank's output cut or grown.
            let mut out = honest();
            let r = b.byte() as usize % ranks;
            let cut = b.byte() as usize % 4 + 1;
            if b.byte() % 2 == 0 {
                out[r].truncate(len.saturating_sub(cut));
            } else {
                out[r].extend(std::iter::repeat_n(0, cut));
            }
            (out, len == 0)
        }
        _ => {
            // A rank too many or too few.
            let mut out = honest();
            if b.byte() % 2 == 0 {
                out.pop();
            } else {
                out.push(vec![0; len]);
            }
            (out, false)
        }
    }
}

/// The property (module docs); the answer, when the reveal ran to its end.
pub(crate) fn property(data: &[u8]) -> Option<Revealed> {
    let mut b = Bytes { data, at: 0 };
    let ranks = 2 + u32::from(b.byte()) % 15;
    let dtype = match b.byte() % 4 {
        0 => NumType::F32,
        1 => NumType::Bf16,
        2 => NumType::F16,
        _ => NumType::I32,
    };
    let need = (ranks * (ranks - 1) / 2) as usize;
    let elems = need + usize::from(b.u16()) % (4 * need + 64);
    let Ok(mut r) = Reveal::new(ranks, elems, dtype) else {
        assert!(dtype == NumType::I32 || dtype == NumType::F16, "{ranks} ranks, {elems} elements of {dtype}");
        return None;
    };
    let rule = tree(&mut b, ranks, dtype);
    let mut refused = 0;
    while let Some(inputs) = r.next_inputs() {
        assert_eq!(inputs.len(), ranks as usize);
        assert!(inputs.iter().all(|i| i.len() == elems * dtype.size()));
        let before = r.runs();
        let (outputs, shaped) = answer(&mut b, &rule, dtype, &inputs);
        match r.observe(outputs) {
            Ok(()) => {
                assert!(shaped, "outputs of the wrong shape were taken");
                assert_eq!(r.runs(), before + 1);
            }
            Err(e) => {
                assert!(!shaped, "outputs of the right shape refused: {e}");
                assert_eq!(r.runs(), before, "a refused run counts");
                assert_eq!(r.next_inputs().as_ref(), Some(&inputs), "a refused run changed the next inputs");
                refused += 1;
                // The driver stops at a refusal; a caller that retries must not loop forever.
                if refused > 3 {
                    return None;
                }
            }
        }
        assert!(r.runs() <= ranks + 2, "{} runs at {ranks} ranks", r.runs());
    }
    let got = r.result();
    assert!(got.runs <= ranks + 2);
    if got.revealed {
        assert!(!got.classes.is_empty());
        assert!(got.reason.is_none());
        // The classes cover every element of every rank they name, in order.
        let mut next = 0;
        for c in got.classes.iter().filter(|c| c.rank.is_none() || c.rank == got.classes[0].rank) {
            assert_eq!(c.first, next, "{:?}", got.classes);
            assert!(c.last >= c.first);
            next = c.last + 1;
        }
        assert_eq!(next, elems);
    } else {
        assert!(got.reason.is_some());
    }
    Some(got)
}
