//! Learner specs: what to learn and how, with every default and check in one place.
//!
//! A [`LearnerSpec`] is written by a user (or built from command-line flags, or from a Python
//! estimator's parameters). [`LearnerSpec::check`] validates it before any data is read and
//! resolves what does not depend on the data (default kernels, regularizer and loss) into a
//! [`CheckedSpec`], the only input [`crate::estimator::fit()`] trains from (as linfa's
//! `ParamGuard`). What depends on the data (lambda from C and the number of examples) is
//! resolved when fitting.
//!
//! # The regularization constant
//! Every learner weighs a data-fit term against a regularizer, each on its own scale (its
//! paper's). [`Strength::Lambda`] passes the learner's own constant unchanged;
//! [`Strength::C`] means the same thing for every learner: `C` weighs the sum of the
//! examples' losses against `1/2 ||f||^2`:
//! - online (Alg. 1 / SPOM): `lambda = 1 / (C N)` in `lambda Omega + (1/N) sum_i L_i`, `N`
//!   the number of training examples (rows or sequences);
//! - MKL-GOMP: `lambda = 1 / (C n)` in `(1/n) ||r - g||^2 + lambda ||g||^2`;
//! - lp-MKL, mirror descent and UCD: `lambda = 1 / C` in
//!   `1/2 ||y - f||^2 + lambda/2 sum_m ||w_m||^2 / theta_m`.
//!
//! The default is `C = 1`.

mod gomp;
mod lbfgs;
mod lp_mkl;
mod mtl;
mod online;
mod poly;
mod table_fit;
mod wrapper;

pub use super::kinds::{LearnerKind, Task};
pub use gomp::GompSpec;
pub use lbfgs::LbfgsSpec;
pub use lp_mkl::LpMklSpec;
pub use mtl::MtlSpec;
pub use online::OnlineSpec;
pub use poly::{Budget, PolySpec};
pub use wrapper::WrapperSpec;

use super::fitted::Fitted;
use super::registry::Setting;
use crate::data::{SequenceData, TableRef};
use crate::error::{Error, Result};
use crate::kernel::{KernelSpec, MemoryLimit};
use crate::pipeline::columns::tagging::TaggerLearner;
use crate::run::Observer;
use crate::solver::cutting_plane::CuttingPlaneParams;
use crate::solver::online::OnlineParams;
use crate::task::sequence::SeqLoss;
use crate::task::structured::StructLoss;
use crate::task::{Loss, TaskKind};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A loss by its family; the task decides its form (binary hinge, multiclass hinge,
/// structured hinge; logistic, softmax, CRF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    /// Hinge: `max(0, 1 - y f)`, multiclass hinge (Crammer-Singer) or the structured hinge
    /// with the Hamming cost (martins2011 eq. 4).
    Hinge,
    /// Logistic, multinomial logistic (softmax) or the CRF loss (martins2011 eq. 3).
    Logistic,
    /// Squared loss `(f - y)^2 / 2` (regression; binary on -1/+1 targets).
    Squared,
}

impl LossKind {
    /// The online learner's loss for a vector task.
    pub fn vector_loss(self, task: TaskKind) -> Result<Loss> {
        match (self, task) {
            (LossKind::Hinge, TaskKind::Binary) => Ok(Loss::Hinge),
            (LossKind::Logistic, TaskKind::Binary) => Ok(Loss::Logistic),
            (LossKind::Squared, TaskKind::Binary) => Ok(Loss::Squared),
            (LossKind::Hinge, TaskKind::Multiclass) => Ok(Loss::MulticlassHinge),
            (LossKind::Logistic, TaskKind::Multiclass) => Ok(Loss::MulticlassLogistic),
            (LossKind::Squared, TaskKind::Regression) => Ok(Loss::Squared),
            (l, t) => Err(Error::param(
                "loss",
                l,
                format!(
                    "a loss that fits the {} task: {}",
                    Task::from(t),
                    match t {
                        TaskKind::Binary => "hinge, logistic or squared",
                        TaskKind::Multiclass => "hinge or logistic",
                        TaskKind::Regression => "squared",
                    }
                ),
            )),
        }
    }

