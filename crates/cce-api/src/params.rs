//! The values a user names, as types: every op, rounding, algorithm, collective, FMA selector
//! list, clamp constant and dtype that the fronts take as text is an enum or a newtype here, or
//! one of the lower crates' enums re-exported here. Each has the one [`FromStr`] the fronts
//! parse with, and a [`Display`](fmt::Display) that gives its name back.
//!
//! ## Guarantees
//! - A name is matched exactly (no case folding, no prefixes), as the CLI always has.
//! - A refusal of `FromStr` says what was given and what is expected (`'sub': expected add,
//!   fma, min or max`) and never names a flag: a front puts its own name for the parameter in
//!   front (the CLI's `--op 'sub': expected add, fma, min or max`).
//! - `Display` then `FromStr` gives the value back.

use core::convert::Infallible;
use core::fmt;
use core::str::FromStr;
use std::sync::Arc;

use cce_format::descriptor::DEFAULT_FMA_SELECTORS;
use cce_format::op::alternatives;
use cce_format::packet::GceMode;
use cce_format::{KbinOp, SdmaDtype};
use cce_host::{HostError, MinMaxConstant};

/// The collectives' values a user names: algorithms, collectives, compression, instance types,
/// reductions, and a user's MSCCL schedule ([`AllreduceParams`](crate::AllreduceParams)'s fields).
pub use cce_collectives::collective::{Algo, Collective, Compress, Hier, Instance, Inter, RedOp, UserAlgo};
/// Whether a run's outputs are checked against the exact reduction (`AllreduceParams::check`).
pub use cce_collectives::metrics::Check;
/// The numerics report's inputs (`collective::Params::inputs`).
pub use cce_collectives::numerics_report::Inputs;
/// An FMA selector's operand ([`FmaSelectors`]).
pub use cce_format::descriptor::FmaOperand;
/// A numeric type of `convert` and `generate`.
pub use cce_numerics::NumType;
/// How `generate` samples values.
pub use cce_numerics::sample::SampleKind;

use crate::error::ApiError;

/// `Display` as the name a `name()` method gives.
macro_rules! display_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

/// Which all-reduce algorithm runs: the time model's choice, one of cce's own, or a user's
/// schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AlgoChoice {
    /// `auto`: the algorithm of least model time among cce's own
    /// ([`cce_collectives::collective::choose`]).
    Auto,
    /// One of cce's own ([`Algo::ALL`]).
    Algo(Algo),
    /// A user's MSCCL XML schedule ([`crate::collective::load_algorithm`]): its `ngpus` must
    /// equal the ranks, and its `coll` the collective when one is given.
    File(Arc<UserAlgo>),
    /// A hierarchy with its pair named, `hier(intra/inter)` (what `cce repro`'s lists take; the
    /// same as `hier` with `intra` and `inter`).
    Hier(Hier),
}

impl AlgoChoice {
    /// `auto`, the algorithm's name, or `file`.
    pub fn name(&self) -> &'static str {
        match self {
            AlgoChoice::Auto => "auto",
            AlgoChoice::Algo(a) => a.name(),
            AlgoChoice::File(_) => "file",
            AlgoChoice::Hier(_) => Algo::Hier.name(),
        }
    }
}

impl AlgoChoice {
    /// The name reports give it: [`AlgoChoice::name`], a named hierarchy as `hier(intra/inter)`.
    pub fn label(&self) -> String {
        match self {
            AlgoChoice::Hier(h) => h.label(),
            other => other.name().to_string(),
        }
    }
}

impl fmt::Display for AlgoChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl FromStr for AlgoChoice {
    type Err = String;
    /// `auto`, one of [`Algo::ALL`] or `hier` by name, or `hier(intra/inter)` (`file` is no
    /// name: a schedule comes with its file, [`AlgoChoice::File`]).
    fn from_str(s: &str) -> Result<AlgoChoice, String> {
        if let Some(pair) = s.strip_prefix("hier(").and_then(|p| p.strip_suffix(')')) {
            let (intra, inter) = pair.split_once('/').ok_or_else(|| format!("'{s}': expected hier(INTRA/INTER)"))?;
            return Ok(AlgoChoice::Hier(Hier { intra: intra_algo(intra)?, inter: inter.parse()? }));
        }
        match s {
            "auto" => Ok(AlgoChoice::Auto),
            _ => Algo::from_name(s).map(AlgoChoice::Algo).ok_or_else(|| {
                format!("'{s}': expected ring, ring-2r2w, kangaring, mesh, rdh, hier, hier(INTRA/INTER) or auto")
            }),
        }
    }
}

