//! The wrapper learners' settings (SimpleMKL, Rakotomamonjy et al. 2008; Gauss-Seidel,
//! Kloft et al. 2011): kernel weights around an SVM, exact SMO on a table and structured
//! PEGASOS on sequences. The two learners share [`WrapperSpec`].

use super::table_fit::batch;
use super::{not_in_spec, sequence_notes, CheckedSpec, Family, Strength};
use crate::data::{SequenceData, TableRef};
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, real, Setting};
use crate::kernel::MemoryLimit;
use crate::model::Model;
use crate::pipeline::sequence::wrapper::{fit_sequence_wrapper, SequenceWrapperConfig};
use crate::run::Observer;
use crate::solver::smo::SmoParams;
use crate::solver::wrapper::{WrapperMethod, WrapperModel, WrapperModelParams, WrapperParams};
use crate::task::targets::encode_targets;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Settings of the wrapper learners (SimpleMKL, Gauss-Seidel).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WrapperSpec {
    /// Stop when the relative MKL duality gap is at most this.
    pub tol: f64,
    /// Outer iterations at most (then the run stops with status iteration-limit).
    pub max_iter: usize,
    /// The inner SMO solver's tolerance on the maximal violation (libsvm's `-e`; tables).
    pub svm_tol: f64,
    /// The epsilon-insensitive zone of the regression loss (libsvm's `-p`).
    pub epsilon: f64,
    /// Structured PEGASOS epochs of the first inner solve (sequences).
    pub first_epochs: usize,
    /// Warm-started PEGASOS epochs of each later inner solve (sequences).
    pub warm_epochs: usize,
}

/// The outer loop's defaults are the engine's ([`WrapperParams::default`]).
impl Default for WrapperSpec {
    fn default() -> Self {
        let engine = WrapperParams::default();
        WrapperSpec {
            tol: engine.tol,
            max_iter: engine.max_iter,
            svm_tol: SmoParams::default().tol,
            epsilon: 0.1,
            first_epochs: 20,
            warm_epochs: 3,
        }
    }
}

impl WrapperSpec {
    /// Refuses a tolerance that is not a positive number, a negative or non-finite
    /// epsilon, and zero iterations or epochs.
    pub(crate) fn check(&self) -> Result<()> {
        for (name, v) in [("tol", self.tol), ("svm_tol", self.svm_tol)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::param(name, v, "a positive number"));
            }
        }
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(Error::param(
                "epsilon",
                self.epsilon,
                "a finite number >= 0",
            ));
        }
        for (name, v) in [
            ("max_iter", self.max_iter),
            ("first_epochs", self.first_epochs),
            ("warm_epochs", self.warm_epochs),
        ] {
            if v == 0 {
                return Err(Error::param(name, 0, "at least 1"));
            }
        }
        Ok(())
    }

    /// The settings of one wrapper fit on a table (SMO inside) with the SVM's C `c`.
    pub(crate) fn model_params(
        &self,
        method: WrapperMethod,
        c: f64,
        standardize: bool,
        seed: u64,
        memory: MemoryLimit,
    ) -> WrapperModelParams {
        WrapperModelParams {
            method,
            c,
            epsilon: self.epsilon,
            smo: SmoParams {
                tol: self.svm_tol,
                ..SmoParams::default()
            },
            wrapper: WrapperParams {
                tol: self.tol,
                max_iter: self.max_iter,
                ..WrapperParams::default()
            },
            standardize,
            seed,
            memory,
            row_weights: None,
        }
    }
}

/// Which wrapper a learner kind names.
fn method(kind: LearnerKind) -> WrapperMethod {
    match kind {
        LearnerKind::GaussSeidel => WrapperMethod::GaussSeidel,
        _ => WrapperMethod::SimpleMkl,
    }
}

impl Family for WrapperSpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "tol" => self.tol = real(s, t)?,
            "svm_tol" => self.svm_tol = real(s, t)?,
            "epsilon" => self.epsilon = real(s, t)?,
            "first_epochs" => self.first_epochs = count(s, t)?,
            "warm_epochs" => self.warm_epochs = count(s, t)?,
            "max_iter" => self.max_iter = count(s, t)?,
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        WrapperSpec::check(self)?;
        if task == Task::Parsing {
            return Err(Error::unsupported(format!(
                "the {kind} learner does not parse; use the online learner or mtl"
            )));
        }
        Ok(())
    }

    fn takes_weights(&self) -> bool {
        true
    }

    fn fit_table(
        &self,
        kind: LearnerKind,
        table: TableRef<'_>,
        task: TaskKind,
        _validation: Option<TableRef<'_>>,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        fit_wrapper(table, task, method(kind), self, spec, observer)
    }

    fn fit_sequences(
        &self,
        kind: LearnerKind,
        data: &SequenceData,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        fit_sequence_wrappers(data, method(kind), self, spec, observer)
    }
}

/// SimpleMKL or Gauss-Seidel around the exact SMO solver (C-SVC, one-vs-rest, epsilon-SVR).
fn fit_wrapper(
    table: TableRef<'_>,
    task: TaskKind,
    method: WrapperMethod,
    w: &WrapperSpec,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let (classes, y) = encode_targets(task, table.targets())?;
    let c = spec.strength.svm_c(table.len());
    let mut params = w.model_params(method, c, spec.standardize, spec.seed, spec.memory);
    params.row_weights = table.weights().map(<[f64]>::to_vec);
    let (m, run) = WrapperModel::fit(
        table.x(),
        table.feature_names(),
        &y,
        task,
        &spec.kernels_for(table.n_features()),
        &params,
        observer,
        &mut |_| crate::run::Control::Continue,
    )?;
    let mut notes = Vec::new();
    if !spec.bias {
        notes.push("bias = false has no effect: the SVM's offset is part of its dual".into());
    }
    Ok(Fitted {
        notes,
        ..Fitted::new(Model::Wrapper(batch(table, task, classes, m)), run, 1.0 / c)
    })
}

/// SimpleMKL or Gauss-Seidel on sequences around structured PEGASOS (martins2011 Sec. 4.1,
/// Figure 2's wrappers): the first inner solve `first_epochs`, each later one `warm_epochs`.
fn fit_sequence_wrappers(
    data: &SequenceData,
    method: WrapperMethod,
    w: &WrapperSpec,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    if data.n_sequences() == 0 {
        return Err(Error::data("the training set has no sequences"));
    }
    let n = data.n_sequences();
    let c = match spec.strength {
        Strength::C(c) => c,
        Strength::Lambda(l) => 1.0 / (l * n as f64),
    };
    let cfg = SequenceWrapperConfig {
        method,
        kernels: spec.kernels.clone(),
        c,
        first_epochs: w.first_epochs,
        warm_epochs: w.warm_epochs,
        wrapper: WrapperParams {
            tol: w.tol,
            max_iter: w.max_iter,
            ..WrapperParams::default()
        },
        seed: spec.seed,
        memory: spec.memory,
    };
    let (m, run) = fit_sequence_wrapper(data, &cfg, observer)?;
    let notes = sequence_notes(spec);
    Ok(Fitted {
        notes,
        ..Fitted::new(Model::Sequence(m), run, 1.0 / (c * n as f64))
    })
}