    /// The loss of a sequence task: the structured hinge or the CRF loss.
    pub(crate) fn sequence_loss(self) -> Result<SeqLoss> {
        match self {
            LossKind::Hinge => Ok(SeqLoss::Hinge),
            LossKind::Logistic => Ok(SeqLoss::Crf),
            LossKind::Squared => Err(Error::param(
                "loss",
                self,
                "hinge (structured SVM) or crf for sequences",
            )),
        }
    }
}

impl fmt::Display for LossKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LossKind::Hinge => "hinge",
            LossKind::Logistic => "logistic",
            LossKind::Squared => "squared",
        })
    }
}

impl FromStr for LossKind {
    type Err = Error;
    /// `hinge` (also `multiclass-hinge`, `structured-hinge`, `svm`), `logistic` (also
    /// `multiclass-logistic`, `softmax`, `crf`) or `squared`.
    fn from_str(s: &str) -> Result<LossKind> {
        match s.trim() {
            "hinge" | "multiclass-hinge" | "mhinge" | "structured-hinge" | "svm" => {
                Ok(LossKind::Hinge)
            }
            "logistic" | "multiclass-logistic" | "softmax" | "crf" => Ok(LossKind::Logistic),
            "squared" => Ok(LossKind::Squared),
            _ => Err(Error::param(
                "loss",
                s,
                "hinge, logistic (crf for sequences) or squared",
            )),
        }
    }
}

/// The regularization constant, as `C` (the same meaning for every learner) or as the
/// learner's own `lambda` (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strength {
    C(f64),
    Lambda(f64),
}

impl Default for Strength {
    fn default() -> Self {
        Strength::C(1.0)
    }
}

impl Strength {
    fn check(self) -> Result<()> {
        let (name, v) = match self {
            Strength::C(c) => ("C", c),
            Strength::Lambda(l) => ("lambda", l),
        };
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(Error::param(name, v, "a positive number"))
        }
    }

    /// The online learner's lambda for `n` training examples: `1 / (C n)`.
    pub(crate) fn online_lambda(self, n: usize) -> f64 {
        match self {
            Strength::Lambda(l) => l,
            Strength::C(c) => 1.0 / (c * n.max(1) as f64),
        }
    }

    /// MKL-GOMP's lambda for `n` training points: `1 / (C n)`.
    pub(crate) fn gomp_lambda(self, n: usize) -> f64 {
        self.online_lambda(n)
    }

    /// The SVM's C of the wrapper learners for `n` training points: `C` itself, or
    /// `1 / (lambda n)` (the online learner's scale).
    pub(crate) fn svm_c(self, n: usize) -> f64 {
        match self {
            Strength::C(c) => c,
            Strength::Lambda(l) => 1.0 / (l * n.max(1) as f64),
        }
    }

    /// lp-MKL's, mirror descent's and UCD's lambda: `1 / C`.
    pub(crate) fn ridge_lambda(self) -> f64 {
        match self {
            Strength::Lambda(l) => l,
            Strength::C(c) => 1.0 / c,
        }
    }
}

/// One learner family's side of the estimator, implemented by the family's settings type in
/// its own file of this folder: its settings given by name ([`LearnerSpec::set`]), its checks
/// ([`LearnerSpec::check`]) and its fits on what it trains on (the in-memory door,
/// `estimator/fit.rs`). [`Learner::family`] is the one dispatch from a variant to it; a
/// family whose settings type serves several learners (the polynomial and the wrapper
/// learners) is told which by `kind`. The fits read the checked spec (no second check).
pub(crate) trait Family {
    /// Stores the registry setting `s` (one the family takes) from its text.
    fn set(&mut self, s: &Setting, text: &str) -> Result<()>;

    /// Checks the settings for `task` and resolves their defaults; `several`: more than one
    /// kernel (or per-feature kernels). Refuses a task the family does not learn.
    fn check(&mut self, kind: LearnerKind, task: Task, several: bool) -> Result<()>;

    /// Whether validation rows choose something (MKL-GOMP's path length).
    fn takes_validation(&self) -> bool {
        false
    }

    /// Whether its fit on a table honours row weights ([`TableRef::with_weights`]).
    fn takes_weights(&self) -> bool {
        false
    }

