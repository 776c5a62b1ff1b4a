//! Which reader a command uses: tables (CSV, LIBSVM), OCR sequences or CoNLL-U treebanks,
//! and their folds.

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
        Some("conllu") => bail!("--format conllu is a treebank: use --task parsing"),
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

/// Sentences of a CoNLL-U file (`--format conllu`), the given folds (sentence index mod 10) or
/// all of them; `heads` says whether every sentence must carry its tree.
pub fn read_treebank(
    data: &DataArgs,
    folds: Option<&str>,
    heads: multikernel::data::conllu::Heads,
) -> Result<Vec<multikernel::data::conllu::ConlluSentence>> {
    use multikernel::data::conllu::{read_conllu, select_folds};
    match data.format.as_deref() {
        None | Some("conllu") => {}
        Some(f) => bail!("--task parsing reads --format conllu, not '{f}'"),
    }
    let all = read_conllu(&data.data, heads)?;
    Ok(match folds {
        Some(list) => {
            let s = select_folds(&all, &parse_folds(list)?);
            if s.is_empty() {
                bail!("{}: no sentences in folds {list}", data.data.display());
            }
            s
        }
        None => all,
    })
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
