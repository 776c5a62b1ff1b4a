//! The online proximal learner's settings (Alg. 1; SPOM, Alg. 3, on sequences) and its
//! fits: a table (the kernel machine of `pipeline::table`), sequences, a template tagger and
//! a parser (the averaged iterate of the best epoch in both).

use super::{not_in_spec, sequence_notes, CheckedSpec, Family, LossKind, ParserSettings};
use crate::data::{SequenceData, TableRef};
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, real, switch, Setting};
use crate::model::Model;
use crate::pipeline::columns::tagging::TaggerLearner;
use crate::pipeline::sequence::spom::{fit_sequence, SequenceFitConfig};
use crate::pipeline::table::vector::{fit_vector, VectorFitConfig};
use crate::prox::RegSpec;
use crate::run::Observer;
use crate::solver::online::{OnlineSteps, StepSchedule};
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of the online proximal learner (Alg. 1; SPOM on sequences).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OnlineSpec {
    /// The regularizer; default: squared l2,1 (sparse MKL) with several kernels or
    /// per-feature kernels, plain l2 with one kernel.
    pub reg: Option<RegSpec>,
    /// The loss; default: hinge (binary, multiclass, sequence), squared (regression).
    pub loss: Option<LossKind>,
    /// The step size, epochs, averaging, projection, `learn_beta0`, shards and mini-batches,
    /// the engine's own settings and defaults ([`OnlineSteps`]); their keys are the spec's.
    #[serde(flatten)]
    pub steps: OnlineSteps,
}

impl Family for OnlineSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "regularizer" => self.reg = Some(t.parse::<RegSpec>()?),
            "loss" => self.loss = Some(t.parse::<LossKind>()?),
            "epochs" => self.steps.epochs = count(s, t)?,
            "eta0" => self.steps.eta0 = real(s, t)?,
            "schedule" => self.steps.schedule = t.parse::<StepSchedule>()?,
            "average" => self.steps.averaging = switch(s, t)?,
            "no_projection" => self.steps.projection = !switch(s, t)?,
            "learn_beta0" => self.steps.learn_beta0 = switch(s, t)?,
            "shards" => self.steps.shards = count(s, t)?,
            "batch" => self.steps.batch = count(s, t)?,
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, _kind: LearnerKind, task: Task, several: bool) -> Result<()> {
        self.steps.validate()?;
        let reg = self
            .reg
            .clone()
            .unwrap_or(if several { RegSpec::L21Sq } else { RegSpec::L2 });
        reg.validate()?;
        if !reg.is_block() {
            return Err(Error::param(
                "reg",
                &reg,
                "a regularizer of the kernels' norms (l2, l21, l21sq, l2q or elastic): \
                 kernel groups only expose their norms",
            ));
        }
        self.reg = Some(reg);
        let loss = self.loss.unwrap_or(match task {
            Task::Regression => LossKind::Squared,
            _ => LossKind::Hinge,
        });
        match task.vector_kind() {
            Some(t) => {
                loss.vector_loss(t)?;
            }
            None => {
                loss.sequence_loss()?;
            }
        }
        self.loss = Some(loss);
        let t = &self.steps;
        if t.shards > 1 && !matches!(task, Task::Sequence | Task::Parsing) {
            return Err(Error::param(
                "shards",
                t.shards,
                "1: parallel shards train sequences and parsers only (--task sequence \
                 or parsing)",
            ));
        }
        if t.batch > 1 && !matches!(task, Task::Sequence | Task::Parsing) {
            return Err(Error::param(
                "batch",
                t.batch,
                "1: parallel mini-batches train sequences and parsers only (--task \
                 sequence or parsing)",
            ));
        }
        if t.learn_beta0 && task != Task::Sequence {
            return Err(Error::param(
                "learn_beta0",
                true,
                "false: only sequence tasks have a label-pair group",
            ));
        }
        Ok(())
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
        let loss = self
            .loss
            .expect("check() sets the loss")
            .vector_loss(task)?;
        let params = spec.online_params(table.len())?;
        let lambda = params.lambda;
        let cfg = VectorFitConfig {
            task,
            loss,
            kernels: spec.kernels_for(table.n_features()),
            params,
            bias: spec.bias,
            standardize: spec.standardize,
            memory: spec.memory,
            explicit_linear: true,
        };
        let (m, run) = fit_vector(table, &cfg, observer)?;
        Ok(Fitted::new(Model::KernelMachine(m), run, lambda))
    }

    fn fit_sequences(
        &self,
        _kind: LearnerKind,
        data: &SequenceData,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        if data.n_sequences() == 0 {
            return Err(Error::data("the training set has no sequences"));
        }
        let params = spec.online_params(data.n_sequences())?;
        let lambda = params.lambda;
        let cfg = SequenceFitConfig {
            loss: self.loss.expect("check() sets the loss").sequence_loss()?,
            kernels: spec.kernels.clone(),
            average: false,
            params,
            memory: spec.memory,
        };
        let (m, run) = fit_sequence(data, &cfg, observer)?;
        Ok(Fitted {
            notes: sequence_notes(spec),
            ..Fitted::new(Model::Sequence(m), run, lambda)
        })
    }

    fn tagger(
        &self,
        _kind: LearnerKind,
        spec: &CheckedSpec,
        n: usize,
    ) -> Result<(TaggerLearner, f64)> {
        let mut params = spec.online_params(n)?;
        params.steps.averaging = true;
        let lambda = params.lambda;
        let loss = self.loss.expect("check() sets the loss").sequence_loss()?;
        Ok((TaggerLearner::Online { params, loss }, lambda))
    }

    fn parser(&self, _kind: LearnerKind, spec: &CheckedSpec, n: usize) -> Result<ParserSettings> {
        let loss = self.loss.expect("check() sets the loss").sequence_loss()?;
        let mut params = spec.online_params(n)?;
        params.steps.averaging = true;
        let lambda = params.lambda;
        Ok(ParserSettings {
            params,
            cutting_plane: None,
            loss,
            lambda,
        })
    }
}
