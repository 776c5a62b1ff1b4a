//! CSV reader: features first, the target in the last column.
//!
//! Format accepted (the layout of the shipped `data/uci/*.csv` tables):
//! - fields separated by commas (or by tabs / semicolons when the first line has no comma);
//!   surrounding spaces are ignored; a field may be quoted (`"a, b"`, `""` for a quote);
//! - the first non-blank line is a header naming the columns when any of its feature fields
//!   is not a number, its last field is not a number for a real target, or its last field is
//!   `label`, `class`, `target` or `y`; otherwise the file has no header and the features are
//!   named `x1, x2, ...`;
//! - every other non-blank line is a data row with as many fields as the first line; feature
//!   values must be finite numbers (missing values such as `?` or an empty field are errors);
//! - the file may be gzip-compressed (detected by its magic bytes).
//!
//! Class labels are kept as strings and indexed in natural order (natural order: `natural_order` in `data/rows.rs`).

use super::lines::{line_err, parse_err, parse_number, read_bytes, Lines};
use super::rows::{finish_dataset, ModelRows, Schema, TargetCollector, TargetKind, NO_ROWS};
use super::{Dataset, Matrix};
use crate::error::Result;
use std::path::Path;

/// Reads a CSV table (module docs). `classes`: `None` collects the classes of a training
/// file; `Some(list)` maps labels to a model's training classes and rejects unseen labels
/// with the file and line. For a [`TargetKind::Real`] target the last column must hold
/// finite numbers.
pub fn read_csv(path: &Path, target: TargetKind, classes: Option<&[String]>) -> Result<Dataset> {
    let bytes = read_bytes(path)?;
    parse_csv(path, &bytes, target, classes, None)
}

/// The field delimiter the first non-blank line implies: a comma, else a tab, else a
/// semicolon (a comma when it has none of them).
pub(crate) fn delimiter(first: &str) -> char {
    if first.contains(',') {
        ','
    } else if first.contains('\t') {
        '\t'
    } else if first.contains(';') {
        ';'
    } else {
        ','
    }
}

/// Splits one line into trimmed, unquoted fields.
pub(crate) fn split_fields(line: &str, delim: char) -> std::result::Result<Vec<String>, String> {
    if !line.contains('"') {
        return Ok(line.split(delim).map(|f| f.trim().to_string()).collect());
    }
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        // One field: optional spaces, then either a quoted string or plain text.
        while chars
            .peek()
            .is_some_and(|c| *c == ' ' || (*c == '\t' && delim != '\t'))
        {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => {
                        return Err(format!(
                            "field {} has an unterminated quote",
                            fields.len() + 1
                        ))
                    }
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.peek().is_some_and(|c| *c != delim) {
                let c = chars.next().unwrap_or(' ');
                if !c.is_whitespace() {
                    return Err(format!(
                        "field {}: unexpected '{c}' after a closing quote",
                        fields.len() + 1
                    ));
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == delim {
                    break;
                }
                if c == '"' {
                    return Err(format!(
                        "field {}: a quote inside an unquoted field",
                        fields.len() + 1
                    ));
                }
                field.push(c);
                chars.next();
            }
            field = field.trim().to_string();
        }
        fields.push(field);
        match chars.next() {
            Some(_) => continue, // the delimiter
            None => return Ok(fields),
        }
    }
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok()
}

/// The message for a file without a non-blank line.
pub(crate) const EMPTY_FILE: &str = "no data rows (the file is empty)";

/// What the first non-blank line of a CSV table fixes: the delimiter, the number of
/// columns, the feature names (from the header, or `x1, x2, ...`) and, without a header, the
/// fields of the first data row.
pub(crate) struct CsvLayout {
    pub(crate) delim: char,
    /// Fields per line (the features, then the target).
    pub(crate) n_cols: usize,
    /// Feature columns (`n_cols - 1`).
    pub(crate) d: usize,
    pub(crate) feature_names: Vec<String>,
    /// The first line's fields when it is a data row (no header), else `None`.
    pub(crate) first_row: Option<Vec<String>>,
}

