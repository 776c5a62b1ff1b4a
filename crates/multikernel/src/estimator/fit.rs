//! What a learner trains on ([`TrainingData`]) and the arm of each learner and task that
//! turns a checked spec into its engine's parameters and runs it.

use super::fitted::{Fitted, PathChoice};
use super::spec::{Budget, CheckedSpec, Learner, PolySpec, Task, WrapperSpec};
use crate::data::{Dataset, Matrix, MatrixRef, SequenceData, TableRef, Targets};
use crate::error::{Error, Result};
use crate::model::{BatchModel, Model};
use crate::pipeline::sequence::spom::{fit_sequence, SequenceFitConfig};
use crate::pipeline::sequence::wrapper::{fit_sequence_wrapper, SequenceWrapperConfig};
use crate::pipeline::table::vector::{fit_vector, VectorFitConfig};
use crate::pipeline::treebank::parser::{fit_parser, ParserSpec};
use crate::run::Observer;
use crate::solver::gomp::{GompModel, GompModelParams, GompParams, ValidationMetric};
use crate::solver::lp_mkl::{LpMklModel, LpMklModelParams, LpMklParams};
use crate::solver::mirror_descent::{MirrorDescentParams, PolyMklModel, Sampling, SolverOptions};
use crate::solver::online::OnlineParams;
use crate::solver::wrapper::{WrapperMethod, WrapperModel, WrapperParams};
use crate::task::parse::ParseData;
use crate::task::structured::StructLoss;
use crate::task::tagging::TagData;
use crate::task::targets::encode_targets;
use crate::task::TaskKind;

/// Iteration cap of mirror descent and UCD under a time budget: a safety net that only
/// binds on tiny problems whose iterations take microseconds (the objective keeps
/// decreasing with time on real tables, BENCHMARKS.md).
pub(crate) const POLY_MAX_ITER: u64 = 100_000;

/// What a learner trains on.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TrainingData<'a> {
    /// Rows of a table (binary, multiclass, regression).
    Table(TableRef<'a>),
    /// Sequences with a label per position.
    Sequences(&'a SequenceData),
    /// Sentences with their trees, the templates, and sentences that choose the epoch.
    Treebank(&'a ParseData),
    /// Sentences in the column format with CRF++ templates (a template tagger).
    Tagged(&'a TagData),
    /// Kernel matrices the caller computed on the training rows, with their targets.
    Kernels(KernelData<'a>),
}

/// Training kernel matrices (`n x n` each, `n` the targets' rows; finite, symmetric and
/// positive semidefinite) and the targets of a task (binary, multiclass, regression).
#[derive(Debug, Clone, Copy)]
pub struct KernelData<'a> {
    pub kernels: &'a [MatrixRef<'a>],
    pub targets: &'a Targets,
    pub task: TaskKind,
}

impl<'a> From<KernelData<'a>> for TrainingData<'a> {
    fn from(d: KernelData<'a>) -> Self {
        TrainingData::Kernels(d)
    }
}

impl<'a> From<&'a TagData> for TrainingData<'a> {
    fn from(d: &'a TagData) -> Self {
        TrainingData::Tagged(d)
    }
}

impl<'a> From<&'a ParseData> for TrainingData<'a> {
    fn from(d: &'a ParseData) -> Self {
        TrainingData::Treebank(d)
    }
}

impl<'a> From<TableRef<'a>> for TrainingData<'a> {
    fn from(t: TableRef<'a>) -> Self {
        TrainingData::Table(t)
    }
}

impl<'a> From<&'a Dataset> for TrainingData<'a> {
    fn from(d: &'a Dataset) -> Self {
        TrainingData::Table(d.view())
    }
}

impl<'a> From<&'a SequenceData> for TrainingData<'a> {
    fn from(d: &'a SequenceData) -> Self {
        TrainingData::Sequences(d)
    }
}

