//! Polynomial product-kernel MKL's settings (Afkanpour et al. 2013) and its fits on a table:
//! randomized mirror descent (importance sampling), uniform coordinate descent, and `poly`
//! (lp-MKL over the explicit product kernels where they fit the memory limit, mirror descent
//! otherwise). The three learners share [`PolySpec`].

use super::table_fit::batch;
use super::{not_in_spec, refuse_structured, CheckedSpec, Family};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::kinds::{LearnerKind, Task};
use crate::estimator::registry::{count, real, reals, Setting};
use crate::model::Model;
use crate::run::Observer;
use crate::solver::mirror_descent::{MirrorDescentParams, PolyMklModel, Sampling, SolverOptions};
use crate::task::targets::encode_targets;
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};

/// Iteration cap of mirror descent and UCD under a time budget: a safety net that only
/// binds on tiny problems whose iterations take microseconds (the objective keeps
/// decreasing with time on real tables, BENCHMARKS.md).
pub(crate) const POLY_MAX_ITER: u64 = 100_000;

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

impl Family for PolySpec {
    fn set(&mut self, s: &Setting, t: &str) -> Result<()> {
        match s.name {
            "degree" => self.degree = count(s, t)?,
            "rho2" => self.rho2 = reals(s, t)?,
            "seconds" => self.budget = Budget::Seconds(real(s, t)?),
            "max_iter" => self.budget = Budget::Iterations(count(s, t)? as u64),
            name => return Err(not_in_spec(name)),
        }
        Ok(())
    }

    fn check(&mut self, kind: LearnerKind, task: Task, _several: bool) -> Result<()> {
        let p = self;
        if p.degree == 0 {
            return Err(Error::param("degree", 0, "at least 1"));
        }
        match p.budget {
            Budget::Seconds(s) if !(s.is_finite() && s > 0.0) => {
                return Err(Error::param("seconds", s, "a positive number"))
            }
            Budget::Iterations(0) => return Err(Error::param("iterations", 0, "at least 1")),
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
        refuse_structured(kind, task)?;
        if task == Task::Multiclass {
            return Err(Error::unsupported(format!(
                "the {kind} learner learns one real output (squared loss): use it for \
                 binary or regression tasks (for multiclass use gomp or lp-mkl)"
            )));
        }
        Ok(())
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
        match kind {
            LearnerKind::Poly => fit_poly_auto(table, task, self, spec, observer),
            LearnerKind::Ucd => fit_poly(table, task, self, Sampling::Uniform, spec, observer),
            _ => fit_poly(table, task, self, Sampling::Importance, spec, observer),
        }
    }
}

/// `--algo poly`: the polynomial product-kernel problem by lp-MKL with p = 2 over the
/// explicit product kernels where their list fits the memory limit (Kloft's closed form, 12-25
/// times faster than mirror descent where both run, `reproduce mirror-descent`), by mirror
/// descent (importance sampling) otherwise; a note says which and why.
fn fit_poly_auto(
    table: TableRef<'_>,
    task: TaskKind,
    p: &PolySpec,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let (classes, y) = encode_targets(task, table.targets())?;
    let lambda = spec.strength.ridge_lambda();
    let params = MirrorDescentParams {
        degree: p.degree,
        rho2: p.rho2.clone(),
        base: spec.kernels.clone(),
        memory: spec.memory,
        solver: SolverOptions {
            sampling: Sampling::Importance,
            lambda,
            seed: spec.seed,
            ..SolverOptions::default()
        },
    };
    let problem = crate::solver::mirror_descent::PolyProblem::new(table.x(), &y.data, &params)?;
    let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
    let choice = match (problem.product_kernel_count(), problem.lp_bytes()) {
        (Some(count), Some(bytes)) => match spec.memory.check(bytes, "lp-MKL's product kernels") {
            Ok(()) => Ok(format!(
                "poly: lp-MKL (p = 2) over all {count} product kernels ({:.2} GiB within the \
                 memory limit)",
                gib(bytes)
            )),
            Err(_) => Err(format!(
                "poly: mirror descent: the {count} product kernels need {:.2} GiB, above the \
                 memory limit",
                gib(bytes)
            )),
        },
        _ => Err(
            "poly: mirror descent: the base kernels are not rank one (per-feature linear), \
                  so the product kernels have no explicit list"
                .to_string(),
        ),
    };
    match choice {
        Ok(note) => {
            let (m, run) = problem.fit_lp(lambda, &spec.memory, observer)?;
            Ok(Fitted {
                notes: vec![note],
                ..Fitted::new(Model::PolyMkl(batch(table, task, classes, m)), run, lambda)
            })
        }
        Err(note) => {
            drop(problem);
            let mut fitted = fit_poly(table, task, p, Sampling::Importance, spec, observer)?;
            fitted.notes.insert(0, note);
            Ok(fitted)
        }
    }
}

fn fit_poly(
    table: TableRef<'_>,
    task: TaskKind,
    p: &PolySpec,
    sampling: Sampling,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let kind = spec.learner.kind();
    let mut notes = Vec::new();
    if !spec.standardize {
        notes.push(format!(
            "the {kind} learner always standardizes its inputs; standardize = false ignored"
        ));
    }
    if !spec.bias {
        notes.push(format!(
            "the {kind} learner has the constant product kernel (degree 0) as its bias; \
             bias = false ignored"
        ));
    }
    let (classes, y) = encode_targets(task, table.targets())?;
    let lambda = spec.strength.ridge_lambda();
    let (max_iter, max_seconds) = match p.budget {
        Budget::Iterations(n) => (n, None),
        Budget::Seconds(s) => (POLY_MAX_ITER, Some(s)),
    };
    let params = MirrorDescentParams {
        degree: p.degree,
        rho2: p.rho2.clone(),
        base: spec.kernels.clone(),
        memory: spec.memory,
        solver: SolverOptions {
            sampling,
            lambda,
            max_iter,
            max_seconds,
            seed: spec.seed,
            ..SolverOptions::default()
        },
    };
    let (m, run) = PolyMklModel::fit(table.x(), &y.data, &params, observer)?;
    Ok(Fitted {
        notes,
        ..Fitted::new(Model::PolyMkl(batch(table, task, classes, m)), run, lambda)
    })
}
