//! Labeled sequences of feature vectors (sequence labeling, martins2011 Sec. 2.3 and 4.1):
//! one row of features per position, sequences as runs of consecutive rows, a label per
//! position from any alphabet, and optional folds per sequence. The OCR reader
//! ([`crate::data::ocr`]) is one source of it.

use crate::data::Matrix;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Sequences of feature vectors with gold labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceData {
    /// `n_positions x n_features`: the features of each position, sequences consecutive.
    pub x: Matrix,
    /// The gold label of each position (index into `label_names`).
    pub labels: Vec<usize>,
    /// The rows of each sequence (consecutive, in order, non-empty).
    pub spans: Vec<Range<usize>>,
    /// The label alphabet (letters for OCR; tags; anything).
    pub label_names: Vec<String>,
    /// One name per feature column.
    pub feature_names: Vec<String>,
    /// The fold of each sequence, when the source has folds.
    pub folds: Option<Vec<usize>>,
}

impl SequenceData {
    /// Checks that the spans tile the rows in order, labels and feature names fit.
    pub fn new(
        x: Matrix,
        labels: Vec<usize>,
        spans: Vec<Range<usize>>,
        label_names: Vec<String>,
        feature_names: Vec<String>,
        folds: Option<Vec<usize>>,
    ) -> Result<SequenceData> {
        let d = SequenceData {
            x,
            labels,
            spans,
            label_names,
            feature_names,
            folds,
        };
        d.validate()?;
        Ok(d)
    }

