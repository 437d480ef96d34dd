//! The question: every rank's input and the observed output(s), checked once ([`Problem`]).
//!
//! ## Guarantees
//! - Every shape is checked before anything is compared: equal input lengths, whole elements,
//!   an observed output per rank named at most once and of the inputs' length.
//! - An element with a NaN or an infinity among its inputs gives a NaN or an infinity whatever
//!   the order: it cannot tell one order from another, so it is left out of every count and
//!   listed ([`Problem::nonfinite`]).

use alloc::vec::Vec;

use cce_numerics::NumType;

use crate::error::ForensicsError;

/// Most ranks.
pub const MAX_RANKS: usize = 64;

/// How many element indices a listing keeps.
pub const LISTED: usize = 20;

/// A count of elements and the first [`LISTED`] of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listed {
    /// How many.
    pub count: u64,
    /// The first ones, ascending.
    pub first: Vec<u64>,
}

impl Listed {
    /// The elements of a bitmap.
    pub fn of(bits: &[u64]) -> Listed {
        let count = bits.iter().map(|w| u64::from(w.count_ones())).sum();
        let mut first = Vec::new();
        'words: for (k, &w) in bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                if first.len() == LISTED {
                    break 'words;
                }
                first.push(k as u64 * 64 + u64::from(w.trailing_zeros()));
                w &= w - 1;
            }
        }
        Listed { count, first }
    }
}

/// Every rank's input and the observed outputs, checked.
#[derive(Clone, Debug)]
pub struct Problem<'a> {
    pub(crate) dtype: NumType,
    pub(crate) inputs: Vec<&'a [u8]>,
    pub(crate) observed: Vec<(usize, &'a [u8])>,
    pub(crate) elems: usize,
    /// Elements whose inputs are all finite (bit per element).
    pub(crate) finite: Vec<u64>,
    /// Elements where the observed ranks' outputs differ.
    pub(crate) disagree: Vec<u64>,
}

/// A bitmap of `n` elements, all clear.
pub(crate) fn bitmap(n: usize) -> Vec<u64> {
    alloc::vec![0; n.div_ceil(64)]
}

/// Element `i`'s bit.
pub(crate) fn bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

/// Element `j` of a little-endian buffer of `size`-byte elements, as bits.
pub(crate) fn element(bytes: &[u8], size: usize, j: usize) -> u32 {
    let mut b = [0u8; 4];
    b[..size].copy_from_slice(&bytes[j * size..(j + 1) * size]);
    u32::from_le_bytes(b)
}

impl<'a> Problem<'a> {
    /// Checks the shapes: `inputs` one buffer of `dtype` per rank (2..=64 ranks, equal lengths,
    /// whole elements, at least one), `observed` (rank, output) pairs, each rank at most once,
    /// each as long as an input.
    pub fn new(
        dtype: NumType,
        inputs: Vec<&'a [u8]>,
        observed: Vec<(usize, &'a [u8])>,
    ) -> Result<Self, ForensicsError> {
        let Some(fmt) = dtype.float_format() else { return Err(ForensicsError::NotFloat(dtype)) };
        let ranks = inputs.len();
        if !(2..=MAX_RANKS).contains(&ranks) {
            return Err(ForensicsError::Ranks { ranks, max: MAX_RANKS });
        }
        let size = dtype.size();
        let len = inputs[0].len();
        for (rank, i) in inputs.iter().enumerate() {
            if i.len() % size != 0 {
                return Err(ForensicsError::Ragged { rank, len: i.len(), dtype, size });
            }
            if i.len() != len {
                return Err(ForensicsError::InputLengths { rank, len: i.len(), expected: len });
            }
        }
        let elems = len / size;
        if elems == 0 {
            return Err(ForensicsError::Empty);
        }
        if observed.is_empty() {
            return Err(ForensicsError::NoObserved);
        }
        for (k, &(rank, out)) in observed.iter().enumerate() {
            if rank >= ranks {
                return Err(ForensicsError::ObservedRank { rank, ranks });
            }
            if observed[..k].iter().any(|&(r, _)| r == rank) {
                return Err(ForensicsError::ObservedTwice(rank));
            }
            if out.len() != len {
                return Err(ForensicsError::ObservedLength { rank, len: out.len(), expected: len, elems, dtype });
            }
        }
        let exp = fmt.exp_mask();
        let mut finite = bitmap(elems);
        let mut disagree = bitmap(elems);
        for j in 0..elems {
            if inputs.iter().all(|i| element(i, size, j) & exp != exp) {
                finite[j / 64] |= 1 << (j % 64);
            }
            let first = &observed[0].1[j * size..(j + 1) * size];
            if observed[1..].iter().any(|(_, o)| &o[j * size..(j + 1) * size] != first) {
                disagree[j / 64] |= 1 << (j % 64);
            }
        }
        Ok(Problem { dtype, inputs, observed, elems, finite, disagree })
    }

    /// The buffer dtype.
    pub fn dtype(&self) -> NumType {
        self.dtype
    }

    /// The rank count.
    pub fn ranks(&self) -> usize {
        self.inputs.len()
    }

    /// Elements per rank.
    pub fn elems(&self) -> usize {
        self.elems
    }

    /// The observed ranks, in the order given.
    pub fn observed_ranks(&self) -> Vec<usize> {
        self.observed.iter().map(|&(r, _)| r).collect()
    }

    /// The elements with a NaN or an infinity among their inputs: left out of every count.
    pub fn nonfinite(&self) -> Listed {
        let mut bits = self.finite.clone();
        for w in &mut bits {
            *w = !*w;
        }
        clear_tail(&mut bits, self.elems);
        Listed::of(&bits)
    }

    /// The (finite) elements where the observed ranks' outputs differ from each other.
    pub fn ranks_disagree(&self) -> Listed {
        let bits: Vec<u64> = self.disagree.iter().zip(&self.finite).map(|(d, f)| d & f).collect();
        Listed::of(&bits)
    }
}

/// Clears the bits past element `n`.
pub(crate) fn clear_tail(bits: &mut [u64], n: usize) {
    if n % 64 != 0 {
        if let Some(last) = bits.last_mut() {
            *last &= (1u64 << (n % 64)) - 1;
        }
    }
}
