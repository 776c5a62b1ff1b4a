//! The table readers' front door: the file [`Format`]s, and [`read_table`] and
//! [`read_for_model`] (with their byte twins [`parse_table`] and [`parse_for_model`]), which
//! pick the reader for a file by its name or, failing that, by its first data line;
//! `looks_like` guesses what a file is, for messages. The readers are [`super::csv`] and
//! [`super::libsvm`]; what they share is `data/lines.rs` (bytes to numbered lines, parse
//! errors, numbers) and `data/rows.rs` (targets and their class order, the data set, the
//! schema a model's rows are read against).

pub use super::rows::{ModelRows, Schema, TargetKind, TargetSchema, MAX_REAL_TARGET};
// Also used at this path by `reproduce` (`crate::data::read::read_bytes`).
pub use super::lines::read_bytes;
use super::lines::Lines;
use super::Dataset;
use crate::error::{Error, Result};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// File format of a feature table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row, features first and the target last.
    Csv,
    /// libsvm / svmlight sparse format: `label index:value ...` with 1-based increasing indices.
    Libsvm,
}

impl FromStr for Format {
    type Err = Error;

    /// `csv`, or `libsvm` / `svmlight` (case-insensitive).
    fn from_str(s: &str) -> Result<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "libsvm" | "svmlight" => Ok(Format::Libsvm),
            _ => Err(Error::param("format", s, "csv or libsvm (svmlight)")),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Csv => "csv",
            Format::Libsvm => "libsvm",
        })
    }
}

impl Format {
    /// The format implied by a file name: `.csv` is CSV, `.libsvm`, `.svm` and `.svmlight`
    /// are libsvm, also behind a `.gz` (`train.csv.gz`); anything else is `None`.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let (_, ext) = name.rsplit_once('.')?;
        match ext {
            "csv" => Some(Format::Csv),
            "libsvm" | "svm" | "svmlight" => Some(Format::Libsvm),
            _ => None,
        }
    }
}

/// Reads a feature table in `format`, or in the format implied by the file name
/// ([`Format::from_path`]), or, failing that, the format its first data line looks like
/// (an `index:value` token after the label means libsvm, a comma means CSV).
///
/// `classes`: `None` collects the classes of a training file (order: `natural_order` in `data/rows.rs`);
/// `Some(list)` maps labels to the given training classes and rejects unseen labels.
/// `n_features`: the number of features a model expects. libsvm rows are padded to it and an
/// index beyond it is an error; a CSV file must have exactly that many feature columns.
pub fn read_table(
    path: &Path,
    format: Option<Format>,
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    let bytes = read_bytes(path)?;
    parse_table(path, &bytes, format, target, classes, n_features)
}

/// Parses the content of a feature table (already decompressed) as [`read_table`] reads a
/// file; `origin` only names the data in messages (a file name, or e.g. `<stdin>`) and
/// picks the format by its extension when `format` is `None`.
pub fn parse_table(
    origin: &Path,
    bytes: &[u8],
    format: Option<Format>,
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    match pick_format(origin, bytes, format)? {
        Format::Csv => super::csv::parse_csv(origin, bytes, target, classes, n_features),
        Format::Libsvm => super::libsvm::parse_libsvm(origin, bytes, target, classes, n_features),
    }
}

/// `format`, or the one implied by the name of `origin`, or the one the first data line of
/// `bytes` looks like.
fn pick_format(origin: &Path, bytes: &[u8], format: Option<Format>) -> Result<Format> {
    match format.or_else(|| Format::from_path(origin)) {
        Some(f) => Ok(f),
        None => sniff(bytes).ok_or_else(|| unknown_format_err(origin)),
    }
}

/// The error for data whose format neither the name of `origin` nor the content tells.
pub(crate) fn unknown_format_err(origin: &Path) -> Error {
    Error::data(format!(
        "{}: cannot tell the data format from the file name or its first line; \
         give it explicitly (csv or libsvm)",
        origin.display()
    ))
}

/// Reads a file to evaluate or apply a model with `schema`. CSV columns are matched by name
/// (any order; one extra column is the target; without a header, by position: `d` fields
/// for features only, `d + 1` with the target last); libsvm lines may leave out the label
/// (a first token `index:value`). The format is chosen as in [`read_table`].
pub fn read_for_model(path: &Path, format: Option<Format>, schema: &Schema) -> Result<ModelRows> {
    let bytes = read_bytes(path)?;
    parse_for_model(path, &bytes, format, schema)
}

