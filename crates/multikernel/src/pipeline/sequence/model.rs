//! A trained sequence labeler (SPOM, Alg. 3 of Martins et al. 2011, on a first-order chain):
//! unigram scores from a kernel expansion over support characters,
//!
//! ```text
//! f(x_i, y) = sum_g sum_{(k, w) in group g} w sum_j K_k(x_i, x_j) a_g[j, y],
//! ```
//!
//! and label-pair scores `W[y_i, y_{i+1}]` (the bigram group, its weight beta0 included);
//! words are decoded by Viterbi (eq. 1). A kernel group is one base kernel (MKL, single
//! kernels) or a fixed combination of base kernels (the plain average baseline).

use crate::data::{Matrix, MatrixRef, SequenceData};
use crate::error::{Error, Result};
use crate::kernel::binary::expansion_scores;
use crate::kernel::{FittedKernel, MemoryLimit};
use crate::solver::wrapper::WrapperMethod;
use crate::task::chain::viterbi;
use crate::task::sequence::SeqLoss;
use crate::task::TaskKind;
use crate::trained::summary::{num, yes_no};
use crate::trained::{KernelRow, Summary, TrainedModel};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;

/// A kernel group: base kernels (indices into the model's kernels) with fixed factors, e.g.
/// `[(0, 1.0)]` for one kernel, `[(0, 1/3), (1, 1/3), (2, 1/3)]` for an average.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelGroup {
    pub name: String,
    pub components: Vec<(usize, f64)>,
}

impl KernelGroup {
    /// One group per base kernel (MKL and single-kernel rows).
    pub fn separate(kernels: &[FittedKernel]) -> Vec<KernelGroup> {
        kernels
            .iter()
            .enumerate()
            .map(|(k, f)| KernelGroup {
                name: f.name.clone(),
                components: vec![(k, 1.0)],
            })
            .collect()
    }

    /// One group holding the plain average `(1/M) sum_k K_k`.
    pub fn average(kernels: &[FittedKernel]) -> Vec<KernelGroup> {
        let w = 1.0 / kernels.len().max(1) as f64;
        vec![KernelGroup {
            name: format!(
                "average({})",
                kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" + ")
            ),
            components: (0..kernels.len()).map(|k| (k, w)).collect(),
        }]
    }
}

/// How a sequence model was trained: the settings it was fitted with and where the run
/// ended (no timings, so that the same seed gives the same model file). Version-1 files
/// spelled some keys differently (`n_train_words`, `n_train_chars`); both are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequenceTraining {
    #[serde(with = "crate::pipeline::table::vector_model::as_text")]
    pub loss: crate::task::sequence::SeqLoss,
    #[serde(with = "crate::pipeline::table::vector_model::as_text")]
    pub reg: crate::prox::RegSpec,
    pub lambda: f64,
    /// `1 / (lambda N)`, `N` training sequences.
    #[serde(rename = "C")]
    pub c: f64,
    pub eta0: f64,
    #[serde(with = "crate::pipeline::table::vector_model::as_text")]
    pub schedule: crate::solver::online::StepSchedule,
    pub epochs: usize,
    /// Epochs run (fewer when the run was stopped).
    #[serde(default)]
    pub epochs_run: Option<usize>,
    pub seed: u64,
    pub averaging: bool,
    pub projection_radius: Option<f64>,
    pub learn_beta0: bool,
    /// One group holding the plain average of the kernels.
    #[serde(default)]
    pub average_kernels: bool,
    #[serde(alias = "n_train_words")]
    pub n_train_sequences: usize,
    #[serde(alias = "n_train_chars")]
    pub n_train_positions: usize,
    pub final_objective: Option<f64>,
    #[serde(default)]
    pub final_average_loss: Option<f64>,
    /// Folds of the training sequences, when the data had folds.
    #[serde(default)]
    pub folds: Vec<usize>,
    /// Set for a wrapper model (SimpleMKL or Gauss-Seidel around structured PEGASOS,
    /// [`super::wrapper`]); absent for SPOM's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<WrapperTraining>,
    /// Shards of each epoch (iterative parameter mixing,
    /// [`crate::solver::online::OnlineParams::shards`]); written only when not 1.
    #[serde(default = "one_shard", skip_serializing_if = "is_one_shard")]
    pub shards: usize,
    /// Mini-batch of parallel decodings ([`crate::solver::online::OnlineParams::batch`]);
    /// written only when not 1.
    #[serde(default = "one_shard", skip_serializing_if = "is_one_shard")]
    pub batch: usize,
}