    /// Trains on the rows of a table (`task`: binary, multiclass or regression).
    fn fit_table(
        &self,
        kind: LearnerKind,
        table: TableRef<'_>,
        task: TaskKind,
        validation: Option<TableRef<'_>>,
        spec: &CheckedSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted>;

    /// Trains on labeled sequences (OCR-style).
    fn fit_sequences(
        &self,
        _kind: LearnerKind,
        _data: &SequenceData,
        _spec: &CheckedSpec,
        _observer: &dyn Observer,
    ) -> Result<Fitted> {
        Err(Error::unsupported(
            "sequences are learned by the online learner (SPOM) or the wrappers \
             (simplemkl, gauss-seidel)",
        ))
    }

    /// The template tagger's learner for `n` training sentences, and its lambda.
    fn tagger(
        &self,
        kind: LearnerKind,
        _spec: &CheckedSpec,
        _n: usize,
    ) -> Result<(TaggerLearner, f64)> {
        Err(Error::unsupported(format!(
            "the {kind} learner does not train a template tagger; use online or mtl"
        )))
    }

    /// The parser's settings for `n` training sentences.
    fn parser(&self, kind: LearnerKind, _spec: &CheckedSpec, _n: usize) -> Result<ParserSettings> {
        Err(Error::unsupported(format!(
            "the {kind} learner does not parse; use the online learner or mtl"
        )))
    }
}

/// What a family gives the parser: the online learner's parameters, the cutting plane and
/// its block norm q when it trains instead, the loss, and the lambda reported.
pub(crate) struct ParserSettings {
    pub(crate) params: OnlineParams,
    pub(crate) cutting_plane: Option<(CuttingPlaneParams, f64)>,
    pub(crate) loss: StructLoss,
    pub(crate) lambda: f64,
}

/// The error for a name the family's settings type does not hold (`validation`, which is
/// given with the data).
fn not_in_spec(name: &str) -> Error {
    Error::unsupported(format!(
        "{name} is not a setting of the learner spec: give it with the data (TrainSource)"
    ))
}

/// The notes of a fit on sequences: `standardize = false` has no effect on them.
fn sequence_notes(spec: &CheckedSpec) -> Vec<String> {
    if spec.standardize {
        Vec::new()
    } else {
        vec!["sequence inputs are used as they are; standardize = false has no effect".into()]
    }
}

/// Refuses the structured tasks for a learner of tables.
fn refuse_structured(kind: LearnerKind, task: Task) -> Result<()> {
    match task {
        Task::Sequence => Err(Error::unsupported(format!(
            "the {kind} learner does not label sequences; use the online learner, \
             simplemkl or gauss-seidel (or mtl for a tagger with templates)"
        ))),
        Task::Parsing => Err(Error::unsupported(format!(
            "the {kind} learner does not parse; use the online learner or mtl"
        ))),
        _ => Ok(()),
    }
}

/// A learner with its own settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Learner {
    Online(OnlineSpec),
    Gomp(GompSpec),
    LpMkl(LpMklSpec),
    /// Mirror descent (importance sampling by the gradient, Alg. 2-3).
    MirrorDescent(PolySpec),
    /// Uniform coordinate descent on the same problem.
    Ucd(PolySpec),
    /// The same problem by lp-MKL over the explicit product kernels, or mirror descent
    /// where they do not fit ([`LearnerKind::Poly`]).
    Poly(PolySpec),
    Mtl(MtlSpec),
    SimpleMkl(WrapperSpec),
    GaussSeidel(WrapperSpec),
    /// The batch CRF by L-BFGS ([`LearnerKind::Lbfgs`]).
    Lbfgs(LbfgsSpec),
}

impl Learner {
    /// The family's side of the estimator ([`Family`]).
    pub(crate) fn family(&self) -> &dyn Family {
        match self {
            Learner::Online(o) => o,
            Learner::Gomp(g) => g,
            Learner::LpMkl(l) => l,
            Learner::MirrorDescent(p) | Learner::Ucd(p) | Learner::Poly(p) => p,
            Learner::Mtl(m) => m,
            Learner::SimpleMkl(w) | Learner::GaussSeidel(w) => w,
            Learner::Lbfgs(b) => b,
        }
    }

