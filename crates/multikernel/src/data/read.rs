//! Shared machinery of the table readers: file formats, transparent gzip, line splitting,
//! number parsing and the mapping of class labels to indices; and [`read_table`], which picks
//! the reader for a file.
//!
//! # Class order
//! When the classes are collected from a training file, they are sorted in *natural* order:
//! numerically if every label is a finite number (`-1 < 1`, `2 < 10`; ties between spellings
//! such as `1` and `1.0` broken by the string), otherwise lexicographically by bytes
//! (`M < R`, `bad < good`, `benign < malignant`, `neg < pos`). The order does not depend on
//! the order of the rows. For a binary task the class with index 1 (the second in this order)
//! is the "positive" class: `+1` for libsvm `-1/+1` or `0/1` labels, `R` for sonar, `good`
//! for ionosphere, `malignant` for breast-cancer, `pos` for pima.
//!
//! When a model's training classes are given, each label is looked up by its exact string;
//! failing that, a numeric label matches the one class with the same numeric value (so `1`
//! matches a training class `+1`). A label matching no training class is an error naming the
//! file and line.

use super::{Dataset, Matrix, Targets};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
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

/// What the target column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// Class labels (strings, even when they look like numbers).
    Classes,
    /// Real values (regression); they must be finite numbers.
    Real,
}

/// Reads a feature table in `format`, or in the format implied by the file name
/// ([`Format::from_path`]), or, failing that, the format its first data line looks like
/// (an `index:value` token after the label means libsvm, a comma means CSV).
///
/// `classes`: `None` collects the classes of a training file (order: see the module docs);
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

/// What a trained model expects of a data file: its feature columns, by name and in order,
/// and its target.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub feature_names: Vec<String>,
    pub target: TargetSchema,
}

/// The target a model predicts.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetSchema {
    /// Class labels, mapped to the model's training classes (an unseen label is an error).
    Classes(Vec<String>),
    /// Real values.
    Real,
}

impl Schema {
    /// Whether the feature names are the ones readers give columns without a header
    /// (`x1, x2, ...`): such a model matches files by position, not by name.
    pub(crate) fn has_default_names(&self) -> bool {
        self.feature_names
            .iter()
            .enumerate()
            .all(|(j, n)| *n == format!("x{}", j + 1))
    }

    /// What the target column holds, and the classes labels are mapped to.
    pub(crate) fn target_kind(&self) -> (TargetKind, Option<&[String]>) {
        match &self.target {
            TargetSchema::Classes(c) => (TargetKind::Classes, Some(c.as_slice())),
            TargetSchema::Real => (TargetKind::Real, None),
        }
    }
}

/// Rows read for a model: the features in the model's column order, and the targets when
/// the file has them (files to predict on need not).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRows {
    pub x: Matrix,
    pub targets: Option<Targets>,
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
pub fn looks_like(bytes: &[u8]) -> Option<&'static str> {
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

/// The whole content of `path`, gunzipped when it starts with the gzip magic bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .map_err(io)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Why a line cannot be read as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadLine {
    /// The line is not valid UTF-8.
    NotUtf8,
    /// A carriage return inside the line: the file ends its lines with CR alone (classic
    /// Mac OS), so that what looks like many lines is one.
    CrLineEnds,
}

/// Whether `line` (split at `\n`, its `\r\n` ending removed) holds a carriage return
/// followed by more text: the file's lines end with CR alone. Carriage returns at the end
/// of the line (`\r\r\n`, a file converted twice) are not counted.
pub(crate) fn has_cr_line_ends(line: &[u8]) -> bool {
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |p| p + 1);
    line[..end].contains(&b'\r')
}

/// Checks one line as the text readers do: no carriage return inside it
/// ([`has_cr_line_ends`]), valid UTF-8.
pub(crate) fn text_line(line: &[u8]) -> std::result::Result<&str, BadLine> {
    if has_cr_line_ends(line) {
        return Err(BadLine::CrLineEnds);
    }
    std::str::from_utf8(line).map_err(|_| BadLine::NotUtf8)
}