impl CsvLayout {
    /// Reads the first non-blank line `first` (line `first_no` of `path`): splits it, checks
    /// there are at least two columns (exactly `n_features + 1` when given) and decides
    /// whether it is a header (module docs).
    pub(crate) fn new(
        path: &Path,
        first_no: usize,
        first: &str,
        target: TargetKind,
        n_features: Option<usize>,
    ) -> Result<CsvLayout> {
        let delim = delimiter(first);
        let head = split_fields(first, delim).map_err(|m| parse_err(path, first_no, m))?;
        let n_cols = head.len();
        if n_cols < 2 {
            return Err(parse_err(
                path,
                first_no,
                format!(
                    "found {n_cols} column, expected at least 2 (the features, then the \
                     target) separated by commas"
                ),
            ));
        }
        let d = n_cols - 1;
        if let Some(want) = n_features {
            if want != d {
                return Err(parse_err(
                    path,
                    first_no,
                    format!("{d} feature columns, expected {want} (the model's features)"),
                ));
            }
        }
        let last = head[d].as_str();
        let is_header = head[..d].iter().any(|f| !is_number(f))
            || (target == TargetKind::Real && !is_number(last))
            || ["label", "class", "target", "y"].contains(&last.to_ascii_lowercase().as_str());
        let (feature_names, first_row) = if is_header {
            let names = head[..d]
                .iter()
                .enumerate()
                .map(|(j, h)| {
                    if h.is_empty() {
                        format!("x{}", j + 1)
                    } else {
                        h.clone()
                    }
                })
                .collect();
            (names, None)
        } else {
            ((1..=d).map(|j| format!("x{j}")).collect(), Some(head))
        };
        Ok(CsvLayout {
            delim,
            n_cols,
            d,
            feature_names,
            first_row,
        })
    }
}

/// How messages name the target of a table with `n_cols` columns.
pub(crate) fn target_what(n_cols: usize) -> String {
    format!("field {n_cols} (the target)")
}

/// Checks that the data row at line `no` has `n_cols` fields and appends its feature values
/// (the first `n_cols - 1` fields, finite numbers) to `data`; returns the target field.
pub(crate) fn parse_row<'f>(
    path: &Path,
    no: usize,
    fields: &'f [String],
    n_cols: usize,
    data: &mut Vec<f64>,
) -> Result<&'f str> {
    if fields.len() != n_cols {
        return Err(parse_err(
            path,
            no,
            format!("expected {n_cols} fields, found {}", fields.len()),
        ));
    }
    let d = n_cols - 1;
    for (j, f) in fields[..d].iter().enumerate() {
        let v = parse_number(f, &format!("field {}", j + 1)).map_err(|m| parse_err(path, no, m))?;
        data.push(v);
    }
    Ok(&fields[d])
}

/// Parses the content of a CSV table (already decompressed) as [`read_csv`] reads a file;
/// `path` only names the data in messages. With `n_features` the table must have exactly
/// that many feature columns.
pub fn parse_csv(
    path: &Path,
    bytes: &[u8],
    target: TargetKind,
    classes: Option<&[String]>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    let mut lines = Lines::new(bytes);
    let mut last_line = 0;
    // The first non-blank line fixes the delimiter, the column count and the header.
    let (first_no, first) = loop {
        match lines.next() {
            None => return Err(parse_err(path, last_line.max(1), EMPTY_FILE)),
            Some((no, Err(b))) => return Err(line_err(path, no, b)),
            Some((no, Ok(l))) => {
                last_line = no;
                if !l.trim().is_empty() {
                    break (no, l);
                }
            }
        }
    };
    let layout = CsvLayout::new(path, first_no, first, target, n_features)?;
    let CsvLayout {
        delim, n_cols, d, ..
    } = layout;
    let mut data: Vec<f64> = Vec::new();
    let mut n_rows = 0usize;
    let mut targets = TargetCollector::new(path, target, classes);
    let what = target_what(n_cols);
    let mut row = |no: usize, fields: &[String]| -> Result<()> {
        let t = parse_row(path, no, fields, n_cols, &mut data)?;
        targets.push(t, no, &what)?;
        n_rows += 1;
        Ok(())
    };
    if let Some(first_row) = &layout.first_row {
        row(first_no, first_row)?;
    }
    let feature_names = layout.feature_names;
    for (no, l) in lines {
        last_line = no;
        let l = l.map_err(|b| line_err(path, no, b))?;
        if l.trim().is_empty() {
            continue;
        }
        let fields = split_fields(l, delim).map_err(|m| parse_err(path, no, m))?;
        row(no, &fields)?;
    }
    let x = Matrix::from_vec(n_rows, d, data);
    finish_dataset(path, x, targets, feature_names, last_line)
}