    /// [`Learner::family`], to set or check.
    pub(crate) fn family_mut(&mut self) -> &mut dyn Family {
        match self {
            Learner::Online(o) => o,
            Learner::Gomp(g) => g,
            Learner::LpMkl(l) => l,
            Learner::MirrorDescent(p) | Learner::Ucd(p) | Learner::Poly(p) => p,
            Learner::Mtl(m) => m,
            Learner::SimpleMkl(w) | Learner::GaussSeidel(w) => w,
            Learner::Lbfgs(b) => b,
        }
    }

    pub fn kind(&self) -> LearnerKind {
        match self {
            Learner::Online(_) => LearnerKind::Online,
            Learner::Gomp(_) => LearnerKind::Gomp,
            Learner::LpMkl(_) => LearnerKind::LpMkl,
            Learner::MirrorDescent(_) => LearnerKind::MirrorDescent,
            Learner::Ucd(_) => LearnerKind::Ucd,
            Learner::Poly(_) => LearnerKind::Poly,
            Learner::Mtl(_) => LearnerKind::Mtl,
            Learner::SimpleMkl(_) => LearnerKind::SimpleMkl,
            Learner::GaussSeidel(_) => LearnerKind::GaussSeidel,
            Learner::Lbfgs(_) => LearnerKind::Lbfgs,
        }
    }

    /// The learner of `kind` with its default settings (lp-MKL: `p = 2`).
    pub fn default_for(kind: LearnerKind) -> Learner {
        match kind {
            LearnerKind::Online => Learner::Online(OnlineSpec::default()),
            LearnerKind::Gomp => Learner::Gomp(GompSpec::default()),
            LearnerKind::LpMkl => Learner::LpMkl(LpMklSpec { p: 2.0 }),
            LearnerKind::MirrorDescent => Learner::MirrorDescent(PolySpec::default()),
            LearnerKind::Ucd => Learner::Ucd(PolySpec::default()),
            LearnerKind::Poly => Learner::Poly(PolySpec::default()),
            LearnerKind::Mtl => Learner::Mtl(MtlSpec::default()),
            LearnerKind::SimpleMkl => Learner::SimpleMkl(WrapperSpec::default()),
            LearnerKind::GaussSeidel => Learner::GaussSeidel(WrapperSpec::default()),
            LearnerKind::Lbfgs => Learner::Lbfgs(LbfgsSpec::default()),
        }
    }
}

/// What to learn and how: the task, the learner with its settings, the kernels and the
/// settings every learner shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearnerSpec {
    pub task: Task,
    pub learner: Learner,
    /// The kernels (empty: the learner's default, see `LearnerSpec::default_kernels`).
    pub kernels: Vec<KernelSpec>,
    /// The regularization constant (default `C = 1`).
    pub strength: Strength,
    /// An unregularized bias (intercept) per output.
    pub bias: bool,
    /// Standardize the features on the training data.
    pub standardize: bool,
    /// Seed of every random choice (shuffles, subsamples, heuristics, samplers).
    pub seed: u64,
    /// Refuse allocations above this many bytes (Gram matrices, kernel caches).
    #[serde(skip)]
    pub memory: MemoryLimit,
}

impl LearnerSpec {
    /// A spec with every shared setting at its default: the learner's default kernels,
    /// `C = 1`, bias on, standardized features, seed 0, an 8 GiB memory limit.
    pub fn new(task: Task, learner: Learner) -> LearnerSpec {
        LearnerSpec {
            task,
            learner,
            kernels: Vec::new(),
            strength: Strength::default(),
            bias: true,
            standardize: true,
            seed: 0,
            memory: MemoryLimit::default(),
        }
    }

    /// The same spec with these kernels.
    pub fn with_kernels(mut self, kernels: Vec<KernelSpec>) -> LearnerSpec {
        self.kernels = kernels;
        self
    }

    /// The same spec with `C`.
    pub fn with_c(mut self, c: f64) -> LearnerSpec {
        self.strength = Strength::C(c);
        self
    }

    /// The same spec with the learner's own `lambda`.
    #[cfg(test)]
    pub(crate) fn with_lambda(mut self, lambda: f64) -> LearnerSpec {
        self.strength = Strength::Lambda(lambda);
        self
    }

    /// The same spec with this seed.
    pub fn with_seed(mut self, seed: u64) -> LearnerSpec {
        self.seed = seed;
        self
    }

