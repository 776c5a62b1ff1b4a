//! libsvm / svmlight reader.
//!
//! One example a line: `label index:value index:value ... [# comment]`, whitespace
//! separated, indices 1-based and strictly increasing; absent indices are zero. An svmlight
//! `qid:N` token right after the label is accepted and ignored. Blank lines and lines that
//! start with `#` are skipped. The file may be gzip-compressed (detected by its magic bytes).
//! Rows are stored dense (`n x d`, `d` the largest index or the model's feature count), with
//! features named `x1, x2, ...` after their indices. A file must justify its dense table:
//! beyond 2^20 values (8 MiB), at most 1024 times as many values as it stores (or as it has
//! rows); a larger table (a stray huge index) is refused with [`Error::Memory`] naming the
//! index and its line.
//!
//! Class labels are kept as strings and indexed in natural order (natural order: `natural_order` in `data/rows.rs`), so
//! for the usual `-1/+1` labels the positive class `+1` has index 1.

use super::lines::{line_err, parse_err, parse_number, read_bytes, Lines};
use super::rows::{check_dense_size, finish_dataset, TargetCollector, TargetKind};
use super::{Dataset, Matrix};
use crate::error::{Error, Result};
use std::iter::Peekable;
use std::path::Path;
use std::str::SplitAsciiWhitespace;

/// Reads a libsvm file (module docs). `classes`: `None` collects the classes of a training
/// file; `Some(list)` maps labels to a model's training classes and rejects unseen labels.
/// `n_features`: `None` takes the largest index in the file as the feature count; `Some(d)`
/// pads rows to `d` features and rejects an index beyond `d`.
pub fn read_libsvm(
    path: &Path,
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    let bytes = read_bytes(path)?;
    parse_libsvm(path, &bytes, target, classes, n_features)
}

/// Parses the content of a libsvm file (already decompressed) as [`read_libsvm`] reads a
/// file; `path` only names the data in messages.
pub fn parse_libsvm(
    path: &Path,
    bytes: &[u8],
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    parse_libsvm_rows(path, bytes, target, classes, n_features, false).map(|(ds, _)| ds)
}

/// Parses libsvm `bytes`; with `unlabelled_ok`, lines may leave out the label (their first
/// token is `index:value`), all or none of them. Returns the rows and whether they had labels
/// (the targets of unlabelled rows are empty placeholders).
pub(crate) fn parse_libsvm_rows(
    path: &Path,
    bytes: &[u8],
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
    unlabelled_ok: bool,
) -> Result<(Dataset, bool)> {
    let mut targets = TargetCollector::new(path, target, classes);
    let mut labelled = LabelPresence::new(unlabelled_ok);
    // Sparse rows: (feature index from 0, value), then the row starts.
    let mut entries: Vec<(usize, f64)> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut max_index = 0usize;
    // The line holding the largest index.
    let mut max_line = 0usize;
    let mut last_line = 0;
    for (no, line) in Lines::new(bytes) {
        last_line = no;
        let line = line.map_err(|b| line_err(path, no, b))?;
        let Some(mut tokens) = line_tokens(line) else {
            continue; // blank or comment line
        };
        if labelled.check(path, no, &mut tokens)? {
            let label = take_label(path, no, &mut tokens)?;
            targets.push(label, no, LABEL)?;
        }
        starts.push(entries.len());
        parse_entries(path, no, tokens, n_features, |j, v| {
            if j >= max_index {
                max_index = j + 1;
                max_line = no;
            }
            entries.push((j, v));
        })?;
    }
    let d = n_features.unwrap_or(max_index);
    let n = starts.len();
    check_dense_size(path, n, d)?;
    if n_features.is_none() {
        check_sparse_width(path, n, d, entries.len(), max_line)?;
    }
    let mut x = Matrix::zeros(n, d);
    starts.push(entries.len());
    for r in 0..n {
        let row = x.row_mut(r);
        for &(j, v) in &entries[starts[r]..starts[r + 1]] {
            row[j] = v;
        }
    }
    let names = (1..=d).map(|j| format!("x{j}")).collect();
    let is_labelled = labelled.labelled().unwrap_or(true);
    if !is_labelled {
        // Placeholder targets of the right length (the caller ignores them).
        let placeholder = placeholder_label(target, classes);
        for _ in 0..n {
            targets.push(placeholder, last_line, LABEL)?;
        }
    }
    finish_dataset(path, x, targets, names, last_line).map(|ds| (ds, is_labelled))
}