/// Reads a CSV table whose header names a column of row weights, `weight_column` (not
/// the target, the last column): the table without that column (as [`read_csv`] reads it)
/// and one weight per row, each a finite number `>= 0` (errors name the file, the line and
/// the value).
pub(crate) fn read_csv_with_weights(
    path: &Path,
    target: TargetKind,
    weight_column: &str,
) -> Result<(Dataset, Vec<f64>)> {
    parse_csv_with_weights(path, &read_bytes(path)?, target, weight_column)
}

/// [`read_csv_with_weights`] on the file's bytes (`path` names it in errors).
pub(crate) fn parse_csv_with_weights(
    path: &Path,
    bytes: &[u8],
    target: TargetKind,
    weight_column: &str,
) -> Result<(Dataset, Vec<f64>)> {
    // The file without the weight column, line for line (the errors keep their lines).
    let mut rest = String::with_capacity(bytes.len());
    let mut weights = Vec::new();
    let mut layout: Option<(char, usize, usize)> = None;
    let what = format!("the weight (column `{weight_column}`)");
    for (no, line) in Lines::new(bytes) {
        let line = line.map_err(|b| line_err(path, no, b))?;
        if !line.trim().is_empty() {
            let (delim, fields) = match layout {
                Some((delim, ..)) => (delim, split_fields(line, delim)),
                None => (delimiter(line), split_fields(line, delimiter(line))),
            };
            let fields = fields.map_err(|m| parse_err(path, no, m))?;
            let j = match layout {
                Some((_, j, n)) => {
                    if fields.len() != n {
                        return Err(parse_err(
                            path,
                            no,
                            format!("{} fields, the header has {n}", fields.len()),
                        ));
                    }
                    let w = parse_number(&fields[j], &what).map_err(|m| parse_err(path, no, m))?;
                    if !(w.is_finite() && w >= 0.0) {
                        return Err(parse_err(
                            path,
                            no,
                            format!("{what} is {}: a finite number >= 0 is needed", fields[j]),
                        ));
                    }
                    weights.push(w);
                    j
                }
                None => {
                    let j = fields
                        .iter()
                        .position(|f| f == weight_column)
                        .ok_or_else(|| {
                            parse_err(
                                path,
                                no,
                                format!(
                                "no column named `{weight_column}` in the header (the columns: \
                                 {})",
                                fields.join(", ")
                            ),
                            )
                        })?;
                    if j + 1 == fields.len() {
                        return Err(parse_err(
                            path,
                            no,
                            format!(
                                "`{weight_column}` is the target column (the last one); the \
                                 weights need a column of their own"
                            ),
                        ));
                    }
                    layout = Some((delim, j, fields.len()));
                    j
                }
            };
            let kept: Vec<String> = fields
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != j)
                .map(|(_, f)| {
                    if f.contains(delim) || f.contains('"') {
                        format!("\"{}\"", f.replace('"', "\"\""))
                    } else {
                        f.clone()
                    }
                })
                .collect();
            rest.push_str(&kept.join(&delim.to_string()));
        }
        rest.push('\n');
    }
    let data = parse_csv(path, rest.as_bytes(), target, None, None)?;
    if data.len() != weights.len() {
        return Err(crate::error::Error::data(format!(
            "{}: {} rows but {} weights (is the first line a header?)",
            path.display(),
            data.len(),
            weights.len()
        )));
    }
    Ok((data, weights))
}