    /// The kernels a learner uses when none are given: on a table, the default dictionary
    /// of [`crate::kernel::dictionary`] for the online, lp-MKL and MKL-GOMP learners (it
    /// depends on the table's width: this returns no spec, and
    /// [`CheckedSpec::kernels_for`] builds it at fit); a unit-diagonal linear kernel on
    /// sequences; one linear kernel per feature as the base kernels of mirror descent and
    /// UCD (whose products are weighted).
    pub(crate) fn default_kernels(task: Task, learner: LearnerKind) -> Vec<KernelSpec> {
        let text = match (learner, task) {
            (LearnerKind::Online, Task::Sequence) => "linear:norm=diag",
            (LearnerKind::SimpleMkl | LearnerKind::GaussSeidel, Task::Sequence) => {
                "linear:norm=diag"
            }
            (
                LearnerKind::Online
                | LearnerKind::LpMkl
                | LearnerKind::Gomp
                | LearnerKind::SimpleMkl
                | LearnerKind::GaussSeidel,
                _,
            ) => return Vec::new(),
            _ => "perfeature:linear",
        };
        vec![text.parse().expect("the default kernels parse")]
    }

    /// Validates the spec and resolves its data-independent defaults.
    pub fn check(&self) -> Result<CheckedSpec> {
        let mut spec = self.clone();
        spec.strength.check()?;
        for k in &spec.kernels {
            k.validate()?;
        }
        if spec.task == Task::Parsing
            || matches!(spec.learner.kind(), LearnerKind::Mtl | LearnerKind::Lbfgs)
        {
            if !spec.kernels.is_empty() {
                return Err(Error::unsupported(
                    "the groups of a parser, of multi-template learning or of the batch CRF \
                     are its feature templates, not kernels: give a template file instead",
                ));
            }
        } else if spec.kernels.is_empty() {
            spec.kernels = LearnerSpec::default_kernels(spec.task, spec.learner.kind());
        }
        let kind = spec.learner.kind();
        // No kernels left after the defaults: the default dictionary, several kernels.
        let several = spec.kernels.len() != 1 || spec.kernels.iter().any(|k| k.perfeature);
        let task = spec.task;
        spec.learner.family_mut().check(kind, task, several)?;
        Ok(CheckedSpec(spec))
    }
}

/// A [`LearnerSpec`] that passed [`LearnerSpec::check`], its defaults resolved: the kernels
/// are never empty except for parsing and multi-template learning (whose groups are
/// templates) and for the default dictionary on a table ([`CheckedSpec::kernels_for`]); an
/// online spec has its regularizer and loss set.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedSpec(LearnerSpec);

impl CheckedSpec {
    pub(crate) fn spec(&self) -> &LearnerSpec {
        &self.0
    }

    /// The kernels on a table of `n_features` columns: the spec's, or (none given) the
    /// default dictionary ([`crate::kernel::dictionary`]).
    pub fn kernels_for(&self, n_features: usize) -> Vec<KernelSpec> {
        if self.0.kernels.is_empty() {
            crate::kernel::default_dictionary(n_features)
        } else {
            self.0.kernels.clone()
        }
    }

    /// The online learner's parameters (Alg. 1) for `n` training examples: the one
    /// translation of an [`OnlineSpec`] (with the spec's strength and seed) into the
    /// engine's [`OnlineParams`]; rounds are shuffled. An error for another learner.
    pub fn online_params(&self, n: usize) -> Result<OnlineParams> {
        let Learner::Online(o) = &self.0.learner else {
            return Err(Error::Unsupported(format!(
                "the online learner's parameters of the {} learner",
                self.0.learner.kind()
            )));
        };
        Ok(OnlineParams {
            lambda: self.0.strength.online_lambda(n),
            reg: o.reg.clone().expect("check() sets the regularizer"),
            steps: o.steps,
            seed: self.0.seed,
            shuffle: true,
        })
    }

    /// The kernels when training from a stream: the spec's, or (none given) the streaming
    /// dictionary of explicit maps ([`crate::kernel::streaming_dictionary`]).
    pub(crate) fn stream_kernels(&self) -> Vec<KernelSpec> {
        if self.0.kernels.is_empty() {
            crate::kernel::streaming_dictionary()
        } else {
            self.0.kernels.clone()
        }
    }
}

