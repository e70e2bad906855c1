//! `perfdata dump`.

use std::path::Path;

use crate::CliError;

pub fn run(_path: &Path, _as_json: bool, _decompress: bool) -> Result<(), CliError> {
    Ok(())
}
