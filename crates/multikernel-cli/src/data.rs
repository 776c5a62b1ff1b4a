//! Which reader a command uses: tables (CSV, LIBSVM) or OCR sequences, and their folds.

use crate::cli::DataArgs;
use anyhow::{bail, Result};
use multikernel::data::ocr::{parse_folds, read_ocr};
use multikernel::data::Format;
use multikernel::data::SequenceData;

/// `--format` of a table: csv or libsvm (`None`: from the file name or its first line).
pub fn table_format(f: &Option<String>) -> Result<Option<Format>> {
    match f.as_deref() {
        None => Ok(None),
        Some("ocr") => bail!("--format ocr is sequence data: use --task sequence"),
        Some(s) => Ok(Some(s.parse()?)),
    }
}

/// OCR sequences (`--format ocr`), the given folds or all of them.
pub fn read_sequences(data: &DataArgs, folds: Option<&str>) -> Result<SequenceData> {
    match data.format.as_deref() {
        None | Some("ocr") => {}
        Some(f) => bail!("--task sequence reads --format ocr (Taskar's letter.data), not '{f}'"),
    }
    let all = read_ocr(&data.data)?;
    Ok(match folds {
        Some(list) => {
            let d = all.select_folds(&parse_folds(list)?);
            if d.n_sequences() == 0 {
                bail!("{}: no sequences in folds {list}", data.data.display());
            }
            d
        }
        None => all,
    })
}