/// How a wrapper model was trained (kept in [`SequenceTraining::wrapper`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapperTraining {
    pub method: WrapperMethod,
    /// PEGASOS epochs of the first call and of each warm-started call.
    pub first_epochs: usize,
    pub warm_epochs: usize,
    /// Outer iterations recorded (the first at the starting weights).
    pub outer_iterations: usize,
    /// Inner solves (line-search trials included).
    pub inner_solves: usize,
    /// The relative MKL duality gap at the returned weights, and the tolerance.
    pub relative_gap: Option<f64>,
    pub tol: f64,
    /// How the outer loop ended (converged, iteration limit, cancelled).
    pub status: String,
}

fn one_shard() -> usize {
    1
}

fn is_one_shard(n: &usize) -> bool {
    *n == 1
}

/// The trained sequence model. Its serde shape is that of version-1 model files (fields added
/// since carry `#[serde(default)]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SequenceModel {
    pub loss: SeqLoss,
    /// Label names, in label-index order (`a`..`z` for OCR).
    pub labels: Vec<String>,
    /// Input columns the kernels expect.
    pub n_features: usize,
    /// Their names (empty in models written before they were recorded).
    #[serde(default)]
    pub feature_names: Vec<String>,
    pub kernels: Vec<FittedKernel>,
    pub groups: Vec<KernelGroup>,
    /// Support positions (rows), shared by all groups.
    pub support: Matrix,
    /// Index of each support position among the training positions.
    pub support_rows: Vec<usize>,
    /// Per group: coefficients `n_support x n_labels` (support-major); empty for a group whose
    /// norm is zero.
    pub coef: Vec<Vec<f64>>,
    /// Label-pair scores `W[a * L + b]` (effective, beta0 included).
    pub transitions: Vec<f64>,
    /// Norms of the regularized groups (kernel groups, then the bigram group when beta0 is
    /// learned) and the kernel weights they imply, with their names.
    pub group_norms: Vec<f64>,
    pub weight_names: Vec<String>,
    pub weights: Vec<f64>,
    /// How it was trained (regularizer, lambda, C, eta0, epochs, radius, ...).
    pub training: SequenceTraining,
}

/// Origin named in [`Error::Model`] by [`SequenceModel::validate`].
const ORIGIN: &str = "sequence model";

impl SequenceModel {
    pub(crate) fn n_labels(&self) -> usize {
        self.labels.len()
    }

    /// Checks that every stored shape agrees: support rows and columns against the
    /// coefficients and `n_features`, each group's kernels in range with finite factors, the
    /// kernels' input columns, `L x L` transitions, one weight per name. After it succeeds,
    /// prediction on inputs with `n_features` columns does not panic.
    pub fn validate(&self) -> Result<()> {
        let l = self.n_labels();
        if l == 0 {
            return Err(Error::model(ORIGIN, "no labels"));
        }
        let sup = &self.support;
        if sup.rows.checked_mul(sup.cols) != Some(sup.data.len()) {
            return Err(Error::shape(
                "sequence model: support values (rows x columns)",
                sup.rows.saturating_mul(sup.cols),
                sup.data.len(),
            ));
        }
        if sup.cols != self.n_features {
            return Err(Error::shape(
                "sequence model: support columns",
                self.n_features,
                sup.cols,
            ));
        }
        if self.support_rows.len() != sup.rows {
            return Err(Error::shape(
                "sequence model: support row indices",
                sup.rows,
                self.support_rows.len(),
            ));
        }
        if !self.feature_names.is_empty() && self.feature_names.len() != self.n_features {
            return Err(Error::shape(
                "sequence model: feature names",
                self.n_features,
                self.feature_names.len(),
            ));
        }
        if self.coef.len() != self.groups.len() {
            return Err(Error::shape(
                "sequence model: coefficient blocks (one per group)",
                self.groups.len(),
                self.coef.len(),
            ));
        }
        for (g, (group, c)) in self.groups.iter().zip(&self.coef).enumerate() {
            if !c.is_empty() && c.len() != sup.rows * l {
                return Err(Error::shape(
                    format!("sequence model: coefficients of group {g} (support x labels)"),
                    sup.rows * l,
                    c.len(),
                ));
            }
            if let Some(&(k, w)) = group
                .components
                .iter()
                .find(|&&(k, w)| k >= self.kernels.len() || !w.is_finite())
            {
                return Err(Error::model(
                    ORIGIN,
                    format!(
                        "group {g} ({}) uses kernel {k} with factor {w}; there are {} kernels",
                        group.name,
                        self.kernels.len()
                    ),
                ));
            }
        }
        for k in &self.kernels {
            if k.n_features() != self.n_features {
                return Err(Error::shape(
                    format!("sequence model: input columns of kernel {}", k.name),
                    self.n_features,
                    k.n_features(),
                ));
            }
            if let Some(&j) = k
                .features()
                .and_then(|f| f.iter().find(|&&j| j >= self.n_features))
            {
                return Err(Error::model(
                    ORIGIN,
                    format!("kernel {} reads column {j} of {}", k.name, self.n_features),
                ));
            }
        }
        if self.transitions.len() != l * l {
            return Err(Error::shape(
                "sequence model: label-pair scores (labels x labels)",
                l * l,
                self.transitions.len(),
            ));
        }
        if self.weights.len() != self.weight_names.len() {
            return Err(Error::shape(
                "sequence model: kernel weights (one per name)",
                self.weight_names.len(),
                self.weights.len(),
            ));
        }
        if self.group_norms.len() != self.weights.len() {
            return Err(Error::shape(
                "sequence model: group norms (one per weight)",
                self.weights.len(),
                self.group_norms.len(),
            ));
        }
        Ok(())
    }

