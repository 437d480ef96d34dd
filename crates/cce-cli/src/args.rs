//! The command-line contract (clap derive). Command names, flags and JSON keys are a contract:
//! extend, never rename.

use clap::{Args, Parser, Subcommand};

/// cce — a bit-exact model of the Trainium CCE (compute-DMA) in-transfer reduce.
#[derive(Debug, Parser)]
#[command(name = "cce", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Encode a meta-control word or a 16-byte descriptor from its fields.
    ///
    /// Run `cce encode <ENCODER> --help` for an encoder's fields, their bits and tags.
    /// Encoders: fma-meta-ctrl min-max-meta-ctrl add-meta-ctrl gradient-meta-ctrl ext-meta-ctrl
    /// replication-meta-ctrl fma-descriptor min-max-descriptor seed-init-descriptor
    /// replication-descriptor gradient-descriptor m2s-data s2m-data.
    Encode(EncodeArgs),
    /// Decode hex bytes as an encoder's output: every field by name, with its tag.
    ///
    /// The hex is the little-endian bytes (as `cce encode` prints in bytes_hex); a one-word
    /// layout also takes a 0x-number. `meta-ctrl` lists every encoder a word can come from;
    /// `cce-info` reads the 140-byte kbin_dma_desc_cce_info_t.
    Decode(DecodeArgs),
    /// Print the op, dtype and arch tables with their tags.
    Tables,
    /// The CCE reduce packet size of study §7.1.
    PacketSize(PacketSizeArgs),
    /// The NC-v1 in/out dtype validity gate of study §7.2.
    DtypeGate(DtypeGateArgs),
}

#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub(crate) struct EncodeArgs {
    /// The encoder (see `cce encode --help`).
    #[arg(allow_hyphen_values = true)]
    pub(crate) encoder: String,
    /// `--<field> <value>` pairs; an omitted field is 0.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub(crate) fields: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DecodeArgs {
    /// The encoder whose output the bytes are, or `meta-ctrl` / `cce-info`.
    pub(crate) encoder: String,
    /// Hex bytes (little-endian, as bytes_hex); may be split over several arguments.
    #[arg(required = true, num_args = 1..)]
    pub(crate) hex: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct PacketSizeArgs {
    /// SDMA dtype (name or 0..=15).
    #[arg(long, value_parser = crate::values::parse_sdma_dtype)]
    pub(crate) dtype: cce_format::SdmaDtype,
    /// Element count.
    #[arg(long, value_parser = crate::values::parse_u64)]
    pub(crate) elems: u64,
    /// QoS priority class (0..=4).
    #[arg(long, value_parser = crate::values::parse_u64)]
    pub(crate) prio: u64,
    /// This class's cap in bytes (0 = no cap); default 65536 (MODEL).
    #[arg(long, value_parser = |s: &str| crate::values::parse_max(s, u32::MAX as u64, 32))]
    pub(crate) cap: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct DtypeGateArgs {
    /// Input SDMA dtype (name or 0..=15).
    #[arg(long = "in", value_parser = crate::values::parse_sdma_dtype)]
    pub(crate) in_dt: cce_format::SdmaDtype,
    /// Output SDMA dtype (name or 0..=15).
    #[arg(long = "out", value_parser = crate::values::parse_sdma_dtype)]
    pub(crate) out_dt: cce_format::SdmaDtype,
    /// The transfer is a plain copy (no compute op): always valid.
    #[arg(long)]
    pub(crate) no_compute: bool,
}