    /// Every shape agrees: rows = labels, spans tile the rows, labels below the alphabet's
    /// size, one name per column, one fold per sequence.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.x.data.len() != self.x.rows * self.x.cols {
            return Err(Error::shape(
                "feature values (rows x columns)",
                self.x.rows * self.x.cols,
                self.x.data.len(),
            ));
        }
        if self.labels.len() != self.x.rows {
            return Err(Error::shape(
                "labels (one per position)",
                self.x.rows,
                self.labels.len(),
            ));
        }
        let mut next = 0;
        for (s, r) in self.spans.iter().enumerate() {
            if r.start != next || r.end <= r.start {
                return Err(Error::data(format!(
                    "sequence {s} covers rows {r:?}: sequences must be non-empty runs of \
                     consecutive rows starting at {next}"
                )));
            }
            next = r.end;
        }
        if next != self.x.rows {
            return Err(Error::shape(
                "rows covered by the sequences",
                self.x.rows,
                next,
            ));
        }
        if let Some(&y) = self.labels.iter().find(|&&y| y >= self.label_names.len()) {
            return Err(Error::data(format!(
                "label {y} has no name ({} label names)",
                self.label_names.len()
            )));
        }
        if self.feature_names.len() != self.x.cols {
            return Err(Error::shape(
                "feature names (one per column)",
                self.x.cols,
                self.feature_names.len(),
            ));
        }
        if let Some(f) = &self.folds {
            if f.len() != self.spans.len() {
                return Err(Error::shape(
                    "folds (one per sequence)",
                    self.spans.len(),
                    f.len(),
                ));
            }
        }
        Ok(())
    }

    pub fn n_sequences(&self) -> usize {
        self.spans.len()
    }

    /// Positions (rows) over all sequences.
    pub fn n_positions(&self) -> usize {
        self.x.rows
    }

    pub fn n_labels(&self) -> usize {
        self.label_names.len()
    }

    pub fn n_features(&self) -> usize {
        self.x.cols
    }

    /// The gold labels of sequence `s`.
    pub(crate) fn sequence_labels(&self, s: usize) -> &[usize] {
        &self.labels[self.spans[s].clone()]
    }

    /// The gold label names of sequence `s`.
    #[cfg(test)]
    pub(crate) fn sequence_names(&self, s: usize) -> Vec<&str> {
        self.sequence_labels(s)
            .iter()
            .map(|&y| self.label_names[y].as_str())
            .collect()
    }

    /// The sequences whose indices are given, in that order, rows re-packed consecutively
    /// (label and feature names kept whole).
    pub fn select(&self, idx: &[usize]) -> SequenceData {
        let cols = self.x.cols;
        let rows: usize = idx.iter().map(|&s| self.spans[s].len()).sum();
        let mut data = Vec::with_capacity(rows * cols);
        let mut labels = Vec::with_capacity(rows);
        let mut spans = Vec::with_capacity(idx.len());
        for &s in idx {
            let r = self.spans[s].clone();
            let start = labels.len();
            data.extend_from_slice(&self.x.data[r.start * cols..r.end * cols]);
            labels.extend_from_slice(&self.labels[r]);
            spans.push(start..labels.len());
        }
        SequenceData {
            x: Matrix::from_vec(rows, cols, data),
            labels,
            spans,
            label_names: self.label_names.clone(),
            feature_names: self.feature_names.clone(),
            folds: self
                .folds
                .as_ref()
                .map(|f| idx.iter().map(|&s| f[s]).collect()),
        }
    }

    /// Indices of the sequences in any of `folds` (none without folds).
    pub fn fold_indices(&self, folds: &[usize]) -> Vec<usize> {
        match &self.folds {
            Some(f) => (0..self.n_sequences())
                .filter(|&s| folds.contains(&f[s]))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The sequences in any of `folds`.
    pub fn select_folds(&self, folds: &[usize]) -> SequenceData {
        self.select(&self.fold_indices(folds))
    }

    /// The sequences in none of `folds` (all of them without folds).
    pub fn exclude_folds(&self, folds: &[usize]) -> SequenceData {
        let idx: Vec<usize> = match &self.folds {
            Some(f) => (0..self.n_sequences())
                .filter(|&s| !folds.contains(&f[s]))
                .collect(),
            None => (0..self.n_sequences()).collect(),
        };
        self.select(&idx)
    }

    /// The folds present, sorted (empty without folds).
    pub fn fold_list(&self) -> Vec<usize> {
        let mut f = self.folds.clone().unwrap_or_default();
        f.sort_unstable();
        f.dedup();
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SequenceData {
        // Sequences [x, y], [z], [x, x, y] over labels {x, y, z}; folds 1, 0, 1.
        let x = Matrix::from_vec(6, 2, (0..12).map(f64::from).collect());
        SequenceData::new(
            x,
            vec![0, 1, 2, 0, 0, 1],
            vec![0..2, 2..3, 3..6],
            vec!["x".into(), "y".into(), "z".into()],
            vec!["f0".into(), "f1".into()],
            Some(vec![1, 0, 1]),
        )
        .unwrap()
    }

    #[test]
    fn selects_sequences_and_folds() {
        let d = sample();
        assert_eq!((d.n_sequences(), d.n_positions(), d.n_labels()), (3, 6, 3));
        assert_eq!(d.sequence_names(2), vec!["x", "x", "y"]);
        let f1 = d.select_folds(&[1]);
        assert_eq!(f1.spans, vec![0..2, 2..5]);
        assert_eq!(f1.x.row(2), d.x.row(3));
        assert_eq!(f1.folds, Some(vec![1, 1]));
        let rest = d.exclude_folds(&[1]);
        assert_eq!(rest.sequence_names(0), vec!["z"]);
        assert_eq!(d.fold_list(), vec![0, 1]);
        let back = d.select(&[2, 0]);
        assert_eq!(back.labels, vec![0, 0, 1, 0, 1]);
        back.validate().unwrap();
        let mut no_folds = d.clone();
        no_folds.folds = None;
        assert_eq!(no_folds.exclude_folds(&[1]).n_sequences(), 3);
        assert!(no_folds.fold_list().is_empty());
    }

    #[test]
    fn rejects_inconsistent_shapes() {
        let d = sample();
        let mut bad = d.clone();
        bad.spans = vec![0..2, 3..6];
        assert!(matches!(bad.validate(), Err(Error::Data(m)) if m.contains("sequence 1")));
        let mut bad = d.clone();
        bad.labels[0] = 3;
        assert!(matches!(bad.validate(), Err(Error::Data(m)) if m.contains("label 3")));
        let mut bad = d.clone();
        bad.folds = Some(vec![0]);
        assert!(matches!(
            bad.validate(),
            Err(Error::ShapeMismatch {
                expected: 3,
                found: 1,
                ..
            })
        ));
        let mut bad = d;
        bad.feature_names.pop();
        assert!(bad.validate().is_err());
    }
}
