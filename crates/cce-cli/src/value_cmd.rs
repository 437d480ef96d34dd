//! `cce value`: values in one dtype, told in full by [`cce_api::dtype_values`] — the `--value`
//! options first, then the positional values, in order.

use crate::args::ValueArgs;
use crate::error::CliError;

pub(crate) fn value(a: &ValueArgs) -> Result<(), CliError> {
    let texts: Vec<&str> = a.value_opt.iter().chain(&a.values).map(String::as_str).collect();
    let values = cce_api::dtype_values(&a.dtype, &texts, a.saturate)?;
    crate::output::emit(&values.to_json(), a.json, |_| values.to_text());
    Ok(())
}
