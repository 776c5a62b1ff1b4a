//! The batch CRF's settings: the l2-regularized CRF of martins2011 eq. 2-3 minimized by
//! L-BFGS ([`crate::solver::batch`]), as a template tagger. It is the optimum SPOM's CRF
//! loss aims at, and the trainer CRFsuite and sklearn-crfsuite run by default (`lbfgs`,
//! with `c2 = 1 / (2 C)`).

use super::{not_in_spec, CheckedSpec, Family};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, Setting};
use crate::pipeline::columns::tagging::TaggerLearner;
use crate::run::Observer;
use crate::solver::batch::LbfgsParams;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of the batch CRF (L-BFGS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LbfgsSpec {
    /// L-BFGS iterations at most (then the run stops with status iteration-limit). The
    /// tolerances are the engine's ([`LbfgsParams`]).
    pub max_iter: usize,
}

impl Default for LbfgsSpec {
    fn default() -> Self {
        LbfgsSpec {
            max_iter: LbfgsParams::default().max_iter as usize,
        }
    }
}

impl LbfgsSpec {
    /// L-BFGS's settings with `n` training sentences: `lambda = 1 / (C n)` (the online
    /// learner's scale: `1/2 ||w||^2 + C sum_i L_i` divided by `C n`).
    pub(crate) fn params(&self, spec: &CheckedSpec, n: usize) -> LbfgsParams {
        LbfgsParams {
            lambda: spec.strength.online_lambda(n),
            max_iter: self.max_iter as u64,
            ..LbfgsParams::default()
        }
    }
}

impl Family for LbfgsSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "max_iter" => self.max_iter = count(s, t)?,
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, _kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        let instead = match task {
            Task::Sequence => return Ok(()),
            Task::Parsing => "parsers train with online or mtl",
            Task::Binary | Task::Multiclass | Task::Regression => {
                "tables train with the table learners (no --algo: the built-in selection)"
            }
        };
        Err(Error::unsupported(format!(
            "the lbfgs learner trains the CRF of a template tagger (sequence task with \
             feature dicts or columns and templates); {instead}"
        )))
    }

    fn fit_table(
        &self,
        _kind: LearnerKind,
        _table: TableRef<'_>,
        _task: TaskKind,
        _validation: Option<TableRef<'_>>,
        _spec: &CheckedSpec,
        _observer: &dyn Observer,
    ) -> Result<Fitted> {
        Err(Error::unsupported(
            "the lbfgs learner trains a tagger's CRF over templates, not a table",
        ))
    }

    fn tagger(
        &self,
        _kind: LearnerKind,
        spec: &CheckedSpec,
        n: usize,
    ) -> Result<(TaggerLearner, f64)> {
        let params = self.params(spec, n);
        let lambda = params.lambda;
        Ok((TaggerLearner::Lbfgs { params }, lambda))
    }
}
