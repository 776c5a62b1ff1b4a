//! lp-norm MKL's settings (Kloft et al. 2011) and its fit on a table.

use super::table_fit::{batch, check_squares_finite};
use super::{not_in_spec, refuse_structured, CheckedSpec, Family};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{norm, Setting};
use crate::model::Model;
use crate::run::Observer;
use crate::solver::lp_mkl::{LpMklModel, LpMklModelParams, LpMklParams};
use crate::task::targets::encode_targets;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of lp-norm MKL.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LpMklSpec {
    /// The kernel-weight norm p >= 1 (`f64::INFINITY`: the plain sum of kernels). Written
    /// as a number or `"inf"`; read by [`crate::solver::lp_mkl::parse_p`] (a number, a
    /// fraction such as `"4/3"`, or `"inf"`), the one grammar of p.
    #[serde(with = "crate::solver::lp_mkl::p_serde")]
    pub p: f64,
}

impl Family for LpMklSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "p" => self.p = norm(s, t)?,
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        if self.p.is_nan() || self.p < 1.0 {
            return Err(Error::param("p", self.p, "a number >= 1 or inf"));
        }
        refuse_structured(kind, task)
    }

    fn takes_weights(&self) -> bool {
        true
    }

    fn fit_table(
        &self,
        _kind: LearnerKind,
        table: TableRef<'_>,
        task: TaskKind,
        _validation: Option<TableRef<'_>>,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        let l = self;
        let (classes, y) = encode_targets(task, table.targets())?;
        check_squares_finite(&y, "lp-MKL")?;
        let lambda = spec.strength.ridge_lambda();
        let params = LpMklModelParams {
            lp: LpMklParams {
                p: l.p,
                lambda,
                bias: spec.bias,
                ..LpMklParams::default()
            },
            standardize: spec.standardize,
            seed: spec.seed,
            memory: spec.memory,
        };
        let (m, run) = LpMklModel::fit_weighted(
            table.x(),
            table.feature_names(),
            &y,
            table.weights(),
            &spec.kernels_for(table.n_features()),
            &params,
            observer,
        )?;
        Ok(Fitted::new(
            Model::LpMkl(batch(table, task, classes, m)),
            run,
            lambda,
        ))
    }
}
