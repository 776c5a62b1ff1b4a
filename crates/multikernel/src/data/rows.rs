//! What the table readers make of a row once its fields are split: the kind of the target
//! column and the targets collected from it (class labels mapped to indices), the checks of
//! a target and of a dense table's size, the data set built from the rows, and what a
//! trained model expects of a file ([`Schema`]) with the rows read for it ([`ModelRows`]).
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

use super::lines::{parse_err, parse_number};
use super::{Dataset, Matrix, Targets};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the target column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// Class labels (strings, even when they look like numbers).
    Classes,
    /// Real values (regression); they must be finite numbers.
    Real,
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
