//! The table readers (CSV, libsvm) and the OCR reader, fed from bytes.
//!
//! The first byte of an input chooses how the rest is read (training or prediction, class or
//! real targets, a fixed feature count or none); the rest is the file's content.

use crate::data::rows::natural_order;
use crate::data::{
    parse_for_model, parse_table, Dataset, Format, ModelRows, Schema, TargetKind, TargetSchema,
    Targets,
};
use crate::error::Error;
use std::path::Path;

/// The classes of a model the prediction modes map labels to.
fn model_classes() -> Vec<String> {
    ["-1", "+1", "M"].iter().map(|s| s.to_string()).collect()
}

/// The CSV reader: `parse_table` in CSV (training, or with a model's feature count) or
/// `parse_for_model` (a model's schema, labels optional), chosen by the first byte.
pub fn csv(data: &[u8]) {
    table(data, Format::Csv, "fuzz.csv");
}

/// The CSV reader with a column of row weights named `w` (`train --weight-column w`): the
/// first byte's bit 0 picks class or real targets; the rest is the file.
pub fn csv_weights(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let kind = if mode & 1 == 0 {
        TargetKind::Classes
    } else {
        TargetKind::Real
    };
    let origin = Path::new("fuzz.csv");
    match crate::data::csv::parse_csv_with_weights(origin, bytes, kind, "w") {
        Ok((ds, weights)) => {
            check_dataset(&ds, None, None);
            assert_eq!(weights.len(), ds.len(), "one weight per row");
            assert!(
                weights.iter().all(|w| w.is_finite() && *w >= 0.0),
                "finite weights >= 0"
            );
            assert!(
                !ds.feature_names.iter().any(|f| f == "w"),
                "the weight column is no feature"
            );
        }
        Err(e) => check_error(&e, origin, bytes),
    }
}

/// The libsvm reader, as [`csv`].
pub fn libsvm(data: &[u8]) {
    table(data, Format::Libsvm, "fuzz.svm");
}

/// Reads `data[1..]` in `format` (or, when bit 6 of the first byte is set, in the format
/// sniffed from the content) the way the first byte says, and checks the result.
fn table(data: &[u8], format: Format, name: &str) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    // Bit 6: no format given and an origin without an extension: sniff the content.
    let (origin, format) = if mode & 0x40 != 0 {
        (Path::new("fuzz-data"), None)
    } else {
        (Path::new(name), Some(format))
    };
    let kind = if mode & 1 == 0 {
        TargetKind::Classes
    } else {
        TargetKind::Real
    };
    // Bits 2-4: the model's feature count (0 = none given), 1 to 7.
    let d = usize::from((mode >> 2) & 7);
    if mode & 2 == 0 {
        let classes = model_classes();
        let fixed = (mode & 0x80 != 0).then_some(classes.as_slice());
        let n_features = (d > 0).then_some(d);
        match parse_table(origin, bytes, format, kind, fixed, n_features) {
            Ok(ds) => check_dataset(&ds, fixed, n_features),
            Err(e) => check_error(&e, origin, bytes),
        }
    } else {
        // Features named x1, x2, ... (matched by position), or by name when bit 7 is set.
        let d = d.max(1);
        let feature_names = (1..=d)
            .map(|j| {
                if mode & 0x80 != 0 {
                    ["a", "b", "c", "d", "e", "f", "g"][j - 1].to_string()
                } else {
                    format!("x{j}")
                }
            })
            .collect();
        let target = match kind {
            TargetKind::Classes => TargetSchema::Classes(model_classes()),
            TargetKind::Real => TargetSchema::Real,
        };
        let schema = Schema {
            feature_names,
            target,
        };
        match parse_for_model(origin, bytes, format, &schema) {
            Ok(rows) => check_model_rows(&rows, &schema),
            Err(e) => check_error(&e, origin, bytes),
        }
    }
}

