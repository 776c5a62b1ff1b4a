//! The names every other part of the estimator speaks of: the [`Task`] and the
//! [`LearnerKind`] (the registry's families, the specs' variants, the fitted results'
//! learner).

use crate::error::{Error, Result};
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Two classes (the second in natural order is the positive class).
    Binary,
    /// Two or more classes.
    Multiclass,
    /// A real value.
    Regression,
    /// A label per position of a sequence (first-order chain).
    Sequence,
    /// A dependency tree per sentence (arc-factored; templates as groups).
    Parsing,
}

impl Task {
    /// Every task, in the order the documentation lists them.
    pub(crate) const ALL: [Task; 5] = [
        Task::Binary,
        Task::Multiclass,
        Task::Regression,
        Task::Sequence,
        Task::Parsing,
    ];

    /// The task's name: `binary`, `multiclass`, `regression`, `sequence`, `parsing`.
    pub fn name(self) -> &'static str {
        match self {
            Task::Binary => "binary",
            Task::Multiclass => "multiclass",
            Task::Regression => "regression",
            Task::Sequence => "sequence",
            Task::Parsing => "parsing",
        }
    }

    /// The vector task kind, `None` for sequences and parsing.
    pub fn vector_kind(self) -> Option<TaskKind> {
        match self {
            Task::Binary => Some(TaskKind::Binary),
            Task::Multiclass => Some(TaskKind::Multiclass),
            Task::Regression => Some(TaskKind::Regression),
            Task::Sequence | Task::Parsing => None,
        }
    }
}

impl From<TaskKind> for Task {
    fn from(k: TaskKind) -> Task {
        match k {
            TaskKind::Binary => Task::Binary,
            TaskKind::Multiclass => Task::Multiclass,
            TaskKind::Regression => Task::Regression,
        }
    }
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Task {
    type Err = Error;
    fn from_str(s: &str) -> Result<Task> {
        Task::ALL
            .into_iter()
            .find(|t| t.name() == s.trim())
            .ok_or_else(|| {
                Error::param(
                    "task",
                    s,
                    "one of binary, multiclass, regression, sequence, parsing",
                )
            })
    }
}

/// The learner families, by the names users type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LearnerKind {
    /// Online proximal MKL (Martins et al. 2011, Alg. 1; SPOM, Alg. 3, on sequences).
    Online,
    /// MKL-GOMP (Sindhwani & Lozano 2012).
    Gomp,
    /// lp-norm MKL for the squared loss (Kloft et al. 2011).
    LpMkl,
    /// Polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013).
    MirrorDescent,
    /// The same problem by uniform coordinate descent (the paper's UCD baseline).
    Ucd,
    /// Polynomial product-kernel MKL by the faster exact solver that fits: lp-MKL with
    /// p = 2 (mirror descent's objective) over the explicit product kernels where their
    /// list fits the memory limit, randomized mirror descent otherwise.
    Poly,
    /// Multi-template learning (Mao & Tsang, Alg. 1): a 1-slack cutting-plane structural SVM
    /// with a weight per template (sequences and parsing).
    Mtl,
    /// SimpleMKL (Rakotomamonjy et al. 2008): kernel weights on the simplex by reduced
    /// gradient around an SVM (exact SMO on tables, structured PEGASOS on sequences).
    SimpleMkl,
    /// Gauss-Seidel wrapper MKL: SVM and closed-form kernel weights in turn (Kloft et al.
    /// 2011, p = 1).
    GaussSeidel,
    /// The l2-regularized CRF (martins2011 eq. 2-3) trained in batch by L-BFGS, as CRFsuite's
    /// and sklearn-crfsuite's `lbfgs` (template taggers).
    Lbfgs,
}

impl LearnerKind {
    pub const ALL: [LearnerKind; 10] = [
        LearnerKind::Online,
        LearnerKind::Gomp,
        LearnerKind::LpMkl,
        LearnerKind::MirrorDescent,
        LearnerKind::Ucd,
        LearnerKind::Poly,
        LearnerKind::Mtl,
        LearnerKind::SimpleMkl,
        LearnerKind::GaussSeidel,
        LearnerKind::Lbfgs,
    ];

    /// `online`, `gomp`, `lp-mkl`, `mirror-descent`, `ucd`, `poly`, `mtl`, `simplemkl`,
    /// `gauss-seidel`, `lbfgs`.
    pub fn name(self) -> &'static str {
        match self {
            LearnerKind::Online => "online",
            LearnerKind::Gomp => "gomp",
            LearnerKind::LpMkl => "lp-mkl",
            LearnerKind::MirrorDescent => "mirror-descent",
            LearnerKind::Ucd => "ucd",
            LearnerKind::Poly => "poly",
            LearnerKind::Mtl => "mtl",
            LearnerKind::SimpleMkl => "simplemkl",
            LearnerKind::GaussSeidel => "gauss-seidel",
            LearnerKind::Lbfgs => "lbfgs",
        }
    }
}

impl fmt::Display for LearnerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LearnerKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<LearnerKind> {
        LearnerKind::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| {
                Error::param(
                    "learner",
                    s,
                    "one of online, gomp, lp-mkl, mirror-descent, ucd, poly, mtl, simplemkl, \
                     gauss-seidel, lbfgs",
                )
            })
    }
}