/// A hierarchy's intra-node algorithm by name (`--intra`): one of [`Algo::ALL`]; a refusal says
/// what is expected, without the flag.
pub fn intra_algo(s: &str) -> Result<Algo, String> {
    Algo::ALL
        .into_iter()
        .find(|a| a.name() == s)
        .ok_or_else(|| format!("'{s}': expected {}", alternatives(Algo::ALL.map(Algo::name))))
}

/// How a result is rounded to its output dtype; a stochastic rounding's seed is a parameter of
/// its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoundingMode {
    /// `rne`: round to nearest, ties to even.
    #[default]
    Rne,
    /// `sr`: stochastic rounding.
    Sr,
}

impl RoundingMode {
    /// `rne` or `sr`.
    pub const fn name(self) -> &'static str {
        match self {
            RoundingMode::Rne => "rne",
            RoundingMode::Sr => "sr",
        }
    }

    /// The stochastic-rounding seed this mode and `seed` ask for: `None` for `rne`, the seed
    /// (0 when omitted) for `sr`. A seed with `rne` is refused ([`HostError::SeedWithoutSr`]):
    /// it would be ignored.
    pub fn seed(self, seed: Option<u64>) -> Result<Option<u64>, ApiError> {
        match (self, seed) {
            (RoundingMode::Rne, None) => Ok(None),
            (RoundingMode::Rne, Some(_)) => Err(HostError::SeedWithoutSr.into()),
            (RoundingMode::Sr, s) => Ok(Some(s.unwrap_or(0))),
        }
    }
}

impl FromStr for RoundingMode {
    type Err = String;
    fn from_str(s: &str) -> Result<RoundingMode, String> {
        match s {
            "rne" => Ok(RoundingMode::Rne),
            "sr" => Ok(RoundingMode::Sr),
            _ => Err(format!("'{s}': expected rne or sr")),
        }
    }
}

/// The op of a reduce through the whole path (`cce reduce`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum.
    Add,
    /// Σ scaleᵢ · xᵢ, fused.
    Fma,
    /// Minimum (with an optional clamp constant).
    Min,
    /// Maximum (with an optional clamp constant).
    Max,
}

impl ReduceOp {
    /// Every reduce op.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Min, ReduceOp::Max];

    /// The host's op.
    pub const fn kbin(self) -> KbinOp {
        match self {
            ReduceOp::Add => KbinOp::Add,
            ReduceOp::Fma => KbinOp::Fma,
            ReduceOp::Min => KbinOp::Min,
            ReduceOp::Max => KbinOp::Max,
        }
    }

    /// `add`, `fma`, `min` or `max`.
    pub const fn name(self) -> &'static str {
        self.kbin().name()
    }
}

impl FromStr for ReduceOp {
    type Err = String;
    fn from_str(s: &str) -> Result<ReduceOp, String> {
        ReduceOp::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("'{s}': expected {}", alternatives(ReduceOp::ALL.map(ReduceOp::name))))
    }
}

/// The ops the dispatcher receives, in words (`add, fma, min, max, copy or transpose`):
/// [`BuildOp`]'s ops but the gradient programs, which are not reduces.
fn dispatcher_ops() -> String {
    alternatives(BuildOp::ALL.into_iter().filter(|o| o.kbin().is_some()).map(BuildOp::name))
}

/// What `cce build` builds: a reduce op as the host's dispatcher receives it (`copy` and
/// `transpose` reach it and are refused there, as the runtime refuses them), or a gradient
/// packet program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildOp {
    /// Sum.
    Add,
    /// Σ scaleᵢ · xᵢ, fused.
    Fma,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// A copy (refused by the dispatcher).
    Copy,
    /// A transpose (refused by the dispatcher).
    Transpose,
    /// `gce-compress`: gradient packets compressing the sources.
    GceCompress,
    /// `gce-decompress`: gradient packets expanding a payload.
    GceDecompress,
}

impl BuildOp {
    /// Every op `cce build` takes.
    pub const ALL: [BuildOp; 8] = [
        BuildOp::Add,
        BuildOp::Fma,
        BuildOp::Min,
        BuildOp::Max,
        BuildOp::Copy,
        BuildOp::Transpose,
        BuildOp::GceCompress,
        BuildOp::GceDecompress,
    ];