/// A parsed table: rows x features values, all finite; one name per feature; one target per
/// row; class indices below the number of classes; training classes distinct and in natural
/// order.
fn check_dataset(ds: &Dataset, fixed: Option<&[String]>, n_features: Option<usize>) {
    assert!(!ds.is_empty(), "a parsed table has rows");
    assert_eq!(ds.x.data.len(), ds.len() * ds.n_features());
    assert!(ds.x.data.iter().all(|v| v.is_finite()), "finite values");
    assert_eq!(ds.feature_names.len(), ds.n_features());
    assert_eq!(ds.targets.len(), ds.len());
    if let Some(d) = n_features {
        assert_eq!(ds.n_features(), d);
    }
    match &ds.targets {
        Targets::Real(y) => assert!(y.iter().all(|v| v.is_finite()), "finite targets"),
        Targets::Classes { classes, y } => {
            assert!(y.iter().all(|&c| c < classes.len()), "class index in range");
            match fixed {
                Some(f) => assert_eq!(classes.as_slice(), f),
                None => {
                    let order = natural_order(classes);
                    assert!(
                        order.iter().enumerate().all(|(r, &i)| r == i),
                        "classes in natural order: {classes:?}"
                    );
                    let mut sorted = classes.clone();
                    sorted.sort();
                    sorted.dedup();
                    assert_eq!(sorted.len(), classes.len(), "distinct classes");
                    // Every class is used by a row.
                    let mut used = vec![false; classes.len()];
                    y.iter().for_each(|&c| used[c] = true);
                    assert!(used.iter().all(|&u| u), "every class appears");
                }
            }
        }
    }
}

/// Rows read for a model: the model's feature count, finite values, targets (when present)
/// one per row and mapped to the model's classes.
fn check_model_rows(rows: &ModelRows, schema: &Schema) {
    assert!(rows.x.rows > 0, "rows were read");
    assert_eq!(rows.x.cols, schema.feature_names.len());
    assert_eq!(rows.x.data.len(), rows.x.rows * rows.x.cols);
    assert!(rows.x.data.iter().all(|v| v.is_finite()), "finite values");
    match (&rows.targets, &schema.target) {
        (None, _) => {}
        (Some(Targets::Real(y)), TargetSchema::Real) => {
            assert_eq!(y.len(), rows.x.rows);
            assert!(y.iter().all(|v| v.is_finite()), "finite targets");
        }
        (Some(Targets::Classes { classes, y }), TargetSchema::Classes(want)) => {
            assert_eq!(classes, want);
            assert_eq!(y.len(), rows.x.rows);
            assert!(y.iter().all(|&c| c < classes.len()), "class index in range");
        }
        (Some(t), s) => panic!("targets {t:?} for a schema {s:?}"),
    }
}

/// Every error names the origin; a parse error names a line of the input (1 for an empty
/// one, or the line after a final newline).
fn check_error(e: &Error, origin: &Path, bytes: &[u8]) {
    let text = e.to_string();
    assert!(
        text.contains(&origin.display().to_string()),
        "the error names the origin: {text}"
    );
    match e {
        Error::Parse { path, line, .. } => {
            assert_eq!(path, origin);
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
            assert!(
                *line >= 1 && *line <= lines,
                "line {line} of {lines}: {text}"
            );
        }
        Error::Memory { .. } | Error::Data(_) => {}
        other => panic!("unexpected error kind from a reader: {other:?}"),
    }
}

/// The OCR reader (`letter.data`): a parsed set is valid (shapes agree, labels in the
/// alphabet, spans tile the rows); an error names the file.
pub fn ocr(data: &[u8]) {
    let origin = Path::new("fuzz-letter.data");
    match crate::data::ocr::parse_ocr(origin, data) {
        Ok(set) => {
            set.validate().expect("a parsed OCR set is valid");
            assert!(set.x.data.iter().all(|v| v.is_finite()), "finite pixels");
            assert!(set.n_sequences() > 0, "sequences were read");
        }
        Err(e) => check_error(&e, origin, data),
    }
}