/// The target given to the rows of a file without labels (which the caller ignores): the
/// first class, else `0`.
pub(crate) fn placeholder_label(target: TargetKind, classes: Option<&[String]>) -> &str {
    match target {
        TargetKind::Classes => classes.and_then(|c| c.first()).map_or("0", String::as_str),
        TargetKind::Real => "0",
    }
}

/// Whether the data lines of a file carry labels: all of them or none, as the first one
/// says (a first token `index:value` means no label, when files without labels are
/// accepted).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LabelPresence {
    unlabelled_ok: bool,
    /// Whether the first data line had a label, and its number.
    first: Option<(bool, usize)>,
}

impl LabelPresence {
    /// Before the first data line; `unlabelled_ok`: lines may leave out the label.
    pub(crate) fn new(unlabelled_ok: bool) -> LabelPresence {
        LabelPresence {
            unlabelled_ok,
            first: None,
        }
    }

    /// Whether the data line `no` of `path` (its `tokens`, not yet consumed) has a label;
    /// an error when it disagrees with the first data line.
    pub(crate) fn check(
        &mut self,
        path: &Path,
        no: usize,
        tokens: &mut Peekable<SplitAsciiWhitespace<'_>>,
    ) -> Result<bool> {
        let has_label = !(self.unlabelled_ok
            && tokens
                .peek()
                .is_some_and(|first| first.contains(':') && !first.starts_with("qid:")));
        match self.first {
            None => self.first = Some((has_label, no)),
            Some((l, at)) if l != has_label => {
                return Err(parse_err(
                    path,
                    no,
                    if l {
                        format!("no label, but line {at} has one (label all lines or none)")
                    } else {
                        format!("a label, but line {at} has none (label all lines or none)")
                    },
                ))
            }
            Some(_) => {}
        }
        Ok(has_label)
    }

    /// Whether the lines carry labels; `None` before the first data line.
    pub(crate) fn labelled(&self) -> Option<bool> {
        self.first.map(|(l, _)| l)
    }
}

/// How messages name the target of a line.
pub(crate) const LABEL: &str = "the label";

/// The whitespace-separated tokens of `line` before any `#` comment; `None` for a blank or
/// comment line.
pub(crate) fn line_tokens(line: &str) -> Option<Peekable<SplitAsciiWhitespace<'_>>> {
    let content = line.split_once('#').map_or(line, |(c, _)| c);
    let mut tokens = content.split_ascii_whitespace().peekable();
    tokens.peek()?;
    Some(tokens)
}

/// Takes the label, the first token of a data line (line `no` of `path`); an `index:value`
/// token there is an error.
pub(crate) fn take_label<'a>(
    path: &Path,
    no: usize,
    tokens: &mut Peekable<SplitAsciiWhitespace<'a>>,
) -> Result<&'a str> {
    let label = tokens.next().unwrap_or_default();
    if label.contains(':') {
        return Err(parse_err(
            path,
            no,
            format!("'{label}' is not a label (training lines start with the label)"),
        ));
    }
    Ok(label)
}