    /// The host's op, `None` for a gradient program.
    pub const fn kbin(self) -> Option<KbinOp> {
        Some(match self {
            BuildOp::Add => KbinOp::Add,
            BuildOp::Fma => KbinOp::Fma,
            BuildOp::Min => KbinOp::Min,
            BuildOp::Max => KbinOp::Max,
            BuildOp::Copy => KbinOp::Copy,
            BuildOp::Transpose => KbinOp::Transpose,
            BuildOp::GceCompress | BuildOp::GceDecompress => return None,
        })
    }

    /// The gradient program's mode, `None` for a reduce op.
    pub const fn gce(self) -> Option<GceMode> {
        match self {
            BuildOp::GceCompress => Some(GceMode::Compress),
            BuildOp::GceDecompress => Some(GceMode::Decompress),
            _ => None,
        }
    }

    /// The name `cce build --op` takes.
    pub const fn name(self) -> &'static str {
        match self {
            BuildOp::GceCompress => "gce-compress",
            BuildOp::GceDecompress => "gce-decompress",
            other => match other.kbin() {
                Some(k) => k.name(),
                None => "",
            },
        }
    }

    /// The dispatcher's refusal of a gradient program as a reduce request (what naming it
    /// to the dispatcher has always given).
    pub(crate) fn not_a_reduce(self) -> HostError {
        HostError::OpName { name: self.name().to_string(), expected: dispatcher_ops() }
    }
}

impl From<ReduceOp> for BuildOp {
    fn from(op: ReduceOp) -> BuildOp {
        match op {
            ReduceOp::Add => BuildOp::Add,
            ReduceOp::Fma => BuildOp::Fma,
            ReduceOp::Min => BuildOp::Min,
            ReduceOp::Max => BuildOp::Max,
        }
    }
}

impl FromStr for BuildOp {
    type Err = String;
    fn from_str(s: &str) -> Result<BuildOp, String> {
        BuildOp::ALL.into_iter().find(|o| o.name() == s).ok_or_else(|| format!("'{s}': expected {}", dispatcher_ops()))
    }
}

display_name!(RoundingMode, ReduceOp, BuildOp);

/// The FMA operand selectors `a,b,c` of every FMA descriptor (`acc' = a · b + c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmaSelectors(pub [FmaOperand; 3]);

impl Default for FmaSelectors {
    /// The runtime's: input, scale, stored ([`DEFAULT_FMA_SELECTORS`]).
    fn default() -> Self {
        FmaSelectors(DEFAULT_FMA_SELECTORS)
    }
}

impl fmt::Display for FmaSelectors {
    /// `a,b,c` by name (`input,scale,stored`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c] = self.0;
        write!(f, "{},{},{}", a.name(), b.name(), c.name())
    }
}

/// Why a text is not three FMA operand selectors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorsError {
    /// An operand that is none of `stored` / `input` / `scale` (or 0..=2).
    #[error("'{0}' is not stored, input or scale")]
    Operand(String),
    /// Not three operands.
    #[error("takes three operands a,b,c")]
    Count,
}

impl FromStr for FmaSelectors {
    type Err = SelectorsError;
    /// `a,b,c`, each `stored`, `input` or `scale` (or its value 0, 1, 2), spaces around
    /// them ignored.
    fn from_str(s: &str) -> Result<FmaSelectors, SelectorsError> {
        let one = |s: &str| match s {
            "stored" | "0" => Ok(FmaOperand::Stored),
            "input" | "1" => Ok(FmaOperand::Input),
            "scale" | "2" => Ok(FmaOperand::Scale),
            _ => Err(SelectorsError::Operand(s.to_string())),
        };
        match s.split(',').map(str::trim).collect::<Vec<_>>()[..] {
            [a, b, c] => Ok(FmaSelectors([one(a)?, one(b)?, one(c)?])),
            _ => Err(SelectorsError::Count),
        }
    }
}

/// A MIN/MAX clamp constant as the user wrote it: a decimal number, or `0x` raw bits. Its value
/// exists only in a dtype — bf16 and fp16 round the number, an integer dtype range-checks it,
/// the bits must fit the width — and that dtype is another parameter (the constant's, else the
/// sources'), so the text is read when the dtype is known ([`ClampConstant::in_dtype`]), and a
/// refusal quotes it as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClampConstant(String);