/// Parses CSV `bytes` for a model with `schema` (see [`super::read::read_for_model`]):
/// columns matched by header name, or by position without a header (or when the model's
/// features carry the default names `x1, x2, ...`); the target column is optional.
pub(crate) fn parse_csv_for_model(path: &Path, bytes: &[u8], schema: &Schema) -> Result<ModelRows> {
    let (kind, classes) = schema.target_kind();
    let mut lines = Lines::new(bytes);
    let mut last_line = 0;
    let (first_no, first) = loop {
        match lines.next() {
            None => return Err(parse_err(path, last_line.max(1), EMPTY_FILE)),
            Some((no, Err(b))) => return Err(line_err(path, no, b)),
            Some((no, Ok(l))) => {
                last_line = no;
                if !l.trim().is_empty() {
                    break (no, l);
                }
            }
        }
    };
    let layout = ModelCsvLayout::new(path, first_no, first, schema)?;
    let mut data: Vec<f64> = Vec::new();
    let mut n_rows = 0usize;
    let mut targets = TargetCollector::new(path, kind, classes);
    let mut row = |no: usize, fields: &[String]| -> Result<()> {
        if let Some(t) = layout.parse_row(path, no, fields, &mut data)? {
            targets.push(t, no, &layout.target_what)?;
        }
        n_rows += 1;
        Ok(())
    };
    if let Some(first_row) = &layout.first_row {
        row(first_no, first_row)?;
    }
    for (no, l) in lines {
        last_line = no;
        let l = l.map_err(|b| line_err(path, no, b))?;
        if l.trim().is_empty() {
            continue;
        }
        let fields = split_fields(l, layout.delim).map_err(|m| parse_err(path, no, m))?;
        row(no, &fields)?;
    }
    if n_rows == 0 {
        return Err(parse_err(path, last_line.max(1), NO_ROWS));
    }
    Ok(ModelRows {
        x: Matrix::from_vec(n_rows, schema.feature_names.len(), data),
        targets: layout.target_col.map(|_| targets.finish()),
    })
}

/// How the columns of a CSV file map to a model's features and target, as its first
/// non-blank line fixes them (see [`super::read::read_for_model`]); shared by the
/// whole-file reader ([`parse_csv_for_model`]) and the streamed one
/// ([`super::model_stream`]).
pub(crate) struct ModelCsvLayout {
    pub(crate) delim: char,
    /// Fields per line.
    pub(crate) n_cols: usize,
    /// The file column of each model feature, in the model's order.
    pub(crate) cols: Vec<usize>,
    /// The target column, when the file has one.
    pub(crate) target_col: Option<usize>,
    /// How messages name the target field.
    pub(crate) target_what: String,
    /// The first line's fields when it is a data row (no header), else `None`.
    pub(crate) first_row: Option<Vec<String>>,
}

