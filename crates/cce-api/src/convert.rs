//! Raw arrays: converting between dtypes (`cce convert`, ml_dtypes semantics by default) and
//! generating deterministic test arrays (`cce gen`), both through `cce-numerics`.
//!
//! ## Guarantees
//! - Names resolve as the CLI resolves them ([`num_type`]); sizes are checked against
//!   [`FILE_BUDGET`] before anything is allocated.
//! - The same inputs give the same bytes as the CLI, whatever the thread count.

use cce_format::SdmaDtype;
use cce_numerics::sample::{SampleKind, sample_par};
use cce_numerics::{NumType, Rounding};
use serde_json::{Value, json};

use crate::error::ApiError;

/// Most bytes a conversion (input + output) or a generated array may hold: 16 GiB.
pub const FILE_BUDGET: u64 = 16 << 30;

/// A dtype by its SDMA name (so fp32r gets the numerics' own refusal) or a numerics name
/// (`f32`, `e4m3fn`, …).
pub fn num_type(name: &str) -> Result<NumType, ApiError> {
    match SdmaDtype::from_name(name) {
        Some(d) => Ok(NumType::from_sdma(d)?),
        None => Ok(NumType::from_name(name)?),
    }
}

/// A checked conversion: dtypes, rounding, saturation and threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// Input dtype.
    pub from: NumType,
    /// Output dtype.
    pub to: NumType,
    /// The input dtype as it was named (for messages).
    pub from_name: String,
    /// Rounding to the output dtype.
    pub rounding: Rounding,
    /// Overflow to ±max finite instead of ±inf / NaN.
    pub saturate: bool,
    /// Threads (at least 1).
    pub threads: usize,
}

impl Conversion {
    /// Checks the names (`from`, `to`: see [`num_type`]), `rounding` (`rne` or `sr`, `seed`
    /// only with `sr`, 0 when omitted) and `threads`.
    pub fn new(
        from: &str,
        to: &str,
        rounding: &str,
        seed: Option<u64>,
        saturate: bool,
        threads: u64,
    ) -> Result<Conversion, ApiError> {
        let (from_t, to_t) = (num_type(from)?, num_type(to)?);
        let rounding = match cce_host::rounding_seed(rounding, seed)? {
            None => Rounding::Rne,
            Some(seed) => Rounding::Stochastic { seed, stream: 0 },
        };
        let threads = crate::run::check_threads(threads)?;
        Ok(Conversion { from: from_t, to: to_t, from_name: from.to_string(), rounding, saturate, threads })
    }

    /// The output length for an input of `len` bytes: whole elements, within the budget.
    pub fn output_len(&self, len: u64) -> Result<u64, ApiError> {
        let size = self.from.size();
        if len % size as u64 != 0 {
            return Err(ApiError::Ragged { len, dtype: self.from_name.clone(), size });
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

    /// The object `cce convert --json` prints for `len` input bytes read from `input` and
    /// written to `output`.
    pub fn to_json(&self, input: &str, output: &str, len: u64) -> Value {
        let (rounding, seed) = self.rounding_name();
        let elements = len / self.from.size() as u64;
        json!({
            "input": input, "output": output,
            "from": self.from.name(), "to": self.to.name(), "elements": elements,
            "bytes_read": len, "bytes_written": elements * self.to.size() as u64,
            "rounding": rounding, "seed": seed, "saturate": self.saturate,
        })
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
    from: &str,
    to: &str,
    bytes: &[u8],
    rounding: &str,
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
    /// `uniform`, `ramp` or `bits`.
    pub values: String,
    /// The seed.
    pub seed: u64,
}

impl Generated {
    /// The object `cce gen --json` prints for the array written to `output`.
    pub fn to_json(&self, output: &str) -> Value {
        json!({
            "output": output, "dtype": self.dtype.name(), "elements": self.elements,
            "bytes": self.data.len(), "values": self.values, "seed": self.seed,
        })
    }
}

/// `elems` elements of `dtype` (see [`num_type`]): `values` `uniform`, `ramp` or `bits` (as
/// [`cce_numerics::sample`] makes them); the same seed gives the same bytes.
pub fn generate(dtype: &str, elems: u64, seed: u64, values: &str) -> Result<Generated, ApiError> {
    let t = num_type(dtype)?;
    let kind = SampleKind::from_name(values)
        .ok_or_else(|| ApiError::Input(format!("--values '{values}': expected uniform, ramp or bits")))?;
    let bytes = elems.saturating_mul(t.size() as u64);
    if bytes > FILE_BUDGET {
        return Err(ApiError::Input(format!(
            "--elems {elems}: {bytes} bytes of {} exceed the {FILE_BUDGET}-byte budget",
            t.name()
        )));
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let data = sample_par(t, elems as usize, seed, kind, threads)?;
    Ok(Generated { data, dtype: t, elements: elems, values: values.to_string(), seed })
}