/// Parses the content of a data file (already decompressed) as [`read_for_model`] reads a
/// file; `origin` only names the data in messages and picks the format by its extension
/// when `format` is `None`.
pub fn parse_for_model(
    origin: &Path,
    bytes: &[u8],
    format: Option<Format>,
    schema: &Schema,
) -> Result<ModelRows> {
    let (kind, classes) = schema.target_kind();
    match pick_format(origin, bytes, format)? {
        Format::Csv => super::csv::parse_csv_for_model(origin, bytes, schema),
        Format::Libsvm => super::libsvm::parse_libsvm_rows(
            origin,
            bytes,
            kind,
            classes,
            Some(schema.feature_names.len()),
            true,
        )
        .map(|(ds, labelled)| ModelRows {
            targets: labelled.then_some(ds.targets),
            x: ds.x,
        }),
    }
}

/// Guesses the format from the first non-blank, non-comment line.
fn sniff(bytes: &[u8]) -> Option<Format> {
    Lines::new(bytes)
        .filter_map(|(_, l)| l.ok())
        .find_map(sniff_line)?
}

/// What one line says about the format: `None` for a blank or comment line (look further),
/// else `Some(guess)` from the first line with content (`Some(None)`: it cannot tell).
pub(crate) fn sniff_line(line: &str) -> Option<Option<Format>> {
    let first = line.trim();
    if first.is_empty() || first.starts_with('#') {
        return None;
    }
    let mut tokens = first.split_ascii_whitespace();
    tokens.next();
    Some(if tokens.next().is_some_and(|t| t.contains(':')) {
        Some(Format::Libsvm)
    } else if first.contains(',') {
        Some(Format::Csv)
    } else {
        None
    })
}

