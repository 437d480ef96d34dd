//! `cce gen`: a deterministic raw test array ([`cce_api::generate`]), written atomically.

use crate::args::GenArgs;
use crate::error::CliError;
use crate::files;

pub(crate) fn generate(a: &GenArgs) -> Result<(), CliError> {
    let g = cce_api::generate(&a.dtype, a.elems, a.seed, &a.values)?;
    files::write_atomic(&a.output, &g.data)?;
    let v = g.to_json(&a.output.display().to_string());
    crate::output::emit(&v, a.json, |_| {
        format!(
            "wrote {} {} elements ({} bytes, {}, seed {}) to {}\n",
            g.elements,
            g.dtype.name(),
            g.data.len(),
            g.values,
            g.seed,
            a.output.display()
        )
    });
    Ok(())
}