impl ClampConstant {
    /// The constant `text`.
    pub fn new(text: impl Into<String>) -> ClampConstant {
        ClampConstant(text.into())
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The constant read in `dtype` (i8 u8 i16 u16 bf16 fp16).
    pub fn in_dtype(&self, dtype: SdmaDtype) -> Result<MinMaxConstant, ApiError> {
        Ok(MinMaxConstant::parse(&self.0, dtype)?)
    }
}

impl fmt::Display for ClampConstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ClampConstant {
    type Err = Infallible;
    /// Any text: it is read, and refused, in its dtype ([`ClampConstant::in_dtype`]).
    fn from_str(s: &str) -> Result<ClampConstant, Infallible> {
        Ok(ClampConstant::new(s))
    }
}

impl From<&str> for ClampConstant {
    fn from(s: &str) -> ClampConstant {
        ClampConstant::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(all: impl IntoIterator<Item = T>)
    where
        T: FromStr + fmt::Display + PartialEq + fmt::Debug,
        T::Err: fmt::Debug,
    {
        for v in all {
            assert_eq!(v.to_string().parse::<T>().unwrap(), v);
        }
    }

    #[test]
    fn names_round_trip() {
        round_trip(Algo::ALL.map(AlgoChoice::Algo).into_iter().chain([AlgoChoice::Auto]));
        round_trip([RoundingMode::Rne, RoundingMode::Sr]);
        round_trip(ReduceOp::ALL);
        round_trip(BuildOp::ALL);
        round_trip([FmaSelectors::default(), FmaSelectors([FmaOperand::Stored; 3])]);
        round_trip([ClampConstant::new(" 0x3F80")]);
        round_trip([RedOp::Add, RedOp::Min, RedOp::Max, RedOp::Avg]);
        round_trip(Collective::ALL);
        round_trip([Compress::None, Compress::Gce]);
        round_trip(Instance::ALL);
        round_trip(Inputs::ALL);
        round_trip(SampleKind::ALL);
        round_trip(NumType::ALL);
    }

    #[test]
    fn refusals_say_what_is_expected_without_a_flag() {
        let e = |r: Result<AlgoChoice, String>| r.unwrap_err();
        assert_eq!(
            e("file".parse()),
            "'file': expected ring, ring-2r2w, kangaring, mesh, rdh, hier, hier(INTRA/INTER) or auto"
        );
        assert_eq!(e("hier(ring)".parse()), "'hier(ring)': expected hier(INTRA/INTER)");
        assert_eq!(e("hier(tree/ring)".parse()), "'tree': expected ring, ring-2r2w, kangaring, mesh or rdh");
        assert_eq!(
            "hier(kangaring/rdh)".parse::<AlgoChoice>(),
            Ok(AlgoChoice::Hier(Hier { intra: Algo::KangaRing, inter: Inter::Rdh }))
        );
        assert_eq!(AlgoChoice::Hier(Hier { intra: Algo::Mesh, inter: Inter::Ring }).to_string(), "hier(mesh/ring)");
        assert_eq!(intra_algo("hier").unwrap_err(), "'hier': expected ring, ring-2r2w, kangaring, mesh or rdh");
        assert_eq!("tree".parse::<Inter>().unwrap_err(), "'tree': expected ring, mesh, single-step-mesh or rdh");
        assert_eq!("RNE".parse::<RoundingMode>().unwrap_err(), "'RNE': expected rne or sr");
        assert_eq!("copy".parse::<ReduceOp>().unwrap_err(), "'copy': expected add, fma, min or max");
        assert_eq!("num".parse::<BuildOp>().unwrap_err(), "'num': expected add, fma, min, max, copy or transpose");
        assert_eq!(
            "input,scale,nothing".parse::<FmaSelectors>().unwrap_err().to_string(),
            "'nothing' is not stored, input or scale"
        );
        assert_eq!("input,scale".parse::<FmaSelectors>(), Err(SelectorsError::Count));
        assert_eq!(
            " 1, scale ,0".parse(),
            Ok(FmaSelectors([FmaOperand::Input, FmaOperand::Scale, FmaOperand::Stored]))
        );
        assert_eq!("sum".parse(), Ok(RedOp::Add));
        assert_eq!("allgather".parse(), Ok(Collective::AllGather));
        assert_eq!("none".parse(), Ok(Compress::None));
        assert!("fp32r".parse::<NumType>().is_err());
        assert_eq!("f32".parse(), Ok(NumType::F32));
    }

    #[test]
    fn a_seed_is_for_stochastic_rounding() {
        assert_eq!(RoundingMode::Rne.seed(None).unwrap(), None);
        assert_eq!(RoundingMode::Sr.seed(None).unwrap(), Some(0));
        assert_eq!(RoundingMode::Sr.seed(Some(9)).unwrap(), Some(9));
        assert_eq!(RoundingMode::Rne.seed(Some(9)).unwrap_err().to_string(), "`seed` is for `rounding` sr");
    }
}