/// Lines of a byte buffer with 1-based numbers; `\r\n` endings and a leading UTF-8 byte
/// order mark are removed; a line that is not UTF-8, or holds a carriage return followed by
/// more text (a file with CR line ends), yields the [`BadLine`].
pub(crate) struct Lines<'a> {
    rest: Option<&'a [u8]>,
    line: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        Lines {
            rest: if bytes.is_empty() { None } else { Some(bytes) },
            line: 0,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, std::result::Result<&'a str, BadLine>);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest?;
        let (mut line, tail) = match rest.iter().position(|&b| b == b'\n') {
            Some(p) => (&rest[..p], &rest[p + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        self.rest = if tail.is_empty() { None } else { Some(tail) };
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        self.line += 1;
        Some((self.line, text_line(line)))
    }
}

/// Lines of a byte buffer as bytes, with 1-based numbers; `\r\n` endings and a leading
/// UTF-8 byte order mark are removed, nothing is decoded (the caller checks
/// [`has_cr_line_ends`]).
pub(crate) fn byte_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines = (!bytes.is_empty()).then(|| body.split(|&b| b == b'\n'));
    lines
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(k, l)| (k + 1, l.strip_suffix(b"\r").unwrap_or(l)))
}

/// A parse error at `line` of `path`.
pub(crate) fn parse_err(path: &Path, line: usize, msg: impl Into<String>) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line,
        msg: msg.into(),
    }
}

/// The message for a line with a carriage return inside it ([`has_cr_line_ends`]).
pub(crate) const CR_LINE_ENDS: &str = "a carriage return (CR) inside the line: the file's \
     lines end with CR alone (an old Mac OS text file), so it reads as one line; convert the \
     line ends to LF (e.g. tr '\\r' '\\n' < FILE > FILE.lf) or CR LF";

/// The error for a line that cannot be read as text.
pub(crate) fn line_err(path: &Path, line: usize, bad: BadLine) -> Error {
    match bad {
        BadLine::NotUtf8 => parse_err(path, line, "the line is not valid UTF-8 text"),
        BadLine::CrLineEnds => parse_err(path, line, CR_LINE_ENDS),
    }
}

/// Parses a finite number; `what` names it in the message (e.g. "field 3").
pub(crate) fn parse_number(s: &str, what: &str) -> std::result::Result<f64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(format!(
            "{what} is empty (missing values are not supported)"
        ));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{what} '{t}' is not a finite number")),
        Err(_) => Err(format!("{what} '{t}' is not a number")),
    }
}

/// Collects the targets of data rows and turns them into [`Targets`].
pub(crate) struct TargetCollector<'a> {
    path: PathBuf,
    kind: TargetKind,
    /// Training classes and their lookup tables, when given.
    fixed: Option<Fixed<'a>>,
    /// Labels seen so far (training mode), indexed in order of first appearance.
    seen: HashMap<String, usize>,
    y: Vec<usize>,
    real: Vec<f64>,
}

struct Fixed<'a> {
    classes: &'a [String],
    exact: HashMap<&'a str, usize>,
    /// Numeric value of each class that is a finite number.
    numeric: Vec<(f64, usize)>,
}

impl<'a> TargetCollector<'a> {
    pub(crate) fn new(path: &Path, kind: TargetKind, classes: Option<&'a [String]>) -> Self {
        let fixed = classes.filter(|_| kind == TargetKind::Classes).map(|c| {
            let mut exact = HashMap::new();
            let mut numeric = Vec::new();
            for (i, name) in c.iter().enumerate() {
                exact.entry(name.as_str()).or_insert(i);
                if let Ok(v) = name.trim().parse::<f64>() {
                    if v.is_finite() {
                        numeric.push((v, i));
                    }
                }
            }
            Fixed {
                classes: c,
                exact,
                numeric,
            }
        });
        TargetCollector {
            path: path.to_path_buf(),
            kind,
            fixed,
            seen: HashMap::new(),
            y: Vec::new(),
            real: Vec::new(),
        }
    }

    /// Records the target `raw` of the data row at `line`; `what` names its place in the
    /// line for messages (e.g. "field 61 (the label)").
    pub(crate) fn push(&mut self, raw: &str, line: usize, what: &str) -> Result<()> {
        let (label, value) = check_target(&self.path, self.kind, raw, line, what)?;
        match self.kind {
            TargetKind::Real => self.real.push(value.unwrap_or_default()),
            TargetKind::Classes => {
                let idx = match &self.fixed {
                    Some(f) => lookup(f, label).ok_or_else(|| {
                        parse_err(
                            &self.path,
                            line,
                            format!(
                                "label '{label}' was not seen in training (classes: {})",
                                f.classes.join(", ")
                            ),
                        )
                    })?,
                    None => {
                        let next = self.seen.len();
                        *self.seen.entry(label.to_string()).or_insert(next)
                    }
                };
                self.y.push(idx);
            }
        }
        Ok(())
    }

