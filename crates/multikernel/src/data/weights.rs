//! Row weights of a table (scikit-learn's `sample_weight` and `class_weight`, the command
//! line's `--weight-column` and `--class-weight`): read from a named CSV column, multiplied
//! by per-class weights, and checked as every learner that takes them checks them.

use super::read::Format;
use super::{read_table, Dataset, TargetKind, Targets};
use crate::error::{Error, Result};
use std::path::Path;
use std::str::FromStr;

/// Per-class row weights: `balanced` (`n_rows / (n_classes * rows of the class)`, as
/// scikit-learn's `class_weight="balanced"`) or `LABEL:W,LABEL:W` (unlisted classes weigh 1).
#[derive(Debug, Clone, PartialEq)]
pub enum ClassWeight {
    Balanced,
    Given(Vec<(String, f64)>),
}

impl FromStr for ClassWeight {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<ClassWeight, String> {
        if s.trim() == "balanced" {
            return Ok(ClassWeight::Balanced);
        }
        let mut given = Vec::new();
        for part in s.split(',') {
            let (label, w) = part.rsplit_once(':').ok_or_else(|| {
                format!("`{part}`: balanced, or LABEL:WEIGHT pairs separated by commas")
            })?;
            let w: f64 = w
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: the weight `{w}` is not a number"))?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!("`{part}`: a weight must be a finite number >= 0"));
            }
            given.push((label.trim().to_string(), w));
        }
        Ok(ClassWeight::Given(given))
    }
}

impl ClassWeight {
    /// The weight of each class (by index into `classes`) of the rows labelled `y`.
    fn per_class(&self, classes: &[String], y: &[usize]) -> Result<Vec<f64>> {
        match self {
            ClassWeight::Balanced => {
                let mut count = vec![0usize; classes.len()];
                for &c in y {
                    count[c] += 1;
                }
                let (n, k) = (y.len() as f64, classes.len() as f64);
                Ok(count
                    .iter()
                    .map(|&m| if m == 0 { 1.0 } else { n / (k * m as f64) })
                    .collect())
            }
            ClassWeight::Given(pairs) => {
                let mut out = vec![1.0; classes.len()];
                for (label, w) in pairs {
                    let c = classes.iter().position(|l| l == label).ok_or_else(|| {
                        Error::data(format!(
                            "class weights: no class `{label}` in the training file (its \
                             classes: {})",
                            classes.join(", ")
                        ))
                    })?;
                    out[c] = *w;
                }
                Ok(out)
            }
        }
    }
}

/// Reads the table at `path` with a weight per row: the CSV column `weight_column` (not a
/// feature then; `data::csv`), else 1, times `class_weight`'s
/// weight of the row's class. LIBSVM rows have no named column: `weight_column` is
/// refused there; `class_weight` needs classes.
pub(crate) fn read_weighted_table(
    path: &Path,
    format: Option<Format>,
    target: TargetKind,
    weight_column: Option<&str>,
    class_weight: Option<&ClassWeight>,
) -> Result<(Dataset, Vec<f64>)> {
    let (data, mut weights) = match weight_column {
        Some(name) => {
            if format.or_else(|| Format::from_path(path)) == Some(Format::Libsvm) {
                return Err(Error::unsupported(format!(
                    "a weight column is a column of a CSV file with a header; {} is read as \
                     LIBSVM, whose rows have no named columns (use class weights, or a CSV \
                     file)",
                    path.display()
                )));
            }
            super::csv::read_csv_with_weights(path, target, name)?
        }
        None => {
            let data = read_table(path, format, target, None, None)?;
            let n = data.len();
            (data, vec![1.0; n])
        }
    };
    if let Some(cw) = class_weight {
        let Targets::Classes { classes, y } = &data.targets else {
            return Err(Error::unsupported(
                "class weights weigh classes; a regression's targets have none",
            ));
        };
        let per_class = cw.per_class(classes, y)?;
        for (w, &c) in weights.iter_mut().zip(y) {
            *w *= per_class[c];
        }
    }
    if !weights.iter().any(|w| *w > 0.0) {
        return Err(Error::data(format!(
            "{}: every row weighs 0",
            path.display()
        )));
    }
    Ok((data, weights))
}

/// Row weights of a fit on `n` rows: one per row, finite, `>= 0`, at least one positive
/// (the error names the first bad row, from 1).
pub(crate) fn check_row_weights(w: &[f64], n: usize) -> Result<()> {
    if w.len() != n {
        return Err(Error::shape("row weights (one per row)", n, w.len()));
    }
    if let Some((i, v)) = w
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
    {
        return Err(Error::param(
            "sample_weight",
            format!("{v} (row {})", i + 1),
            "finite weights >= 0",
        ));
    }
    if !w.iter().any(|v| *v > 0.0) {
        return Err(Error::param(
            "sample_weight",
            "all zero",
            "at least one positive weight",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_weights_parse_and_apply_as_scikit_learn_s() {
        assert_eq!("balanced".parse(), Ok(ClassWeight::Balanced));
        assert_eq!(
            "a:2, b : 0.5".parse(),
            Ok(ClassWeight::Given(vec![
                ("a".into(), 2.0),
                ("b".into(), 0.5)
            ]))
        );
        for bad in ["a", "a:x", "a:-1", "a:inf"] {
            assert!(bad.parse::<ClassWeight>().is_err(), "{bad}");
        }
        let classes = vec!["a".to_string(), "b".to_string()];
        let y = [0, 0, 0, 1];
        // n / (k * count): 4 / (2 * 3), 4 / (2 * 1).
        let w = ClassWeight::Balanced.per_class(&classes, &y).unwrap();
        assert!((w[0] - 2.0 / 3.0).abs() < 1e-15 && (w[1] - 2.0).abs() < 1e-15);
        let given = ClassWeight::Given(vec![("b".into(), 3.0)]);
        assert_eq!(given.per_class(&classes, &y).unwrap(), vec![1.0, 3.0]);
        let unknown = ClassWeight::Given(vec![("c".into(), 3.0)]);
        let e = unknown.per_class(&classes, &y).unwrap_err().to_string();
        assert!(e.contains("no class `c`") && e.contains("a, b"), "{e}");
    }

    #[test]
    fn row_weights_are_checked() {
        assert!(check_row_weights(&[1.0, 0.0], 2).is_ok());
        assert!(check_row_weights(&[1.0], 2).is_err());
        assert!(check_row_weights(&[0.0, 0.0], 2).is_err());
        let e = check_row_weights(&[1.0, f64::NAN], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2"), "{e}");
        assert!(check_row_weights(&[1.0, -1.0], 2).is_err());
    }
}
