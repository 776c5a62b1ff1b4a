//! A trained kernel expansion over several kernels (the model Alg. 1 learns on vector data):
//! `f_y(x) = sum_m sum_j K_m(x, x_j) a_m[j, y] + b_y` over the support points x_j, where a
//! kernel trained as an explicit group contributes `z_m(x)^T W_m` instead (its feature map:
//! a linear kernel's columns, random Fourier features).

use crate::data::standardize::{Standardizer, TargetScaler};
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{FeatureMap, FittedKernel, MemoryLimit};
use crate::metrics::argmax;
use crate::prox::RegSpec;
use crate::select::SelectionRecord;
use crate::solver::online::StepSchedule;
use crate::task::{Loss, Prediction, TaskKind};
use crate::trained::summary::{num, yes_no};
use crate::trained::{task_name, KernelRow, Summary, TrainedModel};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// How an online model was trained: the settings it was fitted with and where the run
/// ended (no timings, so that the same seed gives the same model file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlineTraining {
    /// The regularizer, as text (`l21sq`, `l2q:q=1.5`, ...).
    #[serde(with = "as_text")]
    pub reg: RegSpec,
    pub lambda: f64,
    /// `1 / (lambda N)`.
    #[serde(rename = "C")]
    pub c: f64,
    pub eta0: f64,
    /// The step rule as text (`sqrt`, `const`, `inv`, `inv:sigma=S`).
    #[serde(with = "as_text")]
    pub schedule: StepSchedule,
    pub epochs: usize,
    pub seed: u64,
    pub averaging: bool,
    /// Radius of the projection ball, `None` without projection.
    pub projection_radius: Option<f64>,
    pub bias: bool,
    /// Training examples N.
    pub n_train: usize,
    /// The objective after the last epoch.
    pub final_objective: Option<f64>,
}

/// Serde through `Display` / `FromStr` (regularizers and step rules are stored as the text
/// users type).
pub(crate) mod as_text {
    use super::*;

    pub(crate) fn serialize<T: std::fmt::Display, S: Serializer>(
        v: &T,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub(crate) fn deserialize<'de, T, D>(d: D) -> std::result::Result<T, D::Error>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The trained multiple-kernel model on vector data.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelMachine {
    pub task: TaskKind,
    pub loss: Loss,
    /// Class names (binary: index 1 is the positive class); empty for regression.
    pub classes: Vec<String>,
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    /// Regression targets are learned standardized; predictions are mapped back.
    pub target_scaler: Option<TargetScaler>,
    pub kernels: Vec<FittedKernel>,
    /// Support points (standardized features), one row each.
    pub support: Matrix,
    /// Per kernel: coefficients `n_support * n_outputs` (support-point major); empty for a
    /// kernel whose weight is zero or that was trained as an explicit group.
    pub coef: Vec<Vec<f64>>,
    /// Per kernel trained as an explicit group: the weights of its feature map, `D x
    /// n_outputs` (feature major); empty for the others and for a zero weight. Empty
    /// altogether when every kernel went through its Gram matrix (and in model files
    /// written before explicit groups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primal: Vec<Vec<f64>>,
    pub bias: Vec<f64>,
    pub n_outputs: usize,
    /// Norm of each kernel's block ||theta_m|| and the implied kernel weights.
    pub group_norms: Vec<f64>,
    pub weights: Vec<f64>,
    /// How it was trained.
    pub training: OnlineTraining,
    /// How the settings were chosen, when `train` selected them (built-in selection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<crate::select::SelectionRecord>,
}

impl KernelMachine {
    /// Scores `n x n_outputs` of raw (unstandardized) rows: blocks of test rows are
    /// standardized and scored against the support points, so the cross Gram stays within a
    /// few hundred MB and the caller's rows are never copied whole.
    pub fn scores(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        let d = self.feature_names.len();
        if x.cols() != d {
            return Err(Error::shape(
                "features of the data (the model's)",
                d,
                x.cols(),
            ));
        }
        let l = self.n_outputs;
        let n = x.rows();
        let mut out = Matrix::zeros(n, l);
        for i in 0..n {
            out.row_mut(i).copy_from_slice(&self.bias);
        }
        self.add_primal_scores(x, &mut out);
        if self.support.rows == 0 {
            return Ok(out);
        }
        let block = (32_000_000 / self.support.rows.max(1)).clamp(1, n.max(1));
        let mut start = 0;
        while start < n {
            let end = (start + block).min(n);
            let idx: Vec<usize> = (start..end).collect();
            let mut xb = x.select_rows(&idx);
            if let Some(s) = &self.standardizer {
                for r in 0..xb.rows {
                    s.apply_row(xb.row_mut(r));
                }
            }
            for (kernel, coef) in self.kernels.iter().zip(&self.coef) {
                if coef.is_empty() {
                    continue;
                }
                let g = kernel.gram(&xb, &self.support, limit)?;
                for (r, i) in (start..end).enumerate() {
                    let o = out.row_mut(i);
                    g.for_each_in_row(r, |j, v| {
                        for y in 0..l {
                            o[y] += v * coef[j * l + y];
                        }
                    });
                }
            }
            start = end;
        }
        Ok(out)
    }