impl ModelCsvLayout {
    /// Reads the first non-blank line `first` (line `first_no` of `path`) for a model with
    /// `schema`: a header naming each of the model's features once (any order, at most one
    /// more column: the target), or a data row whose fields are matched by position (`d`
    /// fields, or `d + 1` with the target last).
    pub(crate) fn new(
        path: &Path,
        first_no: usize,
        first: &str,
        schema: &Schema,
    ) -> Result<ModelCsvLayout> {
        let d = schema.feature_names.len();
        let (kind, _) = schema.target_kind();
        let delim = delimiter(first);
        let head = split_fields(first, delim).map_err(|m| parse_err(path, first_no, m))?;
        let n_cols = head.len();
        let all_named = schema
            .feature_names
            .iter()
            .all(|name| head.iter().filter(|h| *h == name).count() == 1);
        let is_header = all_named
            || head[..n_cols.min(d)].iter().any(|f| !is_number(f))
            || (n_cols == d + 1
                && (["label", "class", "target", "y"]
                    .contains(&head[d].to_ascii_lowercase().as_str())
                    || (kind == TargetKind::Real && !is_number(&head[d]))));
        // Column of each model feature, and the target column if any.
        let (cols, target_col): (Vec<usize>, Option<usize>) = if is_header && all_named {
            let cols: Vec<usize> = schema
                .feature_names
                .iter()
                .map(|name| head.iter().position(|h| h == name).unwrap_or(0))
                .collect();
            let rest: Vec<usize> = (0..n_cols).filter(|j| !cols.contains(j)).collect();
            match rest.as_slice() {
                [] => (cols, None),
                [t] => (cols, Some(*t)),
                _ => {
                    let names: Vec<String> =
                        rest.iter().map(|&j| format!("'{}'", head[j])).collect();
                    return Err(parse_err(
                        path,
                        first_no,
                        format!(
                            "columns {} are not features of the model; a file for the model \
                             holds its {d} feature columns and at most one more, the target",
                            names.join(", ")
                        ),
                    ));
                }
            }
        } else if is_header && !schema.has_default_names() {
            let missing: Vec<&str> = schema
                .feature_names
                .iter()
                .filter(|name| head.iter().filter(|h| h == name).count() != 1)
                .map(String::as_str)
                .take(5)
                .collect();
            return Err(parse_err(
                path,
                first_no,
                format!(
                    "the header does not name each of the model's {d} feature columns once \
                     (missing or repeated: {}{}); the file's columns are {}{}",
                    missing.join(", "),
                    if missing.len() == 5 { ", ..." } else { "" },
                    head.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
                    if head.len() > 5 { ", ..." } else { "" }
                ),
            ));
        } else if n_cols == d {
            ((0..d).collect(), None)
        } else if n_cols == d + 1 {
            ((0..d).collect(), Some(d))
        } else {
            return Err(parse_err(
                path,
                first_no,
                format!(
                    "{n_cols} columns, expected {d} (the model's features) or {} (the features, \
                     then the target)",
                    d + 1
                ),
            ));
        };
        Ok(ModelCsvLayout {
            delim,
            n_cols,
            cols,
            target_col,
            target_what: target_col.map_or_else(String::new, |t| target_what(t + 1)),
            first_row: (!is_header).then_some(head),
        })
    }

    /// Checks that the data row at line `no` has the file's field count and appends the
    /// model's features (in the model's order, finite numbers) to `data`; returns the
    /// target field when the file has one (to be checked by the caller, named by
    /// [`ModelCsvLayout::target_what`]).
    pub(crate) fn parse_row<'f>(
        &self,
        path: &Path,
        no: usize,
        fields: &'f [String],
        data: &mut Vec<f64>,
    ) -> Result<Option<&'f str>> {
        if fields.len() != self.n_cols {
            return Err(parse_err(
                path,
                no,
                format!("expected {} fields, found {}", self.n_cols, fields.len()),
            ));
        }
        for &j in &self.cols {
            let v = parse_number(&fields[j], &format!("field {}", j + 1))
                .map_err(|m| parse_err(path, no, m))?;
            data.push(v);
        }
        Ok(self.target_col.map(|t| fields[t].as_str()))
    }
}

