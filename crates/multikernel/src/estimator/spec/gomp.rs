//! MKL-GOMP's settings (Sindhwani & Lozano 2012) and its fit on a table, with the path
//! length chosen on validation rows when they are given.

use super::table_fit::{batch, check_squares_finite, validation_targets};
use super::{not_in_spec, refuse_structured, CheckedSpec, Family};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::estimator::fitted::{Fitted, PathChoice};
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, real, Setting};
use crate::model::Model;
use crate::run::Observer;
use crate::solver::gomp::{GompModel, GompModelParams, GompParams, ValidationMetric};
use crate::task::targets::encode_targets;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of MKL-GOMP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GompSpec {
    /// The largest number of kernels chosen.
    pub max_kernels: usize,
    /// Stop when the best improvement is at most this.
    pub eps: f64,
    /// Search only a seeded random subsample of this many not-yet-chosen kernels per step.
    pub subsample: Option<usize>,
}

impl Default for GompSpec {
    fn default() -> Self {
        GompSpec {
            max_kernels: 20,
            eps: 1e-4,
            subsample: None,
        }
    }
}

impl Family for GompSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "max_kernels" => self.max_kernels = count(s, t)?,
            "eps" => self.eps = real(s, t)?,
            "subsample" => self.subsample = Some(count(s, t)?),
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        if self.max_kernels == 0 {
            return Err(Error::param("max_kernels", 0, "at least 1"));
        }
        if !(self.eps.is_finite() && self.eps >= 0.0) {
            return Err(Error::param("eps", self.eps, "a finite number >= 0"));
        }
        if self.subsample == Some(0) {
            return Err(Error::param("subsample", 0, "at least 1"));
        }
        refuse_structured(kind, task)
    }

    fn takes_validation(&self) -> bool {
        true
    }

    fn fit_table(
        &self,
        _kind: LearnerKind,
        table: TableRef<'_>,
        task: TaskKind,
        validation: Option<TableRef<'_>>,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        let g = self;
        let (classes, y) = encode_targets(task, table.targets())?;
        check_squares_finite(&y, "MKL-GOMP")?;
        let yv = match validation {
            Some(v) => Some((v, validation_targets(table, v, task, &classes)?)),
            None => None,
        };
        let lambda = spec.strength.gomp_lambda(table.len());
        let params = GompModelParams {
            gomp: GompParams {
                lambda,
                max_kernels: g.max_kernels,
                eps: g.eps,
                bias: spec.bias,
                seed: spec.seed,
                subsample: g.subsample,
                ..GompParams::default()
            },
            standardize: spec.standardize,
            seed: spec.seed,
            memory: spec.memory,
        };
        let (mut m, run) = GompModel::fit(
            table.x(),
            table.feature_names(),
            &y,
            &spec.kernels_for(table.n_features()),
            &params,
            observer,
        )?;
        let path_choice = match yv {
            Some((v, yv)) => {
                let metric = match task {
                    TaskKind::Regression => ValidationMetric::SquaredError,
                    _ => ValidationMetric::ClassificationError,
                };
                let of = m.n_kernels();
                let (chosen, losses) = m.select_on_validation(v.x(), &yv, metric, &spec.memory)?;
                Some(PathChoice {
                    rows: v.len(),
                    chosen,
                    of,
                    metric: match task {
                        TaskKind::Regression => "squared error",
                        _ => "error rate",
                    },
                    losses,
                })
            }
            None => None,
        };
        Ok(Fitted {
            path_choice,
            ..Fitted::new(Model::Gomp(batch(table, task, classes, m)), run, lambda)
        })
    }
}
