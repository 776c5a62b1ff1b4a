//! A trained kernel expansion over several kernels (the model Alg. 1 learns on vector data):
//! `f_y(x) = sum_m sum_j K_m(x, x_j) a_m[j, y] + b_y` over the support points x_j.

use crate::data::standardize::{Standardizer, TargetScaler};
use crate::data::Matrix;
use crate::error::Result;
use crate::kernel::{FittedKernel, MemoryLimit};
use crate::metrics::argmax;
use crate::task::{Loss, Prediction, TaskKind};
use serde::{Deserialize, Serialize};

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
    /// kernel whose weight is zero.
    pub coef: Vec<Vec<f64>>,
    pub bias: Vec<f64>,
    pub n_outputs: usize,
    /// Norm of each kernel's block ||theta_m|| and the implied kernel weights.
    pub group_norms: Vec<f64>,
    pub weights: Vec<f64>,
    /// How it was trained (regularizer, lambda, C, eta0, epochs, ...), for `inspect`.
    pub training: serde_json::Value,
}

impl KernelMachine {
    /// Scores `n x n_outputs` of raw (unstandardized) rows.
    pub fn scores(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Matrix> {
        let xs = match &self.standardizer {
            Some(s) => s.apply(x),
            None => x.clone(),
        };
        let l = self.n_outputs;
        let mut out = Matrix::zeros(x.rows, l);
        for i in 0..x.rows {
            out.row_mut(i).copy_from_slice(&self.bias);
        }
        if self.support.rows == 0 {
            return Ok(out);
        }
        // Test rows in blocks so the cross Gram stays within a few hundred MB.
        let block = (32_000_000 / self.support.rows.max(1)).clamp(1, x.rows.max(1));
        for (kernel, coef) in self.kernels.iter().zip(&self.coef) {
            if coef.is_empty() {
                continue;
            }
            let mut start = 0;
            while start < x.rows {
                let end = (start + block).min(x.rows);
                let idx: Vec<usize> = (start..end).collect();
                let g = kernel.gram(&xs.select_rows(&idx), &self.support, limit)?;
                for (r, i) in (start..end).enumerate() {
                    let o = out.row_mut(i);
                    g.for_each_in_row(r, |j, v| {
                        for y in 0..l {
                            o[y] += v * coef[j * l + y];
                        }
                    });
                }
                start = end;
            }
        }
        Ok(out)
    }

    /// Predictions of raw rows.
    pub fn predict(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Vec<Prediction>> {
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

    /// Kernel names with their weights.
    pub fn kernel_weights(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.weights)
            .map(|(k, w)| (k.name.clone(), *w))
            .collect()
    }
}