    /// `out += z_m(x)^T W_m` for every kernel with explicit weights, rows in parallel (each
    /// row standardized on its own).
    fn add_primal_scores(&self, x: MatrixRef<'_>, out: &mut Matrix) {
        use rayon::prelude::*;
        let maps: Vec<(FeatureMap, &[f64])> = self
            .kernels
            .iter()
            .zip(&self.primal)
            .filter(|(_, w)| !w.is_empty())
            .filter_map(|(k, w)| k.feature_map().map(|z| (z, w.as_slice())))
            .collect();
        if maps.is_empty() {
            return;
        }
        let l = self.n_outputs;
        let width = maps.iter().map(|(z, _)| z.dim()).max().unwrap_or(0);
        out.data.par_chunks_mut(l).enumerate().for_each_init(
            || (vec![0.0; x.cols()], vec![0.0; width]),
            |(row, z), (i, o)| {
                row.copy_from_slice(x.row(i));
                if let Some(s) = &self.standardizer {
                    s.apply_row(row);
                }
                for (map, w) in &maps {
                    let z = &mut z[..map.dim()];
                    map.map_row(row, z);
                    for (d, &zd) in z.iter().enumerate() {
                        for (oy, &wy) in o.iter_mut().zip(&w[d * l..(d + 1) * l]) {
                            *oy += zd * wy;
                        }
                    }
                }
            },
        );
    }

    /// Predictions of raw rows.
    pub fn predict(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Vec<Prediction>> {
        let s = self.scores(x, limit)?;
        Ok((0..s.rows)
            .map(|i| {
                let r = s.row(i);
                match self.task {
                    TaskKind::Binary => Prediction::Class(usize::from(r[0] > 0.0)),
                    TaskKind::Multiclass => Prediction::Class(argmax(r)),
                    TaskKind::Regression => Prediction::Value(match &self.target_scaler {
                        Some(t) => t.invert(r[0]),
                        None => r[0],
                    }),
                }
            })
            .collect())
    }

    /// Checks that every stored shape agrees (a model read from a file): after `Ok`, scoring
    /// rows with as many columns as [`KernelMachine::feature_names`] cannot panic.
    pub(crate) fn validate(&self) -> Result<()> {
        let d = self.feature_names.len();
        let bad = |what: &str, want: usize, found: usize| Err(Error::shape(what, want, found));
        let outputs = match self.task {
            TaskKind::Binary | TaskKind::Regression => 1,
            TaskKind::Multiclass => self.classes.len(),
        };
        if self.n_outputs != outputs || self.loss.n_outputs(self.classes.len()) != outputs {
            return bad("outputs of the model", outputs, self.n_outputs);
        }
        match self.task {
            TaskKind::Binary if self.classes.len() != 2 => {
                return bad("classes of a binary model", 2, self.classes.len())
            }
            TaskKind::Multiclass if self.classes.len() < 2 => {
                return Err(Error::data("a multiclass model needs at least 2 classes"))
            }
            TaskKind::Regression if !self.classes.is_empty() => {
                return bad("classes of a regression model", 0, self.classes.len())
            }
            _ => {}
        }
        if let Some(s) = &self.standardizer {
            if s.mean.len() != d || s.scale.len() != d {
                return bad(
                    "features of the standardizer",
                    d,
                    s.mean.len().min(s.scale.len()),
                );
            }
        }
        for k in &self.kernels {
            k.validate()?;
        }
        let m = self.kernels.len();
        for (what, len) in [
            ("coefficient blocks", self.coef.len()),
            ("group norms", self.group_norms.len()),
            ("kernel weights", self.weights.len()),
        ] {
            if len != m {
                return bad(what, m, len);
            }
        }
        if self.bias.len() != self.n_outputs {
            return bad("bias values", self.n_outputs, self.bias.len());
        }
        let sup = &self.support;
        if sup.cols != d || sup.data.len() != sup.rows.saturating_mul(sup.cols) {
            return bad(
                "values of the support points",
                sup.rows.saturating_mul(d),
                sup.data.len(),
            );
        }
        if !self.primal.is_empty() {
            if self.primal.len() != m {
                return bad("explicit weight blocks", m, self.primal.len());
            }
            for ((k, w), c) in self.kernels.iter().zip(&self.primal).zip(&self.coef) {
                if w.is_empty() {
                    continue;
                }
                let Some(map) = k.feature_map() else {
                    return Err(Error::model(
                        "online model",
                        format!("kernel {} has explicit weights but no feature map", k.name),
                    ));
                };
                if !c.is_empty() {
                    return Err(Error::model(
                        "online model",
                        format!(
                            "kernel {} has both support coefficients and explicit weights",
                            k.name
                        ),
                    ));
                }
                if w.len() != map.dim() * self.n_outputs {
                    return bad(
                        &format!("explicit weights of kernel {}", k.name),
                        map.dim() * self.n_outputs,
                        w.len(),
                    );
                }
                if w.iter().any(|v| !v.is_finite()) {
                    return Err(Error::model(
                        "online model",
                        format!("kernel {} has a non-finite explicit weight", k.name),
                    ));
                }
            }
        }
        for (k, c) in self.kernels.iter().zip(&self.coef) {
            if k.n_features() != d {
                return bad(&format!("features of kernel {}", k.name), d, k.n_features());
            }
            if let Some(f) = k.features() {
                if let Some(&j) = f.iter().find(|&&j| j >= d) {
                    return bad(&format!("feature index of kernel {}", k.name), d, j);
                }
            }
            if !c.is_empty() && c.len() != sup.rows * self.n_outputs {
                return bad(
                    &format!("coefficients of kernel {}", k.name),
                    sup.rows * self.n_outputs,
                    c.len(),
                );
            }
        }
        Ok(())
    }
}

impl TrainedModel for KernelMachine {
    fn task(&self) -> Option<TaskKind> {
        Some(self.task)
    }

    fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    fn classes(&self) -> Cow<'_, [String]> {
        Cow::Borrowed(&self.classes)
    }

    /// The scores, mapped back to the targets' scale for regression.
    fn decision_rows(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        let mut s = self.scores(x, limit)?;
        if let (TaskKind::Regression, Some(t)) = (self.task, &self.target_scaler) {
            s.data.iter_mut().for_each(|v| *v = t.invert(*v));
        }
        Ok(s)
    }

    fn predict_rows(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Vec<Prediction>> {
        self.predict(x, limit)
    }

    fn validate(&self) -> Result<()> {
        KernelMachine::validate(self)
    }

    fn selection(&self) -> Option<&SelectionRecord> {
        self.selection.as_ref()
    }

    fn set_selection(&mut self, record: SelectionRecord) {
        self.selection = Some(record);
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
            ("bias".to_string(), yes_no(t.bias)),
            (
                "standardize".to_string(),
                yes_no(self.standardizer.is_some()),
            ),
        ];
        if let Some(r) = t.projection_radius {
            settings.push(("projection_radius".to_string(), num(r)));
        }
        let zero = self.weights.iter().filter(|w| **w == 0.0).count();
        // Explicit groups keep weights over their feature maps, not support points.
        let explicit: usize = self
            .primal
            .iter()
            .map(|w| w.len() / self.n_outputs.max(1))
            .sum();
        let points = match (self.support.rows, explicit) {
            (0, e) if e > 0 => format!("{e} explicit features"),
            (s, 0) => format!("{s} support points"),
            (s, e) => format!("{s} support points and {e} explicit features"),
        };
        Summary {
            learner: "online proximal MKL (Martins et al. 2011, Alg. 1)".into(),
            task: task_name(self.task).into(),
            classes: self.classes.clone(),
            n_features: self.feature_names.len(),
            settings,
            headline: format!(
                "trained on {} rows: {} kernels ({zero} with weight 0), {points}, objective {}",
                t.n_train,
                self.kernels.len(),
                t.final_objective
                    .map_or("-".to_string(), |o| format!("{o:.6}"))
            ),
            columns: vec!["weight".into(), "norm".into()],
            ranked: false,
            kernels: self
                .kernels
                .iter()
                .zip(&self.weights)
                .zip(&self.group_norms)
                .map(|((k, w), n)| KernelRow {
                    name: k.name.clone(),
                    values: vec![*w, *n],
                })
                .collect(),
            notes: Vec::new(),
        }
    }
}
