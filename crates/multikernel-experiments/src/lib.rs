//! # multikernel-experiments
//!
//! The papers' experiments, apart from the library: each reproduction is a function that
//! returns a [`Report`] (rows in the one JSON row format every `multikernel reproduce` command
//! shares, plus the printed table, the paper's numbers beside ours). [`options`] holds what a
//! program sets to run one, with the command line's flags declared beside the fields
//! (`clap::Args`): the command line only mounts [`options::Reproduction`] under `reproduce`
//! ([`options::Reproduction::run`], then [`options::Output::finish`]). [`demo`] is
//! `multikernel demo`; [`plot`] draws the figures as SVG.
//!
//! The experiments use the library's engines through `multikernel::engine`, the one module of
//! the library that is public for them, the benches and the tests rather than for users.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One result row: `{"dataset", "method", "metric", "mean", "std", "n", "train_seconds", ...}`.
/// Later experiments add fields through `extra` (flattened into the row), never rename these.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub dataset: String,
    pub method: String,
    pub metric: String,
    /// Mean over runs; `None` (JSON `null`) where undefined.
    pub mean: Option<f64>,
    pub std: Option<f64>,
    /// Number of runs.
    pub n: usize,
    /// Median seconds of one final training run (selection excluded).
    pub train_seconds: Option<f64>,
    /// Kernel name -> weight, where there are several kernels.
    pub weights: Option<Map<String, Value>>,
    /// Experiment-specific fields (e.g. `eta0`, `C`, `r`, `paper_mean`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Row {
    /// A row with the mandatory fields; mean/std computed from `values` (population std
    /// over runs; `None` when `values` is empty).
    pub fn from_values(dataset: &str, method: &str, metric: &str, values: &[f64]) -> Row {
        let (mean, std) = mean_std(values);
        Row {
            dataset: dataset.to_string(),
            method: method.to_string(),
            metric: metric.to_string(),
            mean,
            std,
            n: values.len(),
            train_seconds: None,
            weights: None,
            extra: Map::new(),
        }
    }

    /// Adds (or replaces) an experiment-specific field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Row {
        self.extra.insert(key.to_string(), value.into());
        self
    }
}

/// Mean and standard deviation (divisor n-1 when n > 1, else 0); `None` for no values.
pub fn mean_std(values: &[f64]) -> (Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let std = if values.len() > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (Some(mean), Some(std))
}

/// Median of a list (None when empty).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

/// What a reproduction returns: the rows and a human-readable table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub experiment: String,
    pub rows: Vec<Row>,
    /// The printed table (Markdown), paper numbers beside ours where the paper has them.
    #[serde(skip)]
    pub table: String,
}

impl Report {
    /// The JSON document `{"experiment": ..., "rows": [...]}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report rows are plain JSON values")
    }
}
pub mod demo;
pub mod gomp;
pub mod jobs;
pub mod mirror_descent;
pub mod mtl;
pub mod ocr;
pub mod options;
pub mod parsing;
pub mod plot;
pub mod tables;
pub mod thread_clock;
pub mod uci;
pub mod wrappers;
