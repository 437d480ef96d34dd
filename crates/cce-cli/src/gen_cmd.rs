//! `cce gen`: a deterministic raw test array ([`cce_api::generation`]), streamed to a file in
//! constant memory and renamed into place.

use crate::args::GenArgs;
use crate::error::CliError;
use crate::files;

pub(crate) fn generate(a: &GenArgs) -> Result<(), CliError> {
    let dtype = cce_api::num_type(&a.dtype)?;
    let values = crate::args::named("--values", &a.values)?;
    let g = cce_api::generation(dtype, a.elems, a.seed, values)?;
    files::write_atomic_with(&a.output, |f| g.write_to(f).map(drop))?;
    let v = g.to_json(&a.output.display().to_string());
    crate::output::emit(&v, a.json, |_| {
        format!(
            "wrote {} {} elements ({} bytes, {}, seed {}) to {}\n",
            g.elements,
            g.dtype.name(),
            g.bytes(),
            g.values,
            g.seed,
            a.output.display()
        )
    });
    Ok(())
}