/// Parses the `index:value` tokens after the label (an svmlight `qid:N` first is skipped)
/// of line `no` of `path`: 1-based strictly increasing indices, at most `n_features` when
/// given, finite values. Calls `entry(index - 1, value)` for each.
pub(crate) fn parse_entries(
    path: &Path,
    no: usize,
    mut tokens: Peekable<SplitAsciiWhitespace<'_>>,
    n_features: Option<usize>,
    mut entry: impl FnMut(usize, f64),
) -> Result<()> {
    if tokens.peek().is_some_and(|t| t.starts_with("qid:")) {
        tokens.next();
    }
    let mut prev = 0usize;
    for tok in tokens {
        let err = |m: String| parse_err(path, no, m);
        let (i, v) = tok
            .split_once(':')
            .ok_or_else(|| err(format!("'{tok}' is not index:value")))?;
        let index: usize = i.parse().map_err(|_| {
            err(format!(
                "'{tok}' is not index:value (the index '{i}' is not a positive integer)"
            ))
        })?;
        if index == 0 {
            return Err(err(format!("'{tok}': feature indices start at 1")));
        }
        if index <= prev {
            return Err(err(format!(
                "'{tok}': feature index {index} after {prev}, indices must increase"
            )));
        }
        if let Some(d) = n_features {
            if index > d {
                return Err(err(format!(
                    "'{tok}': feature index {index} is beyond the {d} features expected"
                )));
            }
        }
        let value = parse_number(v, &format!("the value of feature {index}")).map_err(err)?;
        prev = index;
        entry(index - 1, value);
    }
    Ok(())
}

/// Parses the `index:value` tokens of line `no` of `path` as [`parse_entries`] does, for a
/// table of `d` features, and appends the row, dense (absent indices zero), to `data`.
pub(crate) fn push_dense_row(
    path: &Path,
    no: usize,
    tokens: Peekable<SplitAsciiWhitespace<'_>>,
    d: usize,
    data: &mut Vec<f64>,
) -> Result<()> {
    let start = data.len();
    data.resize(start + d, 0.0);
    let row = &mut data[start..];
    parse_entries(path, no, tokens, Some(d), |j, v| {
        if let Some(x) = row.get_mut(j) {
            *x = v;
        }
    })
}

/// Dense tables up to this many values are always accepted (2^20 values = 8 MiB of `f64`).
const SMALL_DENSE: usize = 1 << 20;

/// Beyond [`SMALL_DENSE`], a dense table may hold at most this many times as many values as
/// the file stores (or has rows).
const SPARSITY_FACTOR: usize = 1024;