/// [`fit`](super::fit()) from a spec already checked: the arm of each learner and task.
pub(crate) fn fit_checked(
    data: TrainingData<'_>,
    validation: Option<TableRef<'_>>,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    if validation.is_some() && !matches!(spec.learner, Learner::Gomp(_)) {
        return Err(Error::unsupported(format!(
            "validation rows choose MKL-GOMP's path length; the {} learner does not take them",
            spec.learner.kind()
        )));
    }
    match (data, spec.task) {
        (TrainingData::Kernels(_), _) => Err(Error::data(
            "kernel matrices train with a precomputed-kernel spec (FitRequest::precomputed)",
        )),
        (TrainingData::Sequences(seq), Task::Sequence) => fit_sequences(seq, spec, observer),
        (TrainingData::Tagged(d), Task::Sequence) => fit_tagging(d, spec, observer),
        (TrainingData::Tagged(_), t) => Err(Error::data(format!(
            "tagged sentences given for a {t} task (use the sequence task)"
        ))),
        (TrainingData::Treebank(tb), Task::Parsing) => fit_parsing(tb, spec, observer),
        (TrainingData::Treebank(_), t) => Err(Error::data(format!(
            "sentences with trees given for a {t} task (use the parsing task)"
        ))),
        (_, Task::Parsing) => Err(Error::data(
            "the parsing task needs sentences with trees (CoNLL-U)",
        )),
        (TrainingData::Sequences(_), t) => Err(Error::data(format!(
            "sequences given for a {t} task (use the sequence task)"
        ))),
        (TrainingData::Table(_), Task::Sequence) => Err(Error::data(
            "a table of rows given for the sequence task (sequences are needed)",
        )),
        (TrainingData::Table(table), task) => {
            let kind = task
                .vector_kind()
                .ok_or_else(|| Error::data("a vector task needs a table"))?;
            if table.is_empty() {
                return Err(Error::data("the training set has no rows"));
            }
            match &spec.learner {
                Learner::Online(_) => fit_online(table, kind, spec, observer),
                Learner::Gomp(_) => fit_gomp(table, validation, kind, spec, observer),
                Learner::LpMkl(_) => fit_lp(table, kind, spec, observer),
                Learner::MirrorDescent(p) => {
                    fit_poly(table, kind, p, Sampling::Importance, spec, observer)
                }
                Learner::Ucd(p) => fit_poly(table, kind, p, Sampling::Uniform, spec, observer),
                Learner::Poly(p) => fit_poly_auto(table, kind, p, spec, observer),
                Learner::Mtl(_) => Err(Error::unsupported(
                    "multi-template learning needs sentences and templates, not a table",
                )),
                Learner::SimpleMkl(w) => {
                    fit_wrapper(table, kind, WrapperMethod::SimpleMkl, w, spec, observer)
                }
                Learner::GaussSeidel(w) => {
                    fit_wrapper(table, kind, WrapperMethod::GaussSeidel, w, spec, observer)
                }
            }
        }
    }
}

/// The 1-slack cutting plane's `C` (of `1/2 ||w||^2 + C xi`, `xi` the average loss) for `n`
/// training examples: `C n` for the spec's `C` (which weighs the sum of the losses), `1 /
/// lambda` for its `lambda` (the online learner's scale).
pub(crate) fn cutting_plane_c(strength: super::spec::Strength, n: usize) -> f64 {
    match strength {
        super::spec::Strength::C(c) => c * n.max(1) as f64,
        super::spec::Strength::Lambda(l) => 1.0 / l,
    }
}

/// The cutting plane's settings for multi-template learning with `n` training examples.
fn mtl_params(
    spec: &CheckedSpec,
    m: &super::spec::MtlSpec,
    n: usize,
) -> crate::solver::cutting_plane::CuttingPlaneParams {
    crate::solver::cutting_plane::CuttingPlaneParams {
        c: cutting_plane_c(spec.strength, n),
        epsilon: m.epsilon,
        max_iter: m.max_iter,
        separation_step: m.separation_step,
        ..Default::default()
    }
}

