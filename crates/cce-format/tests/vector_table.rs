//! The encoder vector table (`tests/data/encoder-vectors.txt`), row by row, against the Rust
//! functions. The same table drives the C library's test (`crates/cce-capi/tests/c`), so the
//! runtime's names and argument names in it are the C ones; this file maps each to its Rust
//! function. Expected values in the table are worked out by hand from the study's formulas.

use std::collections::HashMap;

use cce_format::descriptor::raw as desc;
use cce_format::dtype::{self, SdmaDtype};
use cce_format::limits::{self, PrioCaps};
use cce_format::meta_ctrl::raw as mc;
use cce_format::op;

const TABLE: &str = include_str!("data/encoder-vectors.txt");

/// What a row expects.
#[derive(Debug, PartialEq)]
enum Outcome {
    Words(Vec<u32>),
    Value(u64),
    Error(String),
}

struct Row<'a> {
    line: usize,
    function: &'a str,
    args: HashMap<&'a str, u64>,
    expected: &'a str,
}

fn number(text: &str) -> u64 {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("{text}: {e}")),
        None => text.parse().unwrap_or_else(|e| panic!("{text}: {e}")),
    }
}

fn rows() -> Vec<Row<'static>> {
    let mut rows = Vec::new();
    for (i, line) in TABLE.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (call, expected) = line.split_once("=>").unwrap_or_else(|| panic!("line {line_no}: no =>"));
        let mut words = call.split_whitespace();
        let function = words.next().unwrap();
        let args = words
            .map(|a| {
                let (k, v) = a.split_once('=').unwrap_or_else(|| panic!("line {line_no}: {a} is not name=value"));
                (k, number(v))
            })
            .collect();
        rows.push(Row { line: line_no, function, args, expected: expected.trim() });
    }
    rows
}

impl Row<'_> {
    fn arg(&self, name: &str) -> u32 {
        let v = *self.args.get(name).unwrap_or_else(|| panic!("line {}: {} needs {name}", self.line, self.function));
        u32::try_from(v).unwrap_or_else(|_| panic!("line {}: {name} does not fit 32 bits", self.line))
    }

    fn expected(&self) -> Outcome {
        if let Some(message) = self.expected.strip_prefix('!') {
            return Outcome::Error(message.trim().to_string());
        }
        let parts: Vec<&str> = self.expected.split_whitespace().collect();
        if parts[0].starts_with("0x") {
            Outcome::Words(parts.iter().map(|p| number(p) as u32).collect())
        } else {
            assert_eq!(parts.len(), 1, "line {}", self.line);
            Outcome::Value(number(parts[0]))
        }
    }

    /// Calls the Rust function the row names.
    fn call(&self) -> Outcome {
        let a = |n: &str| self.arg(n);
        let words = |w: &[u32]| Outcome::Words(w.to_vec());
        let value = |r: Result<u64, cce_format::FormatError>| match r {
            Ok(v) => Outcome::Value(v),
            Err(e) => Outcome::Error(e.to_string()),
        };
        match self.function {
            "al_sdma_m2s_build_fma_meta_ctrl" => words(&[mc::fma_meta_ctrl(
                a("sub"),
                a("in_dt"),
                a("scale_dt"),
                a("accum_dt"),
                a("f4"),
                a("f5"),
                a("f6"),
            )]),
            "al_sdma_m2s_build_min_max_meta_ctrl" => words(&[mc::min_max_meta_ctrl(
                a("sub"),
                a("const_dt"),
                a("in_dt"),
                a("out_dt"),
                a("accum_dt"),
                a("notif"),
                a("wrbar"),
                a("use_const"),
                a("last"),
            )]),
            "al_sdma_m2s_build_add_meta_ctrl" => {
                words(&[mc::add_meta_ctrl(a("sub"), a("out_dt"), a("accum_dt"), a("last"), a("wrbar"), a("f"))])
            }
            "al_sdma_m2s_build_gradient_meta_ctrl" => words(&[mc::gradient_meta_ctrl(
                a("sub"),
                a("in_dt"),
                a("scale_dt"),
                a("accum_dt"),
                a("wrbar"),
                a("f"),
                a("last"),
            )]),
            "al_sdma_m2s_build_cce_ext_meta_ctrl" => words(&[mc::ext_meta_ctrl(a("sub"), a("mid_dt"), a("accum_dt"))]),
            "al_sdma_m2s_build_replication_meta_ctrl" => words(&[mc::replication_meta_ctrl(a("mode"), a("count"))]),
            "al_sdma_m2s_build_fma_descriptor" => words(&desc::fma_descriptor(
                a("meta_idx"),
                a("a_sel"),
                a("b_sel"),
                a("c_sel"),
                a("scale"),
                a("sema"),
                a("wb"),
                a("a8"),
                a("sub"),
                a("last"),
            )),
            "al_sdma_m2s_build_min_max_descriptor" => words(&desc::min_max_descriptor(
                a("meta_idx"),
                a("constant"),
                a("length"),
                a("use_const"),
                a("const_dt"),
                a("wb"),
            )),
            "al_sdma_m2s_build_seed_init_descriptor" => words(&desc::seed_init_descriptor(a("seed_en"))),
            "al_sdma_m2s_build_replication_descriptor" => words(&desc::replication_descriptor(
                a("meta_idx"),
                a("wb"),
                a("mode"),
                a("count"),
                a("more"),
                a("ext_meta"),
            )),
            "al_sdma_m2s_build_gradient_descriptor" => words(&desc::gradient_descriptor(
                a("meta_idx"),
                a("wb"),
                a("mode"),
                a("length"),
                a("more"),
                a("header"),
            )),
            "kbin_cce_op_to_sdma_cce_op" => {
                value(op::kbin_cce_op_to_sdma_cce_op(a("op") as u64).map(|o| o.value() as u64))
            }
            "kbin_dtype_to_sdma_dtype" => value(dtype::kbin_dtype_to_sdma_dtype(a("dtype")).map(|d| d.value() as u64)),
            "kbin_get_dtype_size" => Outcome::Value(dtype::kbin_get_dtype_size(a("dtype")) as u64),
            "sdma_data_type_size" => value(SdmaDtype::from_value(a("sdma_dtype") as u64).map(|d| d.bytes() as u64)),
            "encd_get_cce_reduce_packet_size" => {
                let caps = PrioCaps::default().with_cap(a("priority_class"), a("prio_pkt_size"));
                value(
                    SdmaDtype::from_value(a("sdma_dtype") as u64).and_then(|d| {
                        limits::reduce_packet_size(d, a("elem_count") as u64, a("priority_class"), &caps)
                    }),
                )
            }
            "has_valid_dma_cce_inout_dtype_nc_v1" => {
                Outcome::Value(limits::dtype_gate_nc_v1(a("compute_op") != 0, a("in_dt"), a("out_dt")) as u64)
            }
            "aws_hal_get_sdma_max_cce_elements" => value(limits::max_cce_elements(a("arch")).map(u64::from)),
            other => panic!("line {}: no function {other}", self.line),
        }
    }
}