    /// The collected targets; training classes are sorted in natural order (module docs).
    pub(crate) fn finish(self) -> Targets {
        match (self.kind, self.fixed) {
            (TargetKind::Real, _) => Targets::Real(self.real),
            (TargetKind::Classes, Some(f)) => Targets::Classes {
                classes: f.classes.to_vec(),
                y: self.y,
            },
            (TargetKind::Classes, None) => {
                let mut by_first: Vec<(String, usize)> = self.seen.into_iter().collect();
                by_first.sort_by_key(|(_, i)| *i);
                let names: Vec<String> = by_first.into_iter().map(|(s, _)| s).collect();
                let order = natural_order(&names);
                // order[r] = first-appearance index of the class ranked r.
                let mut rank = vec![0; names.len()];
                for (r, &i) in order.iter().enumerate() {
                    rank[i] = r;
                }
                Targets::Classes {
                    classes: order.iter().map(|&i| names[i].clone()).collect(),
                    y: self.y.iter().map(|&i| rank[i]).collect(),
                }
            }
        }
    }
}

/// The largest magnitude of a regression target: its square, and the sum of the squares
/// of 10^8 such targets, stay finite (the mean squared error and the learners' squared
/// losses are computed on the targets as read).
pub const MAX_REAL_TARGET: f64 = 1e150;

/// Checks the target `raw` of the data row at `line` of `path` as [`TargetCollector::push`]
/// does (`what` names its place in the line): a real target must be a finite number of
/// magnitude at most [`MAX_REAL_TARGET`], a class label must not be empty nor a number that
/// is not finite (`NaN`, `inf`: a missing value, not a class). Returns the trimmed label
/// and, for a real target, its value.
pub(crate) fn check_target<'s>(
    path: &Path,
    kind: TargetKind,
    raw: &'s str,
    line: usize,
    what: &str,
) -> Result<(&'s str, Option<f64>)> {
    let label = raw.trim();
    match kind {
        TargetKind::Real => {
            let v = parse_number(label, what).map_err(|m| parse_err(path, line, m))?;
            if v.abs() > MAX_REAL_TARGET {
                return Err(parse_err(
                    path,
                    line,
                    format!(
                        "{what} '{label}' is too large for a regression target: expected a \
                         magnitude of at most {MAX_REAL_TARGET:e} (so that squared errors stay \
                         finite); scale the target column"
                    ),
                ));
            }
            Ok((label, Some(v)))
        }
        TargetKind::Classes if label.is_empty() => {
            Err(parse_err(path, line, format!("{what} is empty")))
        }
        TargetKind::Classes if label.parse::<f64>().is_ok_and(|v| !v.is_finite()) => {
            Err(parse_err(
                path,
                line,
                format!(
                    "{what} '{label}' is not a class label: expected a class name or a finite \
                     number ('{label}' marks a missing value); remove the row or name its class"
                ),
            ))
        }
        TargetKind::Classes => Ok((label, None)),
    }
}

fn lookup(f: &Fixed<'_>, label: &str) -> Option<usize> {
    if let Some(&i) = f.exact.get(label) {
        return Some(i);
    }
    let v = label.parse::<f64>().ok().filter(|v| v.is_finite())?;
    let mut hits = f.numeric.iter().filter(|(c, _)| *c == v);
    match (hits.next(), hits.next()) {
        (Some(&(_, i)), None) => Some(i),
        _ => None,
    }
}

/// Indices of `names` sorted in natural order: numeric when all are finite numbers (ties by
/// string), lexicographic by bytes otherwise.
pub(crate) fn natural_order(names: &[String]) -> Vec<usize> {
    let nums: Option<Vec<f64>> = names
        .iter()
        .map(|s| s.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    match nums {
        Some(v) => {
            order.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then_with(|| names[a].cmp(&names[b])))
        }
        None => order.sort_by(|&a, &b| names[a].cmp(&names[b])),
    }
    order
}

/// Checks that `rows x cols` dense values stay within what a reader may allocate.
pub(crate) fn check_dense_size(path: &Path, rows: usize, cols: usize) -> Result<()> {
    /// 2^28 values = 2 GiB of `f64`.
    const MAX_VALUES: usize = 1 << 28;
    match rows.checked_mul(cols) {
        Some(v) if v <= MAX_VALUES => Ok(()),
        _ => Err(Error::Memory {
            what: format!("{}: a dense {rows} x {cols} feature table", path.display()),
            needed: rows.saturating_mul(cols).saturating_mul(8),
            limit: MAX_VALUES * 8,
        }),
    }
}

/// The message for a file with no data row.
pub(crate) const NO_ROWS: &str = "no data rows";

