//! What `--data` names: the file source the library reads (format and folds), and the
//! encoding of the column files `convert` writes.

use crate::cli::DataArgs;
use anyhow::{bail, Result};
use multikernel::estimator::FileSource;

/// The file `--data` (`--format`), the folds given.
pub fn file_source(d: &DataArgs, folds: &Option<String>) -> Result<FileSource> {
    let format = d.format.as_deref().map(str::parse).transpose()?;
    Ok(FileSource::new(&d.data)
        .with_format(format)
        .with_folds(folds.clone()))
}

/// The encoding named `name` (a WHATWG label: utf-8, euc-jp, shift_jis, gbk, big5,
/// windows-1252, ...), refused unless ASCII-compatible: column files are split at ASCII
/// whitespace bytes, which UTF-16 (and ISO-2022-JP) use inside characters.
pub fn ascii_compatible_encoding(name: &str) -> Result<&'static encoding_rs::Encoding> {
    let lower = name.trim().to_ascii_lowercase();
    let not_ascii = |what: &str| {
        anyhow::anyhow!(
            "--encoding {name}: {what} is not ASCII-compatible (column files are split at \
             ASCII space and tab bytes); use an ASCII-compatible encoding such as utf-8, \
             euc-jp, shift_jis, gbk or windows-1252"
        )
    };
    if lower.starts_with("utf-32") || lower.starts_with("ucs-4") || lower.starts_with("ucs4") {
        return Err(not_ascii("UTF-32"));
    }
    let Some(enc) = encoding_rs::Encoding::for_label(lower.as_bytes()) else {
        bail!(
            "--encoding {name}: unknown encoding; expected a name such as utf-8, euc-jp, \
             shift_jis, gbk, big5 or windows-1252"
        );
    };
    if !enc.is_ascii_compatible() {
        return Err(not_ascii(enc.name()));
    }
    Ok(enc)
}