#[test]
fn every_row_of_the_table_holds() {
    let rows = rows();
    assert!(rows.len() >= 90, "only {} rows read", rows.len());
    for row in &rows {
        assert_eq!(row.call(), row.expected(), "line {}: {}", row.line, row.function);
    }
}

#[test]
fn the_table_covers_every_runtime_function() {
    let rows = rows();
    for f in [
        "al_sdma_m2s_build_fma_meta_ctrl",
        "al_sdma_m2s_build_min_max_meta_ctrl",
        "al_sdma_m2s_build_add_meta_ctrl",
        "al_sdma_m2s_build_gradient_meta_ctrl",
        "al_sdma_m2s_build_cce_ext_meta_ctrl",
        "al_sdma_m2s_build_replication_meta_ctrl",
        "al_sdma_m2s_build_fma_descriptor",
        "al_sdma_m2s_build_min_max_descriptor",
        "al_sdma_m2s_build_seed_init_descriptor",
        "al_sdma_m2s_build_replication_descriptor",
        "al_sdma_m2s_build_gradient_descriptor",
        "kbin_cce_op_to_sdma_cce_op",
        "kbin_dtype_to_sdma_dtype",
        "kbin_get_dtype_size",
        "sdma_data_type_size",
        "encd_get_cce_reduce_packet_size",
        "has_valid_dma_cce_inout_dtype_nc_v1",
        "aws_hal_get_sdma_max_cce_elements",
    ] {
        assert!(rows.iter().any(|r| r.function == f), "no row for {f}");
    }
    // Every table entry of sdma_data_type_size and CSWTCH.19, one row each.
    for (f, n) in [("sdma_data_type_size", 16), ("kbin_dtype_to_sdma_dtype", 15)] {
        let ok = rows.iter().filter(|r| r.function == f && !r.expected.starts_with('!')).count();
        assert_eq!(ok, n, "{f}");
    }
}

#[test]
fn a_wrong_row_is_caught() {
    // The runner itself: a row whose expectation is off by one bit must not pass.
    let row = Row {
        line: 0,
        function: "al_sdma_m2s_build_add_meta_ctrl",
        args: [("sub", 0), ("out_dt", 6), ("accum_dt", 10), ("last", 1), ("wrbar", 0), ("f", 0)].into(),
        expected: "0x020A6081",
    };
    assert_ne!(row.call(), row.expected());
}
