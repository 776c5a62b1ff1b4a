//! Multi-template learning's settings (Mao & Tsang, Alg. 1): the 1-slack cutting plane with
//! a block norm over templates, as a template tagger or a parser.

use super::{not_in_spec, CheckedSpec, Family, ParserSettings, Strength};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, norm, real, Setting};
use crate::pipeline::columns::tagging::TaggerLearner;
use crate::run::Observer;
use crate::solver::cutting_plane::CuttingPlaneParams;
use crate::solver::online::OnlineParams;
use crate::task::structured::StructLoss;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of multi-template learning (Mao & Tsang, Alg. 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MtlSpec {
    /// The block norm `q >= 1` of the squared regularizer `1/2 (sum_j ||w_j||^q)^(2/q)` (the
    /// paper's p): 1 is sparse over templates (problem (6)), 2 the plain l2 structural SVM,
    /// above 2 the weights spread more evenly than l2 (the paper's Table 8 tries 4).
    pub q: f64,
    /// Stop when the best objective is within `C epsilon` of the working set's lower bound
    /// (the paper's epsilon: the average loss is certified to within it).
    pub epsilon: f64,
    /// Cuts at most (then the run stops with status iteration-limit).
    pub max_iter: usize,
    /// Where each cut is found: at `w_best + s (w_ws - w_best)`, between the best point so
    /// far and the working set's solution (separation inside the segment); `None`: the
    /// cutting plane's default
    /// ([`crate::solver::cutting_plane::CuttingPlaneParams::separation_step`]), 1: the
    /// paper's loop, at the working set's solution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub separation_step: Option<f64>,
}

impl Default for MtlSpec {
    fn default() -> Self {
        MtlSpec {
            q: 1.0,
            epsilon: 0.01,
            max_iter: 500,
            separation_step: None,
        }
    }
}

/// The 1-slack cutting plane's `C` (of `1/2 ||w||^2 + C xi`, `xi` the average loss) for `n`
/// training examples: `C n` for the spec's `C` (which weighs the sum of the losses), `1 /
/// lambda` for its `lambda` (the online learner's scale).
pub(crate) fn cutting_plane_c(strength: Strength, n: usize) -> f64 {
    match strength {
        Strength::C(c) => c * n.max(1) as f64,
        Strength::Lambda(l) => 1.0 / l,
    }
}

impl MtlSpec {
    /// The cutting plane's settings with `n` training examples.
    fn params(&self, spec: &CheckedSpec, n: usize) -> CuttingPlaneParams {
        CuttingPlaneParams {
            c: cutting_plane_c(spec.strength, n),
            epsilon: self.epsilon,
            max_iter: self.max_iter,
            separation_step: self.separation_step,
            ..Default::default()
        }
    }
}

impl Family for MtlSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "q" => self.q = norm(s, t)?,
            "eps" => self.epsilon = real(s, t)?,
            "max_iter" => self.max_iter = count(s, t)?,
            "separation_step" => self.separation_step = Some(real(s, t)?),
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, _kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        let m = self;
        if !(m.q.is_finite() && m.q >= 1.0) {
            return Err(Error::param("q", m.q, "a finite block norm q >= 1"));
        }
        if !(m.epsilon.is_finite() && m.epsilon > 0.0) {
            return Err(Error::param("epsilon", m.epsilon, "a positive number"));
        }
        if m.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if let Some(s) = m.separation_step {
            crate::solver::cutting_plane::check_separation_step(s)?;
        }
        if !matches!(task, Task::Sequence | Task::Parsing) {
            return Err(Error::unsupported(
                "multi-template learning learns structured outputs over feature templates: \
                 use it for sequence (columns and templates) or parsing tasks",
            ));
        }
        Ok(())
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
            "multi-template learning needs sentences and templates, not a table",
        ))
    }

    fn tagger(
        &self,
        _kind: LearnerKind,
        spec: &CheckedSpec,
        n: usize,
    ) -> Result<(TaggerLearner, f64)> {
        let params = self.params(spec, n);
        let lambda = 1.0 / params.c;
        Ok((TaggerLearner::CuttingPlane { params, q: self.q }, lambda))
    }

    fn parser(&self, _kind: LearnerKind, spec: &CheckedSpec, n: usize) -> Result<ParserSettings> {
        let cp = self.params(spec, n);
        let lambda = 1.0 / cp.c;
        Ok(ParserSettings {
            params: OnlineParams {
                seed: spec.seed,
                ..OnlineParams::default()
            },
            cutting_plane: Some((cp, self.q)),
            loss: StructLoss::Hinge,
            lambda,
        })
    }
}