    /// Per base kernel, the combined coefficients `sum_g w_gk a_g` (`n_support x L`), `None`
    /// for kernels no non-zero group uses.
    pub(crate) fn kernel_coefs(&self) -> Vec<Option<Matrix>> {
        let (n, l) = (self.support.rows, self.n_labels());
        let mut out: Vec<Option<Matrix>> = vec![None; self.kernels.len()];
        for (g, c) in self.groups.iter().zip(&self.coef) {
            if c.is_empty() {
                continue;
            }
            for &(k, w) in &g.components {
                let m = out[k].get_or_insert_with(|| Matrix::zeros(n, l));
                for (o, v) in m.data.iter_mut().zip(c) {
                    *o += w * v;
                }
            }
        }
        out
    }

    /// Unigram scores (`n x L`) of the rows of `x` (the model is validated first). The rows
    /// are read in place: `x` is a [`MatrixRef`] (or a `&Matrix`), and only blocks of it are
    /// ever copied ([`expansion_scores`]).
    pub(crate) fn unary_scores<'x>(
        &self,
        x: impl Into<MatrixRef<'x>>,
        limit: &MemoryLimit,
    ) -> Result<Matrix> {
        let x = x.into();
        self.validate()?;
        if x.cols() != self.n_features {
            return Err(Error::shape(
                "features per position (the model's inputs)",
                self.n_features,
                x.cols(),
            ));
        }
        let coefs = self.kernel_coefs();
        expansion_scores(
            &self.kernels,
            &self.support,
            &coefs,
            self.n_labels(),
            x,
            limit,
        )
    }

    /// The best label sequence (label indices of the model) of each sequence (`spans` index
    /// rows of `x`), by Viterbi; `x` is read in place.
    pub fn predict<'x>(
        &self,
        x: impl Into<MatrixRef<'x>>,
        spans: &[Range<usize>],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        let x = x.into();
        if let Some(w) = spans.iter().find(|w| w.end > x.rows() || w.start > w.end) {
            return Err(Error::data(format!(
                "sequence {w:?} is outside the {} rows given",
                x.rows()
            )));
        }
        let s = self.unary_scores(x, limit)?;
        Ok(decode_sequences(&s, &self.transitions, spans))
    }

    /// Like [`SequenceModel::predict`], with label names.
    pub fn predict_names<'x>(
        &self,
        x: impl Into<MatrixRef<'x>>,
        spans: &[Range<usize>],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<String>>> {
        Ok(self
            .predict(x, spans, limit)?
            .iter()
            .map(|p| p.iter().map(|&y| self.labels[y].clone()).collect())
            .collect())
    }

    /// The predicted label sequences of a data set's sequences.
    pub fn predict_data(
        &self,
        data: &SequenceData,
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        self.predict(&data.x, &data.spans, limit)
    }

    /// Per-position accuracy (a fraction) on labeled data; labels are matched by name, and a
    /// gold label the model does not know counts as wrong.
    pub fn token_accuracy(&self, data: &SequenceData, limit: &MemoryLimit) -> Result<f64> {
        let pred = self.predict_data(data, limit)?;
        let to_model: Vec<Option<usize>> = data
            .label_names
            .iter()
            .map(|n| self.labels.iter().position(|m| m == n))
            .collect();
        let mut right = 0usize;
        let mut total = 0usize;
        for (s, p) in pred.iter().enumerate() {
            let gold = data.sequence_labels(s);
            total += gold.len();
            right += p
                .iter()
                .zip(gold)
                .filter(|&(&a, &b)| to_model.get(b).copied().flatten() == Some(a))
                .count();
        }
        Ok(if total == 0 {
            0.0
        } else {
            right as f64 / total as f64
        })
    }

    /// Names and weights of the kernel groups (and beta0 when learned).
    pub fn kernel_weights(&self) -> Vec<(String, f64)> {
        self.weight_names
            .iter()
            .cloned()
            .zip(self.weights.iter().copied())
            .collect()
    }
}

