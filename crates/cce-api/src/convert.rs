//! Raw arrays: converting between dtypes (`cce convert`, ml_dtypes semantics by default) and
//! generating deterministic test arrays (`cce gen`), both through `cce-numerics`.
//!
//! ## Guarantees
//! - Dtypes are [`NumType`]s, named as the CLI names them ([`num_type`], `NumType`'s
//!   `FromStr`); sizes are checked against [`FILE_BUDGET`] before anything is allocated.
//! - The same inputs give the same bytes as the CLI, whatever the thread count.

use cce_numerics::sample::{SampleKind, sample_into_par, sample_par};
use cce_numerics::{NumType, Rounding};

use crate::error::ApiError;
use crate::params::RoundingMode;

/// Most bytes a conversion (input + output) or a generated array may hold: 16 GiB.
pub const FILE_BUDGET: u64 = 16 << 30;

/// A dtype by its SDMA name (so fp32r gets the numerics' own refusal) or a numerics name
/// (`f32`, `e4m3fn`, …): `NumType`'s `FromStr`, its refusal as an [`ApiError`].
pub fn num_type(name: &str) -> Result<NumType, ApiError> {
    Ok(name.parse::<NumType>()?)
}

/// A checked conversion: dtypes, rounding, saturation and threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// Input dtype.
    pub from: NumType,
    /// Output dtype.
    pub to: NumType,
    /// Rounding to the output dtype.
    pub rounding: Rounding,
    /// Overflow to ±max finite instead of ±inf / NaN.
    pub saturate: bool,
    /// Threads (at least 1).
    pub threads: usize,
}

impl Conversion {
    /// Checks `rounding` with `seed` (only with `sr`, 0 when omitted) and `threads`.
    pub fn new(
        from: NumType,
        to: NumType,
        rounding: RoundingMode,
        seed: Option<u64>,
        saturate: bool,
        threads: u64,
    ) -> Result<Conversion, ApiError> {
        let rounding = match rounding.seed(seed)? {
            None => Rounding::Rne,
            Some(seed) => Rounding::Stochastic { seed, stream: 0 },
        };
        let threads = crate::run::check_threads(threads)?;
        Ok(Conversion { from, to, rounding, saturate, threads })
    }

    /// The output length for an input of `len` bytes: whole elements, within the budget (a
    /// ragged input is [`ApiError::Ragged`], naming the dtype by its name; a front may name it
    /// as its user spelled it).
    pub fn output_len(&self, len: u64) -> Result<u64, ApiError> {
        let size = self.from.size();
        if len % size as u64 != 0 {
            return Err(ApiError::Ragged { len, dtype: self.from.name().to_string(), size });
        }
        let out_len = len / size as u64 * self.to.size() as u64;
        if len.saturating_add(out_len) > FILE_BUDGET {
            return Err(ApiError::Input(format!("{} + {} bytes exceed the {FILE_BUDGET}-byte budget", len, out_len)));
        }
        Ok(out_len)
    }

    /// Converts `input`.
    pub fn run(&self, input: &[u8]) -> Result<Vec<u8>, ApiError> {
        let mut output = vec![0u8; self.output_len(input.len() as u64)? as usize];
        if !input.is_empty() {
            cce_numerics::convert_par(
                self.from,
                self.to,
                input,
                &mut output,
                self.rounding,
                self.saturate,
                self.threads,
            )?;
        }
        Ok(output)
    }

    /// `("rne", None)` or `("sr", Some(seed))`.
    pub fn rounding_name(&self) -> (&'static str, Option<u64>) {
        match self.rounding {
            Rounding::Rne => ("rne", None),
            Rounding::Stochastic { seed, .. } => ("sr", Some(seed)),
        }
    }
}

/// Converts `bytes` (raw little-endian elements of `from`) to `to`: [`Conversion::new`], then
/// [`Conversion::run`].
pub fn convert(
    from: NumType,
    to: NumType,
    bytes: &[u8],
    rounding: RoundingMode,
    seed: Option<u64>,
    saturate: bool,
    threads: u64,
) -> Result<Vec<u8>, ApiError> {
    Conversion::new(from, to, rounding, seed, saturate, threads)?.run(bytes)
}