/// A template tagger (mao-tsang Sec. 3 / martins2011 Sec. 4.1 with templates as groups):
/// SPOM (averaged iterate of the epoch that tags the development sentences best) or
/// multi-template learning by the cutting plane.
fn fit_tagging(data: &TagData, spec: &CheckedSpec, observer: &dyn Observer) -> Result<Fitted> {
    use crate::pipeline::columns::tagging::{fit_tagger, TaggerLearner, TaggerSpec};
    if data.train.is_empty() {
        return Err(Error::data("the training set has no sentences"));
    }
    let n = data.train.len();
    let (learner, lambda) = match &spec.learner {
        Learner::Online(o) => {
            let mut params = spec.online_params(n)?;
            params.steps.averaging = true;
            let lambda = params.lambda;
            let loss = o.loss.expect("check() sets the loss").sequence_loss()?;
            (TaggerLearner::Online { params, loss }, lambda)
        }
        Learner::Mtl(m) => {
            let params = mtl_params(spec, m, n);
            let lambda = 1.0 / params.c;
            (TaggerLearner::CuttingPlane { params, q: m.q }, lambda)
        }
        other => {
            return Err(Error::unsupported(format!(
                "the {} learner does not train a template tagger; use online or mtl",
                other.kind()
            )))
        }
    };
    let tagger = TaggerSpec {
        learner,
        min_count: data.min_count,
        track_objective: false,
        average_from: 0,
        calibrate: None,
        memory: spec.memory,
    };
    let dev = (!data.dev.is_empty()).then_some(data.dev.as_slice());
    let fit = fit_tagger(&data.train, dev, data.templates.clone(), &tagger, observer)?;
    let mut notes = vec![format!(
        "features indexed in {:.2} s, trained in {:.2} s{}",
        fit.index_seconds,
        fit.train_seconds,
        match (fit.best_epoch, fit.dev_scores.is_empty()) {
            (0, true) => format!(
                "; {} cuts ({:.2} s decoding, {:.2} s in the working-set problem)",
                fit.cuts, fit.decode_seconds, fit.master_seconds
            ),
            (0, false) => format!(
                "; {} cuts ({:.2} s decoding, {:.2} s in the working-set problem); \
                 development score {:.2}",
                fit.cuts, fit.decode_seconds, fit.master_seconds, fit.dev_scores[0]
            ),
            (e, true) => format!("; epoch {e} kept"),
            (e, false) => format!(
                "; epoch {e} of {} kept (development score {:.2})",
                fit.run.steps,
                fit.dev_scores[e - 1]
            ),
        }
    )];
    if !spec.standardize {
        notes.push("standardize = false has no effect on a template tagger".into());
    }
    let empty = fit.model.featurizer.empty_templates();
    if data.min_count > 1 && !empty.is_empty() {
        let names: Vec<&str> = empty.iter().map(|t| t.text.as_str()).collect();
        notes.push(format!(
            "warning: min_count {} kept no expansion of {} of the {} templates with \
             observations ({}): none was seen {} times in training, so they add nothing to \
             the model",
            data.min_count,
            empty.len(),
            fit.model.featurizer.features_per_template().len()
                + fit.model.featurizer.templates.bigram_macros().count(),
            names.join(", "),
            data.min_count
        ));
    }
    Ok(Fitted {
        model: Model::Tagger(fit.model),
        run: fit.run,
        lambda,
        path_choice: None,
        notes,
        selection: None,
        stream: None,
    })
}

fn fit_online(
    table: TableRef<'_>,
    task: TaskKind,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let Learner::Online(o) = &spec.learner else {
        unreachable!()
    };
    let loss = o.loss.expect("check() sets the loss").vector_loss(task)?;
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
    Ok(Fitted {
        model: Model::KernelMachine(m),
        run,
        lambda,
        path_choice: None,
        notes: Vec::new(),
        selection: None,
        stream: None,
    })
}

