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

use crate::error::{Error, Result};
use crate::kernel::{KernelSpec, MemoryLimit};
use crate::prox::RegSpec;
use crate::solver::online::{OnlineParams, OnlineSteps};
use crate::solver::smo::SmoParams;
use crate::solver::wrapper::{WrapperMethod, WrapperModelParams, WrapperParams};
use crate::task::sequence::SeqLoss;
use crate::task::{Loss, TaskKind};
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
}

impl LearnerKind {
    pub const ALL: [LearnerKind; 9] = [
        LearnerKind::Online,
        LearnerKind::Gomp,
        LearnerKind::LpMkl,
        LearnerKind::MirrorDescent,
        LearnerKind::Ucd,
        LearnerKind::Poly,
        LearnerKind::Mtl,
        LearnerKind::SimpleMkl,
        LearnerKind::GaussSeidel,
    ];

    /// `online`, `gomp`, `lp-mkl`, `mirror-descent`, `ucd`, `poly`, `mtl`, `simplemkl`,
    /// `gauss-seidel`.
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
                     gauss-seidel",
                )
            })
    }
}

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

/// Settings of lp-norm MKL.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LpMklSpec {
    /// The kernel-weight norm p >= 1 (`f64::INFINITY`: the plain sum of kernels). Written
    /// as a number or `"inf"`; read by [`crate::solver::lp_mkl::parse_p`] (a number, a
    /// fraction such as `"4/3"`, or `"inf"`), the one grammar of p.
    #[serde(with = "crate::solver::lp_mkl::p_serde")]
    pub p: f64,
}

/// How long mirror descent and UCD run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Budget {
    /// Seconds of training (the eta0 pilots included); not reproducible across machines.
    Seconds(f64),
    /// A number of iterations (pilots not included): the same seed gives the same model.
    Iterations(u64),
}

/// Settings of polynomial product-kernel MKL (mirror descent or UCD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PolySpec {
    /// Degree D of the learned polynomial kernel.
    pub degree: usize,
    pub budget: Budget,
    /// rho_d^2 for d = 0..=D (empty: all 1): a product kernel of degree d enters as
    /// theta / rho_d^2.
    pub rho2: Vec<f64>,
}

impl Default for PolySpec {
    fn default() -> Self {
        PolySpec {
            degree: 3,
            budget: Budget::Seconds(10.0),
            rho2: Vec::new(),
        }
    }
}

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
        }
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
}

impl Learner {
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
        if spec.task == Task::Parsing || spec.learner.kind() == LearnerKind::Mtl {
            if !spec.kernels.is_empty() {
                return Err(Error::unsupported(
                    "the groups of a parser or of multi-template learning are its feature \
                     templates, not kernels: give a template file instead",
                ));
            }
        } else if spec.kernels.is_empty() {
            spec.kernels = LearnerSpec::default_kernels(spec.task, spec.learner.kind());
        }
        let kind = spec.learner.kind();
        // No kernels left after the defaults: the default dictionary, several kernels.
        let several = spec.kernels.len() != 1 || spec.kernels.iter().any(|k| k.perfeature);
        match &mut spec.learner {
            Learner::Online(o) => {
                o.steps.validate()?;
                let reg =
                    o.reg
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
                o.reg = Some(reg);
                let loss = o.loss.unwrap_or(match spec.task {
                    Task::Regression => LossKind::Squared,
                    _ => LossKind::Hinge,
                });
                match spec.task.vector_kind() {
                    Some(t) => {
                        loss.vector_loss(t)?;
                    }
                    None => {
                        loss.sequence_loss()?;
                    }
                }
                o.loss = Some(loss);
                let t = &o.steps;
                if t.shards > 1 && !matches!(spec.task, Task::Sequence | Task::Parsing) {
                    return Err(Error::param(
                        "shards",
                        t.shards,
                        "1: parallel shards train sequences and parsers only (--task sequence \
                         or parsing)",
                    ));
                }
                if t.batch > 1 && !matches!(spec.task, Task::Sequence | Task::Parsing) {
                    return Err(Error::param(
                        "batch",
                        t.batch,
                        "1: parallel mini-batches train sequences and parsers only (--task \
                         sequence or parsing)",
                    ));
                }
                if t.learn_beta0 && spec.task != Task::Sequence {
                    return Err(Error::param(
                        "learn_beta0",
                        true,
                        "false: only sequence tasks have a label-pair group",
                    ));
                }
            }
            Learner::Gomp(g) => {
                if g.max_kernels == 0 {
                    return Err(Error::param("max_kernels", 0, "at least 1"));
                }
                if !(g.eps.is_finite() && g.eps >= 0.0) {
                    return Err(Error::param("eps", g.eps, "a finite number >= 0"));
                }
                if g.subsample == Some(0) {
                    return Err(Error::param("subsample", 0, "at least 1"));
                }
            }
            Learner::Mtl(m) => {
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
            }
            Learner::LpMkl(l) => {
                if l.p.is_nan() || l.p < 1.0 {
                    return Err(Error::param("p", l.p, "a number >= 1 or inf"));
                }
            }
            Learner::SimpleMkl(w) | Learner::GaussSeidel(w) => w.check()?,
            Learner::MirrorDescent(p) | Learner::Ucd(p) | Learner::Poly(p) => {
                if p.degree == 0 {
                    return Err(Error::param("degree", 0, "at least 1"));
                }
                match p.budget {
                    Budget::Seconds(s) if !(s.is_finite() && s > 0.0) => {
                        return Err(Error::param("seconds", s, "a positive number"))
                    }
                    Budget::Iterations(0) => {
                        return Err(Error::param("iterations", 0, "at least 1"))
                    }
                    _ => {}
                }
                if !p.rho2.is_empty() {
                    if p.rho2.len() != p.degree + 1 {
                        return Err(Error::param(
                            "rho2",
                            format!("{:?}", p.rho2),
                            format!("{} values, one per degree 0..={}", p.degree + 1, p.degree),
                        ));
                    }
                    if let Some(r) = p.rho2.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
                        return Err(Error::param("rho2", r, "positive numbers"));
                    }
                }
            }
        }
        match (kind, spec.task) {
            (LearnerKind::Online, _) => {}
            (LearnerKind::Mtl, Task::Sequence | Task::Parsing) => {}
            (LearnerKind::SimpleMkl | LearnerKind::GaussSeidel, Task::Sequence) => {}
            (LearnerKind::Mtl, _) => {
                return Err(Error::unsupported(
                    "multi-template learning learns structured outputs over feature templates: \
                     use it for sequence (columns and templates) or parsing tasks",
                ))
            }
            (_, Task::Sequence) => {
                return Err(Error::unsupported(format!(
                    "the {kind} learner does not label sequences; use the online learner, \
                     simplemkl or gauss-seidel (or mtl for a tagger with templates)"
                )))
            }
            (_, Task::Parsing) => {
                return Err(Error::unsupported(format!(
                    "the {kind} learner does not parse; use the online learner or mtl"
                )))
            }
            (
                LearnerKind::MirrorDescent | LearnerKind::Ucd | LearnerKind::Poly,
                Task::Multiclass,
            ) => {
                return Err(Error::unsupported(format!(
                    "the {kind} learner learns one real output (squared loss): use it for \
                     binary or regression tasks (for multiclass use gomp or lp-mkl)"
                )))
            }
            _ => {}
        }
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
    use crate::solver::online::StepSchedule;

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