impl std::ops::Deref for CheckedSpec {
    type Target = LearnerSpec;
    fn deref(&self) -> &LearnerSpec {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prox::RegSpec;
    use crate::solver::online::{OnlineSteps, StepSchedule};

    fn online(task: Task) -> LearnerSpec {
        LearnerSpec::new(task, Learner::Online(OnlineSpec::default()))
    }

    #[test]
    fn defaults_resolve_by_kernel_count_and_task() {
        // No kernels: the default dictionary, several kernels, sparse MKL.
        let c = online(Task::Binary).check().unwrap();
        let Learner::Online(o) = &c.learner else {
            unreachable!()
        };
        assert_eq!(o.reg, Some(RegSpec::L21Sq));
        assert_eq!(o.loss, Some(LossKind::Hinge));
        assert!(c.kernels.is_empty());
        assert_eq!(c.kernels_for(8), crate::kernel::default_dictionary(8));
        let one = online(Task::Binary).with_kernels(vec!["rbf".parse().unwrap()]);
        let c = one.check().unwrap();
        let Learner::Online(o) = &c.learner else {
            unreachable!()
        };
        assert_eq!(o.reg, Some(RegSpec::L2));
        assert_eq!(c.kernels_for(8).len(), 1);
        let two = online(Task::Regression)
            .with_kernels(vec!["rbf".parse().unwrap(), "linear".parse().unwrap()]);
        let c = two.check().unwrap();
        let Learner::Online(o) = &c.learner else {
            unreachable!()
        };
        assert_eq!(o.reg, Some(RegSpec::L21Sq));
        assert_eq!(o.loss, Some(LossKind::Squared));
        let g = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::Gomp));
        assert!(g.check().unwrap().kernels.is_empty());
        let md = LearnerSpec::new(
            Task::Binary,
            Learner::default_for(LearnerKind::MirrorDescent),
        );
        assert!(md.check().unwrap().kernels[0].perfeature);
        let seq = online(Task::Sequence).check().unwrap();
        assert_eq!(seq.kernels[0].to_string(), "linear:norm=diag");
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let name = |s: LearnerSpec| match s.check().unwrap_err() {
            Error::InvalidParameter { name, .. } => name,
            e => panic!("{e}"),
        };
        assert_eq!(name(online(Task::Binary).with_c(-1.0)), "C");
        assert_eq!(name(online(Task::Binary).with_lambda(f64::NAN)), "lambda");
        let mut s = online(Task::Binary);
        s.learner = Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                eta0: 0.0,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        });
        assert_eq!(name(s), "eta0");
        let mut s = online(Task::Regression);
        s.learner = Learner::Online(OnlineSpec {
            loss: Some(LossKind::Hinge),
            ..OnlineSpec::default()
        });
        assert_eq!(name(s), "loss");
        let mut s = online(Task::Binary);
        s.learner = Learner::Online(OnlineSpec {
            reg: Some(RegSpec::L1),
            ..OnlineSpec::default()
        });
        assert_eq!(name(s), "reg");
        let s = LearnerSpec::new(
            Task::Binary,
            Learner::Gomp(GompSpec {
                max_kernels: 0,
                ..GompSpec::default()
            }),
        );
        assert_eq!(name(s), "max_kernels");
        let s = LearnerSpec::new(Task::Binary, Learner::LpMkl(LpMklSpec { p: 0.5 }));
        assert_eq!(name(s), "p");
        let s = LearnerSpec::new(
            Task::Binary,
            Learner::Ucd(PolySpec {
                rho2: vec![1.0, 2.0],
                ..PolySpec::default()
            }),
        );
        assert_eq!(name(s), "rho2");
    }

    #[test]
    fn unsupported_combinations_are_refused() {
        let s = LearnerSpec::new(Task::Multiclass, Learner::default_for(LearnerKind::Ucd));
        assert!(matches!(s.check(), Err(Error::Unsupported(_))));
        let s = LearnerSpec::new(Task::Sequence, Learner::default_for(LearnerKind::Gomp));
        assert!(matches!(s.check(), Err(Error::Unsupported(_))));
    }

    #[test]
    fn conventions_of_c() {
        let c = Strength::C(10.0);
        assert!((c.online_lambda(50) - 1.0 / 500.0).abs() < 1e-15);
        assert!((c.ridge_lambda() - 0.1).abs() < 1e-15);
        assert_eq!(Strength::Lambda(0.3).online_lambda(7), 0.3);
        assert_eq!("lp-mkl".parse::<LearnerKind>().unwrap(), LearnerKind::LpMkl);
        assert_eq!("crf".parse::<LossKind>().unwrap(), LossKind::Logistic);
        assert_eq!(
            LossKind::Hinge.vector_loss(TaskKind::Multiclass).unwrap(),
            Loss::MulticlassHinge
        );
        assert!("sequence".parse::<Task>().is_ok());
        assert!("sequences".parse::<Task>().is_err());
    }

    /// The online spec's JSON (hashed by the checkpoints, embedded in model files) lists the
    /// steps' keys among its own, in the order `reg`, `loss`, `eta0`, `schedule`, `epochs`,
    /// `averaging`, `projection`, `learn_beta0`, `shards`, `batch` (the last two only when
    /// not 1), and reads back to the same spec.
    #[test]
    fn the_online_spec_writes_the_same_json() {
        let default = OnlineSpec::default();
        let sharded = OnlineSpec {
            reg: Some(RegSpec::L2),
            loss: Some(LossKind::Hinge),
            steps: OnlineSteps {
                eta0: 0.25,
                schedule: StepSchedule::Inv { sigma: Some(0.5) },
                epochs: 3,
                averaging: true,
                projection: false,
                learn_beta0: true,
                shards: 4,
                batch: 1,
            },
        };
        let batched = OnlineSpec {
            steps: OnlineSteps {
                schedule: StepSchedule::Bottou,
                shards: 1,
                batch: 2,
                ..sharded.steps
            },
            ..sharded.clone()
        };
        let json = |o: &OnlineSpec| serde_json::to_string(o).unwrap();
        assert_eq!(
            json(&default),
            r#"{"reg":null,"loss":null,"eta0":1.0,"schedule":"InvSqrt","epochs":20,"averaging":false,"projection":true,"learn_beta0":false}"#
        );
        assert_eq!(
            json(&sharded),
            r#"{"reg":"L2","loss":"hinge","eta0":0.25,"schedule":{"Inv":{"sigma":0.5}},"epochs":3,"averaging":true,"projection":false,"learn_beta0":true,"shards":4}"#
        );
        assert_eq!(
            json(&batched),
            r#"{"reg":"L2","loss":"hinge","eta0":0.25,"schedule":"Bottou","epochs":3,"averaging":true,"projection":false,"learn_beta0":true,"batch":2}"#
        );
        let spec = LearnerSpec::new(Task::Sequence, Learner::Online(sharded.clone()));
        assert_eq!(
            serde_json::to_string(&spec).unwrap(),
            r#"{"task":"sequence","learner":{"kind":"online","reg":"L2","loss":"hinge","eta0":0.25,"schedule":{"Inv":{"sigma":0.5}},"epochs":3,"averaging":true,"projection":false,"learn_beta0":true,"shards":4},"kernels":[],"strength":{"c":1.0},"bias":true,"standardize":true,"seed":0}"#
        );
        assert_eq!(
            serde_json::to_string_pretty(&Learner::Online(default.clone())).unwrap(),
            "{\n  \"kind\": \"online\",\n  \"reg\": null,\n  \"loss\": null,\n  \"eta0\": 1.0,\n  \
             \"schedule\": \"InvSqrt\",\n  \"epochs\": 20,\n  \"averaging\": false,\n  \
             \"projection\": true,\n  \"learn_beta0\": false\n}"
        );
        for o in [&default, &sharded, &batched] {
            assert_eq!(&serde_json::from_str::<OnlineSpec>(&json(o)).unwrap(), o);
        }
        let back: LearnerSpec =
            serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
        // Keys left out take their defaults.
        let short: OnlineSpec = serde_json::from_str(r#"{"epochs":3}"#).unwrap();
        let mut want = OnlineSpec::default();
        want.steps.epochs = 3;
        assert_eq!(short, want);
    }
}