/// Viterbi on each sequence given unigram scores (`n x L`) and label-pair scores.
pub fn decode_sequences(scores: &Matrix, trans: &[f64], spans: &[Range<usize>]) -> Vec<Vec<usize>> {
    let l = scores.cols;
    spans
        .par_iter()
        .map(|w| viterbi(&scores.data[w.start * l..w.end * l], trans, l).1)
        .collect()
}

/// Fraction of positions whose predicted label (an index of `data`'s labels) is right.
pub fn token_accuracy(pred: &[Vec<usize>], data: &SequenceData) -> f64 {
    let mut right = 0usize;
    let mut total = 0usize;
    for (w, p) in pred.iter().enumerate() {
        let gold = data.sequence_labels(w);
        total += gold.len();
        right += p.iter().zip(gold).filter(|(a, b)| a == b).count();
    }
    if total == 0 {
        0.0
    } else {
        right as f64 / total as f64
    }
}

impl TrainedModel for SequenceModel {
    fn task(&self) -> Option<TaskKind> {
        None
    }

    /// The input columns are counted, not named (older files have no names).
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn classes(&self) -> Cow<'_, [String]> {
        Cow::Borrowed(&self.labels)
    }

    fn rows_refusal(&self) -> Option<Error> {
        Some(Error::unsupported(
            "a sequence model labels sequences: use predict_sequences",
        ))
    }

    fn predict_sequences(
        &self,
        x: MatrixRef<'_>,
        spans: &[Range<usize>],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        self.predict(x, spans, limit)
    }

    fn validate(&self) -> Result<()> {
        SequenceModel::validate(self)
    }

    fn summary(&self) -> Summary {
        let t = &self.training;
        let mut settings = vec![
            ("loss".to_string(), self.loss.to_string()),
            ("regularizer".to_string(), t.reg.to_string()),
            ("lambda".to_string(), num(t.lambda)),
            ("C".to_string(), num(t.c)),
            ("eta0".to_string(), format!("{}", t.eta0)),
            ("schedule".to_string(), t.schedule.to_string()),
            ("epochs".to_string(), t.epochs.to_string()),
            ("seed".to_string(), t.seed.to_string()),
            ("average".to_string(), yes_no(t.averaging)),
            ("learn_beta0".to_string(), yes_no(t.learn_beta0)),
        ];
        if let Some(r) = t.projection_radius {
            settings.push(("projection_radius".to_string(), num(r)));
        }
        let learner = match &t.wrapper {
            None => "SPOM on sequences (Martins et al. 2011, Alg. 3)".to_string(),
            Some(w) => {
                settings.push(("wrapper".to_string(), w.method.name().to_string()));
                settings.push((
                    "inner_epochs".to_string(),
                    format!("{} then {} per call", w.first_epochs, w.warm_epochs),
                ));
                settings.push((
                    "outer_iterations".to_string(),
                    w.outer_iterations.to_string(),
                ));
                settings.push(("inner_solves".to_string(), w.inner_solves.to_string()));
                settings.push(("status".to_string(), w.status.clone()));
                format!(
                    "{} around structured PEGASOS on sequences (wrapper MKL)",
                    match w.method {
                        WrapperMethod::SimpleMkl => "SimpleMKL (Rakotomamonjy et al. 2008)",
                        WrapperMethod::GaussSeidel => "Gauss-Seidel (Kloft et al. 2011)",
                    }
                )
            }
        };
        Summary {
            learner,
            task: "sequence".into(),
            classes: self.labels.clone(),
            n_features: self.n_features,
            settings,
            headline: format!(
                "trained on {} sequences ({} positions): {} kernel groups, {} support \
                 positions, objective {}",
                t.n_train_sequences,
                t.n_train_positions,
                self.groups.len(),
                self.support.rows,
                t.final_objective
                    .map_or("-".to_string(), |o| format!("{o:.6}"))
            ),
            columns: vec!["weight".into(), "norm".into()],
            ranked: false,
            kernels: self
                .weight_names
                .iter()
                .zip(&self.weights)
                .zip(&self.group_norms)
                .map(|((name, w), n)| KernelRow {
                    name: name.clone(),
                    values: vec![*w, *n],
                })
                .collect(),
            notes: Vec::new(),
        }
    }
}