/// The parser (martins2011 Sec. 4.2): SPOM over the template groups with the spec's
/// regularizer, structured hinge or CRF loss (`--loss crf`: single-root arc marginals),
/// Chu-Liu-Edmonds (or Eisner) decoding, the averaged iterate
/// of the epoch that parses the development sentences best (the last epoch without them),
/// and a relation labeler when the sentences have relations.
fn fit_parsing(data: &ParseData, spec: &CheckedSpec, observer: &dyn Observer) -> Result<Fitted> {
    if data.train.is_empty() {
        return Err(Error::data("the training set has no sentences"));
    }
    let n = data.train.len();
    let mut loss = StructLoss::Hinge;
    let (params, cutting_plane, lambda) = match &spec.learner {
        Learner::Mtl(m) => {
            let cp = mtl_params(spec, m, n);
            let lambda = 1.0 / cp.c;
            let params = OnlineParams {
                seed: spec.seed,
                ..OnlineParams::default()
            };
            (params, Some((cp, m.q)), lambda)
        }
        _ => {
            if let Learner::Online(o) = &spec.learner {
                loss = o.loss.expect("check() sets the loss").sequence_loss()?;
            }
            let mut params = spec.online_params(n)?;
            params.steps.averaging = true;
            let lambda = params.lambda;
            (params, None, lambda)
        }
    };
    let parser = ParserSpec {
        support: data.support,
        trees: data.trees,
        params,
        loss,
        labels: true,
        cutting_plane,
    };
    let dev = (!data.dev.is_empty()).then_some(data.dev.as_slice());
    let fit = fit_parser(&data.train, dev, data.templates.clone(), &parser, observer)?;
    let dev_note =
        |uas: Option<&f64>| uas.map_or(String::new(), |u| format!(" (development UAS {u:.2})"));
    let mut notes = vec![if fit.best_epoch == 0 {
        format!(
            "features indexed in {:.2} s; {} cuts ({:.2} s decoding, {:.2} s in the working-set \
             problem){}",
            fit.index_seconds,
            fit.run.steps,
            fit.decode_seconds,
            fit.master_seconds,
            dev_note(fit.dev_uas.first())
        )
    } else {
        format!(
            "features indexed in {:.2} s; epoch {} of {} kept{}",
            fit.index_seconds,
            fit.best_epoch,
            fit.run.steps,
            dev_note(fit.dev_uas.get(fit.best_epoch - 1))
        )
    }];
    if !spec.standardize {
        notes.push("standardize = false has no effect on a parser".into());
    }
    Ok(Fitted {
        model: Model::Parser(fit.model),
        run: fit.run,
        lambda,
        path_choice: None,
        notes,
        selection: None,
        stream: None,
    })
}