/// Builds the data set once all rows are parsed; `last_line` is reported when there are none.
pub(crate) fn finish_dataset(
    path: &Path,
    x: Matrix,
    targets: TargetCollector<'_>,
    feature_names: Vec<String>,
    last_line: usize,
) -> Result<Dataset> {
    if x.rows == 0 {
        return Err(parse_err(path, last_line.max(1), NO_ROWS));
    }
    Ok(Dataset {
        x,
        targets: targets.finish(),
        feature_names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn lines_numbers_crlf_bom_and_bad_utf8() {
        let v: Vec<_> = Lines::new(b"\xEF\xBB\xBFa\r\nb\n\n\xFF\nc").collect();
        assert_eq!(
            v,
            vec![
                (1, Ok("a")),
                (2, Ok("b")),
                (3, Ok("")),
                (4, Err(BadLine::NotUtf8)),
                (5, Ok("c"))
            ]
        );
        assert_eq!(Lines::new(b"x\n").count(), 1);
        assert_eq!(Lines::new(b"").count(), 0);
        // CR line ends (an old Mac file) are named; CRs at a line's end are line ends.
        let v: Vec<_> = Lines::new(b"a,b\r1,2\r").collect();
        assert_eq!(v, vec![(1, Err(BadLine::CrLineEnds))]);
        let v: Vec<_> = Lines::new(b"a\r\r\nb\r").collect();
        assert_eq!(v, vec![(1, Ok("a\r")), (2, Ok("b"))]);
        let e = line_err(Path::new("m.csv"), 1, BadLine::CrLineEnds).to_string();
        assert!(e.starts_with("m.csv:1: a carriage return (CR)") && e.contains("CR alone"));
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

    #[test]
    fn natural_order_numeric_then_lexicographic() {
        let names = s(&["7", "10", "2", "-1", "+1"]);
        let o: Vec<&str> = natural_order(&names)
            .iter()
            .map(|&i| names[i].as_str())
            .collect();
        assert_eq!(o, vec!["-1", "+1", "2", "7", "10"]);
        let names = s(&["R", "M", "10", "2"]);
        let o: Vec<&str> = natural_order(&names)
            .iter()
            .map(|&i| names[i].as_str())
            .collect();
        assert_eq!(o, vec!["10", "2", "M", "R"]);
    }

    #[test]
    fn collector_training_and_fixed_classes() {
        let p = Path::new("t.csv");
        let mut c = TargetCollector::new(p, TargetKind::Classes, None);
        for (i, l) in ["pos", "neg", "pos", "neg", "neg"].iter().enumerate() {
            c.push(l, i + 2, "label").unwrap();
        }
        assert_eq!(
            c.finish(),
            Targets::Classes {
                classes: s(&["neg", "pos"]),
                y: vec![1, 0, 1, 0, 0]
            }
        );

        let train = s(&["-1", "+1"]);
        let mut c = TargetCollector::new(p, TargetKind::Classes, Some(&train));
        c.push("+1", 1, "label").unwrap();
        c.push("1", 2, "label").unwrap(); // numeric match
        c.push("-1.0", 3, "label").unwrap();
        let e = c.push("2", 4, "label").unwrap_err().to_string();
        assert!(
            e.contains("t.csv:4") && e.contains("'2'") && e.contains("not seen"),
            "{e}"
        );
        assert_eq!(
            c.finish(),
            Targets::Classes {
                classes: train.clone(),
                y: vec![1, 1, 0]
            }
        );

        let mut c = TargetCollector::new(p, TargetKind::Real, Some(&train));
        c.push(" 2.5 ", 1, "label").unwrap();
        assert!(c.push("inf", 2, "label").is_err());
        // A regression target whose square overflows: file, line and field named.
        c.push("-1e150", 3, "label").unwrap();
        for big in ["1e300", "-1e300", "1.1e150"] {
            let e = c
                .push(big, 4, "field 14 (the target)")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "t.csv:4: field 14 (the target) '{big}' is too large"
                )) && e.contains("at most 1e150"),
                "{e}"
            );
        }
        assert_eq!(c.finish(), Targets::Real(vec![2.5, -1e150]));

        // A class label that is a number but not finite is a missing value, not a class,
        // in training and in a file for a model; a name that is not a number is a class.
        for fixed in [None, Some(&train[..])] {
            let mut c = TargetCollector::new(p, TargetKind::Classes, fixed);
            for bad in ["NaN", "nan", "-inf", "+Infinity"] {
                let e = c
                    .push(bad, 7, "field 10 (the target)")
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.starts_with(&format!(
                        "t.csv:7: field 10 (the target) '{bad}' is not a class label"
                    )),
                    "{e}"
                );
            }
        }
        let mut c = TargetCollector::new(p, TargetKind::Classes, None);
        c.push("Nancy", 1, "label").unwrap();
        c.push("information", 2, "label").unwrap();
    }
}