/// A data set as CSV text: a header (the feature names, then `y`), one row per line,
/// numbers in Rust's shortest round-trip form, class labels by name. [`read_csv`] reads it
/// back to the same data set.
pub fn to_csv(ds: &Dataset) -> String {
    fn field(s: &str) -> String {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    }
    let mut out: Vec<String> = ds.feature_names.iter().map(|f| field(f)).collect();
    out.push("y".to_string());
    let mut text = out.join(",");
    text.push('\n');
    for i in 0..ds.len() {
        for v in ds.x.row(i) {
            text.push_str(&format!("{v},"));
        }
        match &ds.targets {
            super::Targets::Real(y) => text.push_str(&format!("{}", y[i])),
            super::Targets::Classes { classes, y } => text.push_str(&field(&classes[y[i]])),
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{TargetSchema, Targets};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn parse(text: &str, target: TargetKind) -> Result<Dataset> {
        parse_csv(Path::new("t.csv"), text.as_bytes(), target, None, None)
    }

    #[test]
    fn splits_quoted_fields() {
        assert_eq!(split_fields(" a , b,c ", ',').unwrap(), vec!["a", "b", "c"]);
        assert_eq!(
            split_fields(r#""x, y" , "say ""hi""",3"#, ',').unwrap(),
            vec!["x, y", r#"say "hi""#, "3"]
        );
        assert_eq!(split_fields(r#"a,"""#, ',').unwrap(), vec!["a", ""]);
        assert!(split_fields(r#"a,"b"#, ',').is_err());
        assert!(split_fields(r#"a,"b"c"#, ',').is_err());
        assert!(split_fields(r#"a,b"c"#, ',').is_err());
    }

    #[test]
    fn reads_header_classes_and_real() {
        let ds = parse(
            "f1,f2,label\n1,2,pos\n\n3,4.5,neg\r\n-1e1,0,pos\n",
            TargetKind::Classes,
        )
        .unwrap();
        assert_eq!(ds.feature_names, vec!["f1", "f2"]);
        assert_eq!(
            ds.x,
            Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.5], vec![-10.0, 0.0]])
        );
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: vec!["neg".into(), "pos".into()],
                y: vec![1, 0, 1]
            }
        );
        let ds = parse("a;b;price\n1;2;3.5\n", TargetKind::Real).unwrap();
        assert_eq!(ds.targets, Targets::Real(vec![3.5]));
        let ds = parse("a\tb\tprice\n1\t2\t3.5\n", TargetKind::Real).unwrap();
        assert_eq!(ds.x.row(0), &[1.0, 2.0]);
    }

    #[test]
    fn header_detection() {
        // No header: every feature field is a number.
        let ds = parse("1,2,M\n3,4,R\n", TargetKind::Classes).unwrap();
        assert_eq!(
            (ds.len(), ds.feature_names.clone()),
            (2, vec!["x1".to_string(), "x2".into()])
        );
        let ds = parse("1,2,3\n3,4,5\n", TargetKind::Real).unwrap();
        assert_eq!(ds.len(), 2);
        // Numeric feature names are a header when the last field is `label`.
        let ds = parse("0,1,label\n3,4,R\n", TargetKind::Classes).unwrap();
        assert_eq!(
            (ds.len(), ds.feature_names.clone()),
            (1, vec!["0".to_string(), "1".into()])
        );
        // ... or any non-number for a real target.
        let ds = parse("0,1,medv\n3,4,5\n", TargetKind::Real).unwrap();
        assert_eq!(ds.len(), 1);
    }

    #[test]
    fn glass_like_numeric_classes_are_strings_in_numeric_order() {
        let ds = parse("a,label\n1,10\n2,2\n3,7\n4,2\n", TargetKind::Classes).unwrap();
        assert_eq!(
            ds.targets,
            Targets::Classes {
                classes: vec!["2".into(), "7".into(), "10".into()],
                y: vec![2, 0, 1, 0]
            }
        );
    }

    #[test]
    fn n_features_must_match() {
        let e = parse_csv(
            Path::new("t.csv"),
            b"a,b,label\n1,2,x\n",
            TargetKind::Classes,
            None,
            Some(3),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.csv:1:") && e.contains("expected 3"), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases: &[(&str, TargetKind, &str)] = &[
            ("", TargetKind::Classes, "t.csv:1: no data rows"),
            (
                "a,b,label\n\n",
                TargetKind::Classes,
                "t.csv:2: no data rows",
            ),
            (
                "a,b,label\n1,2,x\n1,x\n",
                TargetKind::Classes,
                "t.csv:3: expected 3 fields, found 2",
            ),
            (
                "a,b,label\n1,2,x\n1,2,3,x\n",
                TargetKind::Classes,
                "t.csv:3: expected 3 fields, found 4",
            ),
            (
                "a,b,label\n1,abc,x\n",
                TargetKind::Classes,
                "t.csv:2: field 2 'abc' is not a number",
            ),
            (
                "a,b,label\n1,?,x\n",
                TargetKind::Classes,
                "t.csv:2: field 2 '?' is not a number",
            ),
            (
                "a,b,label\n1,,x\n",
                TargetKind::Classes,
                "t.csv:2: field 2 is empty",
            ),
            (
                "a,b,label\nNaN,1,x\n",
                TargetKind::Classes,
                "t.csv:2: field 1 'NaN' is not a finite number",
            ),
            (
                "a,b,label\n1,-inf,x\n",
                TargetKind::Classes,
                "t.csv:2: field 2 '-inf' is not a finite number",
            ),
            (
                "a,b,label\n1,2,\n",
                TargetKind::Classes,
                "t.csv:2: field 3 (the target) is empty",
            ),
            (
                "a,b,y\n1,2,3\n1,2,high\n",
                TargetKind::Real,
                "t.csv:3: field 3 (the target) 'high' is not a number",
            ),
            (
                "a,b,y\n1,2,inf\n",
                TargetKind::Real,
                "t.csv:2: field 3 (the target) 'inf' is not a finite number",
            ),
            ("label\n1\n", TargetKind::Classes, "t.csv:1: found 1 column"),
            (
                "a,b,label\n1,2,\"x\n",
                TargetKind::Classes,
                "t.csv:2: field 3 has an unterminated quote",
            ),
        ];
        for (text, kind, want) in cases {
            let e = parse(text, *kind).unwrap_err().to_string();
            assert!(e.contains(want), "input {text:?}: got '{e}', want '{want}'");
        }
        let e = parse_csv(
            Path::new("t.csv"),
            b"a,label\n1,x\n\xFF,y\n",
            TargetKind::Classes,
            None,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("t.csv:3:") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn unseen_label_is_rejected_with_line() {
        let train = vec!["M".to_string(), "R".to_string()];
        let text = b"a,label\n1,R\n2,M\n3,X\n";
        let e = parse_csv(
            Path::new("test.csv"),
            text,
            TargetKind::Classes,
            Some(&train),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("test.csv:4:") && e.contains("'X'") && e.contains("M, R"),
            "{e}"
        );
        let ok = parse_csv(
            Path::new("t.csv"),
            &text[..text.len() - 4],
            TargetKind::Classes,
            Some(&train),
            None,
        )
        .unwrap();
        assert_eq!(
            ok.targets,
            Targets::Classes {
                classes: train.clone(),
                y: vec![1, 0]
            }
        );
    }

    /// Garbage bytes and random lines of plausible tokens: the reader returns Ok or Err and
    /// never panics; a success is internally consistent.
    #[test]
    fn never_panics_on_garbage() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let tokens = [
            "1", "-2.5", "2", "1e300", "1e999", "nan", "inf", "M", "R", "\"", "\"a,b\"", "", " ",
            ",", ",,", ";", "\t", "label", "\u{feff}", "é", "0x1F", "+", "-", ".", "1:2", "#",
        ];
        let train = vec!["M".to_string(), "R".to_string()];
        let (mut oks, mut errs) = (0usize, 0usize);
        for case in 0..3000 {
            let bytes: Vec<u8> = if case % 3 == 0 {
                (0..rng.gen_range(0..200))
                    .map(|_| rng.r#gen::<u8>())
                    .collect()
            } else {
                // Mostly well-formed rows of a fixed width, with random corruptions.
                let mut s = String::new();
                let width = rng.gen_range(1..5);
                for _ in 0..rng.gen_range(0..8) {
                    let n = if rng.gen_bool(0.9) {
                        width
                    } else {
                        rng.gen_range(0..6)
                    };
                    for k in 0..n {
                        if k > 0 {
                            s.push(',');
                        }
                        if rng.gen_bool(0.97) {
                            s.push_str(tokens[rng.gen_range(0..3)]);
                        } else {
                            s.push_str(tokens[rng.gen_range(0..tokens.len())]);
                        }
                    }
                    s.push_str(if rng.gen_bool(0.2) { "\r\n" } else { "\n" });
                }
                s.into_bytes()
            };
            for kind in [TargetKind::Classes, TargetKind::Real] {
                for cl in [None, Some(train.as_slice())] {
                    let nf = if rng.gen_bool(0.5) {
                        None
                    } else {
                        Some(rng.gen_range(0..4))
                    };
                    match parse_csv(Path::new("g.csv"), &bytes, kind, cl, nf) {
                        Err(_) => errs += 1,
                        Ok(ds) => {
                            oks += 1;
                            assert!(
                                !ds.is_empty() && ds.x.data.len() == ds.len() * ds.n_features()
                            );
                            assert_eq!(ds.targets.len(), ds.len());
                            assert_eq!(ds.feature_names.len(), ds.n_features());
                            assert!(ds.x.data.iter().all(|v| v.is_finite()));
                        }
                    }
                }
            }
        }
        assert!(oks > 50 && errs > 50, "ok {oks}, err {errs}");
    }

    fn schema(names: &[&str], classes: Option<&[&str]>) -> Schema {
        Schema {
            feature_names: names.iter().map(|s| s.to_string()).collect(),
            target: match classes {
                Some(c) => TargetSchema::Classes(c.iter().map(|s| s.to_string()).collect()),
                None => TargetSchema::Real,
            },
        }
    }

    fn for_model(text: &str, schema: &Schema) -> Result<ModelRows> {
        parse_csv_for_model(Path::new("m.csv"), text.as_bytes(), schema)
    }

    #[test]
    fn model_files_match_columns_by_name_or_position() {
        let s = schema(&["a", "b"], Some(&["neg", "pos"]));
        // By name, in any order, the target anywhere.
        let r = for_model("label,b,a\npos,2,1\nneg,4,3\n", &s).unwrap();
        assert_eq!(r.x, Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]]));
        assert_eq!(
            r.targets,
            Some(Targets::Classes {
                classes: vec!["neg".into(), "pos".into()],
                y: vec![1, 0]
            })
        );
        // No target column.
        let r = for_model("b,a\n2,1\n", &s).unwrap();
        assert_eq!((r.x.row(0), r.targets), (&[1.0, 2.0][..], None));
        // No header: by position, with or without the target.
        let r = for_model("1,2\n3,4\n", &s).unwrap();
        assert_eq!((r.x.rows, r.targets.is_none()), (2, true));
        let r = for_model("1,2,pos\n", &s).unwrap();
        assert!(r.targets.is_some());
        // Real targets; default names match by position whatever the header says.
        let s = schema(&["x1", "x2"], None);
        let r = for_model("u,v,price\n1,2,3.5\n", &s).unwrap();
        assert_eq!(r.targets, Some(Targets::Real(vec![3.5])));
        let cases: &[(&str, Schema, &str)] = &[
            (
                "a,c\n1,2\n",
                schema(&["a", "b"], None),
                "m.csv:1: the header",
            ),
            ("a,b,c,d\n1,2,3,4\n", schema(&["a", "b"], None), "'c', 'd'"),
            (
                "a,a,b\n1,2,3\n",
                schema(&["a", "b"], None),
                "missing or repeated: a",
            ),
            (
                "1,2,3,4\n",
                schema(&["x1", "x2"], None),
                "4 columns, expected 2",
            ),
            (
                "a,b,label\n1,2,zzz\n",
                schema(&["a", "b"], Some(&["x", "y"])),
                "'zzz'",
            ),
            ("a,b\n", schema(&["a", "b"], None), "no data rows"),
        ];
        for (text, s, want) in cases {
            let e = for_model(text, s).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