/// Refuses a dense `n x d` table that the file's `stored` values (and `n` rows) cannot
/// justify: beyond [`SMALL_DENSE`] values, more than [`SPARSITY_FACTOR`] times as many as
/// stored. Without it a one-line file `1 268435456:1` would allocate 2 GiB.
pub(crate) fn check_sparse_width(
    path: &Path,
    n: usize,
    d: usize,
    stored: usize,
    max_line: usize,
) -> Result<()> {
    let limit = SMALL_DENSE.max(SPARSITY_FACTOR.saturating_mul(stored.max(n)));
    let values = n.saturating_mul(d);
    if values <= limit {
        return Ok(());
    }
    Err(Error::Memory {
        what: format!(
            "{}: feature index {d} (line {max_line}) makes a dense {n} x {d} feature table \
             for {stored} stored values",
            path.display()
        ),
        needed: values.saturating_mul(8),
        limit: limit.saturating_mul(8),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Targets;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn parse(text: &str, n_features: Option<usize>) -> Result<Dataset> {
        parse_libsvm(
            Path::new("t.svm"),
            text.as_bytes(),
            TargetKind::Classes,
            None,
            n_features,
        )
    }

    #[test]
    fn reads_sparse_rows() {
        let ds = parse(
            "# header comment\n+1 1:0.5 3:-2 # note\n-1 qid:3 2:1e2\n\n-1\n",
            None,
        )
        .unwrap();
        assert_eq!(
            ds.x,
            Matrix::from_rows(&[vec![0.5, 0.0, -2.0], vec![0.0, 100.0, 0.0], vec![0.0; 3]])
        );
        assert_eq!(ds.feature_names, vec!["x1", "x2", "x3"]);
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: vec!["-1".into(), "+1".into()],
                y: vec![1, 0, 0]
            }
        );
        let ds = parse("1 2:1\n", Some(5)).unwrap();
        assert_eq!(ds.x.row(0), &[0.0, 1.0, 0.0, 0.0, 0.0]);
        let ds = parse_libsvm(
            Path::new("r.svm"),
            b"2.5 1:1\n-0.5 2:1\n",
            TargetKind::Real,
            None,
            None,
        )
        .unwrap();
        assert_eq!(ds.targets, Targets::Real(vec![2.5, -0.5]));
    }

    #[test]
    fn fixed_classes_match_numerically() {
        let train = vec!["-1".to_string(), "+1".to_string()];
        let ds = parse_libsvm(
            Path::new("t.svm"),
            b"1 1:1\n-1 1:2\n",
            TargetKind::Classes,
            Some(&train),
            None,
        )
        .unwrap();
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: train.clone(),
                y: vec![1, 0]
            }
        );
        let e = parse_libsvm(
            Path::new("t.svm"),
            b"1 1:1\n3 1:2\n",
            TargetKind::Classes,
            Some(&train),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.svm:2:") && e.contains("'3'"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases: &[(&str, Option<usize>, &str)] = &[
            ("", None, "t.svm:1: no data rows"),
            ("# only a comment\n\n", None, "t.svm:2: no data rows"),
            (
                "+1 1:1\n-1 1-2\n",
                None,
                "t.svm:2: '1-2' is not index:value",
            ),
            (
                "+1 1:1\n-1 a:2\n",
                None,
                "t.svm:2: 'a:2' is not index:value",
            ),
            (
                "+1 1:1\n-1 -3:2\n",
                None,
                "t.svm:2: '-3:2' is not index:value",
            ),
            (
                "+1 0:1\n",
                None,
                "t.svm:1: '0:1': feature indices start at 1",
            ),
            (
                "+1 1:1\n-1 3:1 2:1\n",
                None,
                "t.svm:2: '2:1': feature index 2 after 3, indices must increase",
            ),
            (
                "+1 1:1\n-1 3:1 3:1\n",
                None,
                "t.svm:2: '3:1': feature index 3 after 3",
            ),
            (
                "+1 1:1 9:1\n",
                Some(4),
                "t.svm:1: '9:1': feature index 9 is beyond the 4 features expected",
            ),
            (
                "+1 1:x\n",
                None,
                "t.svm:1: the value of feature 1 'x' is not a number",
            ),
            ("+1 1:\n", None, "t.svm:1: the value of feature 1 is empty"),
            (
                "+1 1:nan\n",
                None,
                "t.svm:1: the value of feature 1 'nan' is not a finite number",
            ),
            (
                "+1 1:1\n\n-1 2:Infinity\n",
                None,
                "t.svm:3: the value of feature 2 'Infinity' is not a finite number",
            ),
        ];
        for (text, nf, want) in cases {
            let e = parse(text, *nf).unwrap_err().to_string();
            assert!(e.contains(want), "input {text:?}: got '{e}', want '{want}'");
        }
        let e = parse_libsvm(
            Path::new("t.svm"),
            b"1 1:1\nabc 1:1\n",
            TargetKind::Real,
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("t.svm:2: the label 'abc' is not a number"),
            "{e}"
        );
        let e = parse_libsvm(
            Path::new("t.svm"),
            b"1 1:1\n\xC3\x28 1:1\n",
            TargetKind::Classes,
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.svm:2:") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn huge_index_is_refused_not_allocated() {
        let e = parse("1 1:1 99999999999:1\n-1 1:2\n", None).unwrap_err();
        assert!(matches!(e, crate::error::Error::Memory { .. }), "{e}");
        assert!(e.to_string().contains("t.svm"));
        // An index too large for usize is a parse error.
        let e = parse("1 1:1 999999999999999999999999:1\n", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.svm:1:"), "{e}");
    }

    /// Fuzzing (libsvm target): `1 268435456:1`, 14 bytes, passed the 2^28-value limit and
    /// allocated a 2 GiB table. A dense table beyond 2^20 values must be justified by the
    /// stored values (at most 1024 times as many).
    #[test]
    #[ignore = "full tier: tables of 2^20 and 2^25 columns, 12 s"]
    fn index_2_pow_28_on_one_line_is_refused_not_allocated() {
        let e = parse("1 268435456:1\n", None).unwrap_err();
        assert!(matches!(e, crate::error::Error::Memory { .. }), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("t.svm") && m.contains("268435456") && m.contains("line 1"),
            "{m}"
        );
        // The bound grows with the data: 2^20 values always pass, and beyond that a table
        // at most 1024 times the stored values.
        let ds = parse("1 1048576:1\n", None).unwrap();
        assert_eq!(ds.n_features(), 1 << 20);
        assert!(parse("1 1048577:1\n", None).is_err());
        // 2000 rows of one value and a last one with two: 2001 stored values justify up
        // to 2001 x 1024 values, so 1024 columns for 2001 rows but not 1025.
        let wide = |d: usize| format!("{}-1 1:1 {d}:1\n", "1 1:1\n".repeat(2000));
        assert_eq!(parse(&wide(1024), None).unwrap().n_features(), 1024);
        let e = parse(&wide(1025), None).unwrap_err().to_string();
        assert!(e.contains("line 2001") && e.contains("2001 x 1025"), "{e}");
        // With a model's feature count, the model (not the file) sets the width.
        let ds = parse("1 1:1\n", Some(1 << 25)).unwrap();
        assert_eq!(ds.n_features(), 1 << 25);
    }

    /// Garbage bytes and random lines of plausible tokens: Ok or Err, never a panic.
    #[test]
    fn never_panics_on_garbage() {
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let tokens = [
            "1", "-1", "+1", "1:1", "2:0.5", "3:-1e3", "0:1", "1:", ":1", ":", "2:nan", "qid:4",
            "#", "7:1", "999:1", "a:b", "1:1:1", "", "\t", "é", "1e5",
        ];
        let train = vec!["-1".to_string(), "+1".to_string()];
        let (mut oks, mut errs) = (0usize, 0usize);
        for case in 0..3000 {
            let bytes: Vec<u8> = if case % 3 == 0 {
                (0..rng.gen_range(0..200))
                    .map(|_| rng.r#gen::<u8>())
                    .collect()
            } else {
                let mut s = String::new();
                for _ in 0..rng.gen_range(0..8) {
                    for _ in 0..rng.gen_range(0..6) {
                        s.push_str(tokens[rng.gen_range(0..tokens.len())]);
                        s.push(' ');
                    }
                    s.push('\n');
                }
                s.into_bytes()
            };
            for kind in [TargetKind::Classes, TargetKind::Real] {
                for cl in [None, Some(train.as_slice())] {
                    let nf = if rng.gen_bool(0.5) {
                        None
                    } else {
                        Some(rng.gen_range(0..10))
                    };
                    match parse_libsvm(Path::new("g.svm"), &bytes, kind, cl, nf) {
                        Err(_) => errs += 1,
                        Ok(ds) => {
                            oks += 1;
                            assert!(
                                !ds.is_empty() && ds.x.data.len() == ds.len() * ds.n_features()
                            );
                            assert_eq!(ds.targets.len(), ds.len());
                            assert!(nf.is_none_or(|d| d == ds.n_features()));
                        }
                    }
                }
            }
        }
        assert!(oks > 50 && errs > 50, "ok {oks}, err {errs}");
    }

    #[test]
    fn lines_without_labels_for_a_model() {
        let (ds, labelled) = parse_libsvm_rows(
            Path::new("n.svm"),
            b"1:0.5 3:1\n\n2:2\n",
            TargetKind::Classes,
            None,
            Some(3),
            true,
        )
        .unwrap();
        assert!(!labelled);
        assert_eq!(
            ds.x,
            Matrix::from_rows(&[vec![0.5, 0.0, 1.0], vec![0.0, 2.0, 0.0]])
        );
        // Training files keep requiring labels: `1:0.5` is not a label.
        assert!(parse("1:0.5 2:1\n", None).is_err());
        let e = parse_libsvm_rows(
            Path::new("n.svm"),
            b"+1 1:1\n1:2\n",
            TargetKind::Classes,
            None,
            None,
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("n.svm:2") && e.contains("label all lines or none"),
            "{e}"
        );
    }
}
