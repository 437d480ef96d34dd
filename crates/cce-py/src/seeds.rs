//! `cce._seeds.derived_seed`: the framework adapters' seed rule (docs/MODEL.md C18), which
//! lives in cce-api ([`cce_api::collective::framework_seed`]).

use pyo3::prelude::*;

/// `cce._seeds.derived_seed`.
#[pyfunction(name = "derived_seed")]
pub(crate) fn py_derived_seed(base: u64, position: u64, step: u64) -> u64 {
    cce_api::collective::framework_seed(base, position, step)
}