/// A generated array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The bytes.
    pub data: Vec<u8>,
    /// Their dtype.
    pub dtype: NumType,
    /// Elements.
    pub elements: u64,
    /// What values it holds.
    pub values: SampleKind,
    /// The seed.
    pub seed: u64,
}

/// A checked request for a generated array (see [`generation`]), made whole ([`Self::collect`])
/// or streamed to a writer block by block in constant memory ([`Self::write_to`]). Only
/// [`generation`] makes one (its size checked against the budget).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Generation {
    /// The dtype.
    pub dtype: NumType,
    /// Elements.
    pub elements: u64,
    /// What values it holds.
    pub values: SampleKind,
    /// The seed.
    pub seed: u64,
}

/// Bytes each thread generates per block of [`Generation::write_to`]: small enough that a block
/// is still in cache when it is written, large enough that the per-block thread start-up is
/// noise (measured on the 2-vCPU Xeon, docs/MODEL.md C10).
const GEN_BLOCK: usize = 1 << 20;

impl Generation {
    /// The array's length in bytes.
    pub fn bytes(&self) -> u64 {
        self.elements * self.dtype.size() as u64
    }

    /// The whole array in memory, made on the host's threads.
    ///
    /// # Errors
    /// [`ApiError`] from the numerics (never for the dtypes [`num_type`] resolves).
    pub fn collect(self) -> Result<Generated, ApiError> {
        let data = sample_par(self.dtype, self.elements as usize, self.seed, self.values, host_threads())?;
        Ok(Generated { data, dtype: self.dtype, elements: self.elements, values: self.values, seed: self.seed })
    }

    /// Writes the array to `w` in order, holding two blocks per thread: the host's threads make
    /// the next block while one thread writes the last. Returns the bytes written.
    ///
    /// # Errors
    /// The writer's error (nothing after the failed write is attempted), or an
    /// [`std::io::ErrorKind::Other`] wrapping a numerics error (never for the dtypes
    /// [`num_type`] resolves).
    pub fn write_to(&self, w: &mut (dyn std::io::Write + Send)) -> std::io::Result<u64> {
        let size = self.dtype.size();
        let threads = host_threads();
        let round_elems = (threads * GEN_BLOCK / size).max(1) as u64;
        let fill = |buf: &mut [u8], first: u64| {
            sample_into_par(self.dtype, first, self.seed, self.values, buf, threads).map_err(std::io::Error::other)
        };
        let (mut ready, mut next) = (Vec::new(), Vec::new());
        let mut first = 0;
        let take = |first: u64| (self.elements - first).min(round_elems) as usize * size;
        ready.resize(take(0), 0);
        fill(&mut ready, 0)?;
        while !ready.is_empty() {
            first += (ready.len() / size) as u64;
            next.resize(take(first), 0);
            let (written, made) = std::thread::scope(|s| {
                let writer = s.spawn(|| w.write_all(&ready));
                let made = fill(&mut next, first);
                (writer.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), made)
            });
            written?;
            made?;
            std::mem::swap(&mut ready, &mut next);
        }
        Ok(self.bytes())
    }
}

/// The threads the host offers.
fn host_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Checks a request for `elems` elements of `dtype` holding `values` (as
/// [`cce_numerics::sample`] makes them) against [`FILE_BUDGET`]; nothing is allocated. The same
/// seed gives the same bytes.
///
/// # Errors
/// [`ApiError::Input`] for a size over the budget.
pub fn generation(t: NumType, elems: u64, seed: u64, values: SampleKind) -> Result<Generation, ApiError> {
    let bytes = elems.saturating_mul(t.size() as u64);
    if bytes > FILE_BUDGET {
        return Err(ApiError::Input(format!(
            "`elems` {elems}: {bytes} bytes of {} exceed the {FILE_BUDGET}-byte budget",
            t.name()
        )));
    }
    Ok(Generation { dtype: t, elements: elems, values, seed })
}

/// `elems` elements of `dtype`, whole: [`generation`] then [`Generation::collect`].
///
/// # Errors
/// As [`generation`].
pub fn generate(dtype: NumType, elems: u64, seed: u64, values: SampleKind) -> Result<Generated, ApiError> {
    generation(dtype, elems, seed, values)?.collect()
}