fn fit_sequences(
    data: &SequenceData,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let o = match &spec.learner {
        Learner::Online(o) => o,
        Learner::SimpleMkl(w) => {
            return fit_sequence_wrappers(data, WrapperMethod::SimpleMkl, w, spec, observer)
        }
        Learner::GaussSeidel(w) => {
            return fit_sequence_wrappers(data, WrapperMethod::GaussSeidel, w, spec, observer)
        }
        _ => {
            return Err(Error::unsupported(
                "sequences are learned by the online learner (SPOM) or the wrappers \
                 (simplemkl, gauss-seidel)",
            ))
        }
    };
    if data.n_sequences() == 0 {
        return Err(Error::data("the training set has no sequences"));
    }
    let mut notes = Vec::new();
    if !spec.standardize {
        notes
            .push("sequence inputs are used as they are; standardize = false has no effect".into());
    }
    let params = spec.online_params(data.n_sequences())?;
    let lambda = params.lambda;
    let cfg = SequenceFitConfig {
        loss: o.loss.expect("check() sets the loss").sequence_loss()?,
        kernels: spec.kernels.clone(),
        average: false,
        params,
        memory: spec.memory,
    };
    let (m, run) = fit_sequence(data, &cfg, observer)?;
    Ok(Fitted {
        model: Model::Sequence(m),
        run,
        lambda,
        path_choice: None,
        notes,
        selection: None,
        stream: None,
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
        super::spec::Strength::C(c) => c,
        super::spec::Strength::Lambda(l) => 1.0 / (l * n as f64),
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
    let mut notes = Vec::new();
    if !spec.standardize {
        notes
            .push("sequence inputs are used as they are; standardize = false has no effect".into());
    }
    Ok(Fitted {
        model: Model::Sequence(m),
        run,
        lambda: 1.0 / (c * n as f64),
        path_choice: None,
        notes,
        selection: None,
        stream: None,
    })
}

fn batch<L>(
    table: TableRef<'_>,
    task: TaskKind,
    classes: Vec<String>,
    learner: L,
) -> BatchModel<L> {
    BatchModel {
        task,
        classes,
        feature_names: table.feature_names().to_vec(),
        learner,
        selection: None,
    }
}

/// The validation rows' squared-loss targets, checked against the training table.
fn validation_targets(
    train: TableRef<'_>,
    validation: TableRef<'_>,
    task: TaskKind,
    classes: &[String],
) -> Result<Matrix> {
    if validation.n_features() != train.n_features() {
        return Err(Error::shape(
            "features of the validation rows (the training rows')",
            train.n_features(),
            validation.n_features(),
        ));
    }
    if validation.is_empty() {
        return Err(Error::data("the validation set has no rows"));
    }
    if let Targets::Classes { classes: c, .. } = validation.targets() {
        if c.as_slice() != classes {
            return Err(Error::data(format!(
                "the validation rows' classes ({}) are not the training classes ({})",
                c.join(", "),
                classes.join(", ")
            )));
        }
    }
    Ok(encode_targets(task, validation.targets())?.1)
}

/// MKL-GOMP and lp-MKL work with squared residuals of the (encoded) targets: targets whose
/// squares overflow (regression values near 1e300) are refused with a clear error instead
/// of giving a model of NaN weights.
fn check_squares_finite(y: &Matrix, learner: &str) -> Result<()> {
    if y.data.iter().map(|v| v * v).sum::<f64>().is_finite() {
        return Ok(());
    }
    let largest = y.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    Err(Error::data(format!(
        "the targets, up to {largest:e} in magnitude, are too large for {learner}: the sum of \
         their squares overflows; scale the targets"
    )))
}

fn fit_gomp(
    table: TableRef<'_>,
    validation: Option<TableRef<'_>>,
    task: TaskKind,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let Learner::Gomp(g) = &spec.learner else {
        unreachable!()
    };
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
        model: Model::Gomp(batch(table, task, classes, m)),
        run,
        lambda,
        path_choice,
        notes: Vec::new(),
        selection: None,
        stream: None,
    })
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
    let params = w.model_params(method, c, spec.standardize, spec.seed, spec.memory);
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
        model: Model::Wrapper(batch(table, task, classes, m)),
        run,
        lambda: 1.0 / c,
        path_choice: None,
        notes,
        selection: None,
        stream: None,
    })
}

fn fit_lp(
    table: TableRef<'_>,
    task: TaskKind,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let Learner::LpMkl(l) = &spec.learner else {
        unreachable!()
    };
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
    let (m, run) = LpMklModel::fit(
        table.x(),
        table.feature_names(),
        &y,
        &spec.kernels_for(table.n_features()),
        &params,
        observer,
    )?;
    Ok(Fitted {
        model: Model::LpMkl(batch(table, task, classes, m)),
        run,
        lambda,
        path_choice: None,
        notes: Vec::new(),
        selection: None,
        stream: None,
    })
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
                model: Model::PolyMkl(batch(table, task, classes, m)),
                run,
                lambda,
                path_choice: None,
                notes: vec![note],
                selection: None,
                stream: None,
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
        model: Model::PolyMkl(batch(table, task, classes, m)),
        run,
        lambda,
        path_choice: None,
        notes,
        selection: None,
        stream: None,
    })
}