/// What kind of file `bytes` (as read, or gunzipped) look like when it is one this crate
/// knows and a reader got the wrong one: a multikernel checkpoint or model (by their
/// header), a CoNLL-U treebank (a first token line of 10 tab-separated columns whose ID is a
/// number, or a `# sent_id` / `# text` comment), a libsvm table (`index:value` after the
/// label), a CSV table (commas and no whitespace) or a gzip file; `None` otherwise (e.g.
/// CRF++ columns). For messages only: a guess from the first lines.
pub(crate) fn looks_like(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Some("a gzip-compressed file");
    }
    let head = &bytes[..bytes.len().min(256)];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if head.starts_with(b"{") {
        if has(br#""format":"multikernel-checkpoint""#) {
            return Some("a multikernel checkpoint (the state train --checkpoint saves)");
        }
        if has(br#""multikernel-model""#) {
            return Some("a multikernel model");
        }
    }
    let lines: Vec<&str> = Lines::new(bytes)
        .take(50)
        .filter_map(|(_, l)| l.ok())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let first = *lines.first()?;
    let conllu_comment = |l: &str| l.starts_with("# sent_id") || l.starts_with("# text");
    let conllu_token = |l: &str| {
        let cols: Vec<&str> = l.split('\t').collect();
        cols.len() == 10
            && cols[0]
                .split(['-', '.'])
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    if conllu_comment(first)
        || lines
            .iter()
            .find(|l| !l.starts_with('#'))
            .is_some_and(|l| conllu_token(l))
    {
        return Some("a CoNLL-U treebank");
    }
    let t = first.trim();
    if !t.starts_with('#') {
        let mut tokens = t.split_ascii_whitespace();
        let label = tokens.next();
        let rest: Vec<&str> = tokens.collect();
        if label.is_some()
            && !rest.is_empty()
            && rest.iter().all(|tok| {
                tok.split_once(':').is_some_and(|(i, v)| {
                    i.bytes().all(|b| b.is_ascii_digit()) && v.parse::<f64>().is_ok()
                })
            })
        {
            return Some("a libsvm table");
        }
        if t.contains(',') && !t.contains([' ', '\t']) {
            return Some("a CSV table");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Matrix;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn format_parsing_and_paths() {
        assert_eq!("csv".parse::<Format>().unwrap(), Format::Csv);
        assert_eq!(" LibSVM ".parse::<Format>().unwrap(), Format::Libsvm);
        assert_eq!("svmlight".parse::<Format>().unwrap(), Format::Libsvm);
        let e = "arff".parse::<Format>().unwrap_err().to_string();
        assert!(
            e.contains("arff") && e.contains("csv") && e.contains("libsvm"),
            "{e}"
        );
        let p = |s: &str| Format::from_path(Path::new(s));
        assert_eq!(p("a/b/sonar.csv"), Some(Format::Csv));
        assert_eq!(p("x.CSV.GZ"), Some(Format::Csv));
        assert_eq!(p("a9a.libsvm"), Some(Format::Libsvm));
        assert_eq!(p("a9a.svm.gz"), Some(Format::Libsvm));
        assert_eq!(p("a9a.svmlight"), Some(Format::Libsvm));
        assert_eq!(p("a9a.txt"), None);
        assert_eq!(p("csv"), None);
        assert_eq!(p("data.gz"), None);
        assert_eq!(Format::Libsvm.to_string(), "libsvm");
    }

    /// The path readers are the byte parsers plus reading (and gunzipping) the file: the same
    /// data sets and the same messages, naming the file.
    #[test]
    fn path_readers_equal_byte_parsers() {
        let dir = tempfile::tempdir().unwrap();
        let csv = b"a,b,label\n1,2,M\n3,4,R\n";
        let svm = b"+1 1:1 3:2\n-1 2:1\n";
        let bad = b"a,b,label\n1,x,M\n";
        for (name, bytes) in [("t.csv", &csv[..]), ("t.svm", &svm[..]), ("t", &svm[..])] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let read = read_table(&path, None, TargetKind::Classes, None, None).unwrap();
            let parsed = parse_table(&path, bytes, None, TargetKind::Classes, None, None);
            assert_eq!(read, parsed.unwrap(), "{name}");
        }
        let path = dir.path().join("bad.csv");
        std::fs::write(&path, bad).unwrap();
        let read = read_table(&path, None, TargetKind::Classes, None, None).unwrap_err();
        let parsed = parse_table(&path, bad, None, TargetKind::Classes, None, None).unwrap_err();
        assert_eq!(read.to_string(), parsed.to_string());
        assert!(read
            .to_string()
            .contains("bad.csv:2: field 2 'x' is not a number"));
        // Any origin name, e.g. standard input; the format then comes from the content.
        let e = parse_table(
            Path::new("<stdin>"),
            bad,
            Some(Format::Csv),
            TargetKind::Classes,
            None,
            None,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("<stdin>:2:"), "{e}");
        let schema = Schema {
            feature_names: s(&["b", "a"]),
            target: TargetSchema::Classes(s(&["M", "R"])),
        };
        let rows = parse_for_model(Path::new("<stdin>"), csv, Some(Format::Csv), &schema).unwrap();
        assert_eq!(rows.x, Matrix::from_rows(&[vec![2.0, 1.0], vec![4.0, 3.0]]));
        let path = dir.path().join("m.csv");
        std::fs::write(&path, csv).unwrap();
        assert_eq!(read_for_model(&path, None, &schema).unwrap(), rows);
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"\n+1 1:0.5 3:2\n"), Some(Format::Libsvm));
        assert_eq!(sniff(b"a,b,label\n1,2,x\n"), Some(Format::Csv));
        assert_eq!(sniff(b"hello world\n"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn file_kinds_are_told_for_messages() {
        // A checkpoint's header line (as `checkpoint::to_bytes` writes it; the data layer
        // does not reach up to `checkpoint`).
        let ck = br#"{"format":"multikernel-checkpoint","version":1,"step":2}"#;
        assert!(looks_like(ck).unwrap().contains("checkpoint"));
        assert_eq!(
            looks_like(br#"{"format":"multikernel-model","version":2}"#),
            Some("a multikernel model")
        );
        let conllu = b"# sent_id = 1\n1\tAli\t_\t_\t_\t_\t0\troot\t_\t_\n";
        assert_eq!(looks_like(conllu), Some("a CoNLL-U treebank"));
        assert_eq!(looks_like(&conllu[14..]), Some("a CoNLL-U treebank"));
        assert_eq!(looks_like(b"a,b,label\n1,2,x\n"), Some("a CSV table"));
        assert_eq!(looks_like(b"+1 1:0.5 3:2\n"), Some("a libsvm table"));
        assert_eq!(looks_like(b"\x1f\x8b\x08"), Some("a gzip-compressed file"));
        // CRF++ columns, even with commas or colons in a token, are none of these.
        for columns in [&b"He PRP B-NP\n"[..], b"1,000 CD O\n", b"12:30 CD O\n", b""] {
            assert_eq!(looks_like(columns), None, "{columns:?}");
        }
    }
}
