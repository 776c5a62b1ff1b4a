//! The batch learners from the command line: `train --algo gomp | lp-mkl | mirror-descent |
//! ucd`, and `eval`, `predict`, `inspect` of their models.
//!
//! Every learner minimizes a squared loss on real targets; the task decides the targets and
//! how decision values become predictions (see `multikernel::model::batch_model`):
//! regression as is, binary `-1/+1` and the sign, multiclass one-hot and the largest output.
//!
//! Regularization (`--lambda` is always the learner's own constant, as its solver documents
//! it; `--C` is converted so that it weighs `sum_i 1/2 (y_i - f(x_i))^2` against
//! `1/2 ||f||^2` for every learner, the online learner's convention):
//! - gomp: `R(g; r) = (1/l) ||r - g||^2 + lambda ||g||^2`, `lambda = 1 / (C l)`
//!   (`lambda_from`, default `C = 1`);
//! - lp-mkl, mirror-descent, ucd: `1/2 ||y - f||^2 + lambda/2 sum_m ||w_m||^2 / theta_m`,
//!   `lambda = 1 / C` (default `C = 1`, i.e. `lambda = 1`).

use crate::cli::{DataArgs, TrainArgs};
use crate::commands::{lambda_from, parse_format, parse_kernels};
use anyhow::{bail, Context, Result};
use multikernel::data::{read_table, Dataset, Matrix, TargetKind};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel::model::batch_model::{validation_metric, BatchModel, DecisionFunction};
use multikernel::model::{self, AnyModel};
use multikernel::solver::gomp::{GompModel, GompModelParams, GompParams, GompStop};
use multikernel::solver::lp_mkl::{parse_p, LpMklModel, LpMklModelParams, LpMklParams};
use multikernel::solver::mirror_descent::{MirrorDescentParams, PolyMklModel, Sampling};
use multikernel::task::targets::encode_targets;
use multikernel::task::{Prediction, TaskKind};
use std::io::Write;
use std::time::Instant;

/// The learners of this module (`--algo` values).
pub const ALGOS: [&str; 4] = ["gomp", "lp-mkl", "mirror-descent", "ucd"];

/// Iteration cap of mirror descent / UCD, a safety net: `--seconds` is the budget that ends
/// training. The objective keeps decreasing with time (measured, sonar, D = 3, lambda 1:
/// J = 0.81 after 3 s, 0.71 after 10 s, 0.66 after 30 s, about 500 iterations per second),
/// so the cap only binds on tiny problems whose iterations take microseconds. The pilot
/// runs that choose eta0 get 2% of the budget each.
const MD_MAX_ITER: u64 = 100_000;

/// `println!` into a `String` (printed at the end with [`emit`]).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&format!($($arg)*));
        $out.push('\n');
    }};
}

/// Writes to standard output; a closed pipe (`| head`) is not an error.
fn emit(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Lines of kernels printed before "... N more".
const SHOWN: usize = 40;

/// `train --algo gomp | lp-mkl | mirror-descent | ucd` on data already read for `task`.
pub fn train(a: &TrainArgs, task: TaskKind, data: Dataset) -> Result<()> {
    if data.is_empty() {
        bail!("{}: no data rows", a.data.data.display());
    }
    if a.reg.is_some() {
        bail!(
            "--reg applies to --algo online only ({} has its own regularization: {})",
            a.algo,
            match a.algo.as_str() {
                "gomp" => "--max-kernels and --lambda",
                "lp-mkl" => "--p and --lambda",
                _ => "--lambda",
            }
        );
    }
    if let Some(l) = &a.loss {
        if l != "squared" {
            bail!(
                "--algo {} minimizes the squared loss; --loss {l} applies to --algo online",
                a.algo
            );
        }
    }
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let (classes, y) = encode_targets(task, &data.targets)?;
    let kernels = parse_kernels(&a.kernels, "perfeature:linear")?;
    let start = Instant::now();
    let mut out = String::new();
    let job = Job {
        a,
        task,
        data: &data,
        classes,
        y,
        kernels,
        limit,
    };
    let saved = match a.algo.as_str() {
        "gomp" => train_gomp(&mut out, job)?,
        "lp-mkl" => train_lp(&mut out, job)?,
        "mirror-descent" | "ucd" => train_poly(&mut out, job)?,
        other => bail!(
            "unknown --algo '{other}': expected online, {}",
            ALGOS.join(", ")
        ),
    };
    // The model is written before anything is printed (a closed pipe loses output, never
    // the model).
    model::save(&a.out, &saved)?;
    emit(&out);
    eprintln!(
        "trained {} on {} rows x {} features in {:.2} s; model written to {}",
        a.algo,
        data.len(),
        data.n_features(),
        start.elapsed().as_secs_f64(),
        a.out.display()
    );
    Ok(())
}

/// A training run: the flags and the data with its squared-loss targets.
struct Job<'a> {
    a: &'a TrainArgs,
    task: TaskKind,
    data: &'a Dataset,
    /// Class names (empty for regression).
    classes: Vec<String>,
    /// Targets `n x outputs` ([`encode_targets`]).
    y: Matrix,
    kernels: Vec<KernelSpec>,
    limit: MemoryLimit,
}

impl Job<'_> {
    fn wrap<L>(self, learner: L) -> BatchModel<L> {
        BatchModel {
            task: self.task,
            classes: self.classes,
            feature_names: self.data.feature_names.clone(),
            learner,
        }
    }
}

fn train_gomp(out: &mut String, job: Job) -> Result<AnyModel> {
    let (a, task, data, y, limit) = (job.a, job.task, job.data, &job.y, &job.limit);
    if a.max_kernels == 0 {
        bail!("--max-kernels must be at least 1");
    }
    if !(a.eps.is_finite() && a.eps >= 0.0) {
        bail!("--eps must be a finite number >= 0, got {}", a.eps);
    }
    let lambda = lambda_from(a.c, a.lambda, data.len())?;
    let params = GompModelParams {
        gomp: GompParams {
            lambda,
            max_kernels: a.max_kernels,
            eps: a.eps,
            bias: !a.no_bias,
            seed: a.seed,
            subsample: a.subsample,
            ..GompParams::default()
        },
        standardize: !a.no_standardize,
        seed: a.seed,
        memory: *limit,
    };
    // Read the validation file before the (possibly long) fit, so a bad file fails fast.
    let validation = match &a.validation {
        Some(path) => {
            let args = DataArgs {
                data: path.clone(),
                format: a.data.format.clone(),
            };
            let ds = read_matching(task, &job.classes, &data.feature_names, &args)
                .with_context(|| format!("--validation {}", path.display()))?;
            if ds.is_empty() {
                bail!("--validation {}: no data rows", path.display());
            }
            let (_, yv) = encode_targets(task, &ds.targets)?;
            Some((ds, yv))
        }
        None => None,
    };
    let (mut m, _) = GompModel::fit(
        data.x.view(),
        &data.feature_names,
        y,
        &job.kernels,
        &params,
        &(),
    )?;
    let dict = m.dictionary_size;
    say!(
        out,
        "MKL-GOMP: lambda {}, {} of {dict} kernels chosen ({}), bias {}",
        num(lambda),
        m.n_kernels(),
        stop_text(m.stop, a.max_kernels, a.eps),
        if a.no_bias { "off" } else { "on" }
    );
    if let Some((ds, yv)) = &validation {
        let metric = validation_metric(task);
        let full = m.n_kernels();
        let (best, losses) = m.select_on_validation(ds.x.view(), yv, metric, limit)?;
        let what = match task {
            TaskKind::Regression => "squared error",
            _ => "error rate",
        };
        say!(
            out,
            "validation ({} rows): path length {best} of {full} chosen, {what} {:.4}",
            ds.len(),
            losses[best]
        );
        let by_len: Vec<String> = losses
            .iter()
            .enumerate()
            .map(|(k, l)| format!("{k}:{l:.4}"))
            .collect();
        say!(out, "  {what} by path length: {}", by_len.join(" "));
    }
    print_gomp_kernels(out, &m);
    Ok(AnyModel::Gomp(job.wrap(m)))
}

fn stop_text(stop: GompStop, max_kernels: usize, eps: f64) -> String {
    match stop {
        GompStop::Eps => format!("stopped: best improvement <= eps = {eps:e}"),
        GompStop::MaxKernels => format!("stopped: --max-kernels {max_kernels} reached"),
        GompStop::Exhausted => "stopped: every kernel of the dictionary chosen".to_string(),
        GompStop::Cancelled => "stopped: cancelled".to_string(),
    }
}

fn print_gomp_kernels(out: &mut String, m: &GompModel) {
    say!(out, "  {:>5}  {:>12}  kernel", "order", "improvement");
    for (i, (name, imp)) in m.kernels().iter().enumerate() {
        say!(out, "  {:>5}  {imp:>12.6}  {name}", i + 1);
    }
}

fn train_lp(out: &mut String, job: Job) -> Result<AnyModel> {
    let (a, data, y, limit) = (job.a, job.data, &job.y, &job.limit);
    let Some(p) = &a.p else {
        bail!("--algo lp-mkl needs --p P, the kernel-weight norm: 1, 4/3, 2, 4 or inf");
    };
    let p = parse_p(p).with_context(|| format!("--p {p}"))?;
    let lambda = lambda_lp(a.c, a.lambda)?;
    let params = LpMklModelParams {
        lp: LpMklParams {
            p,
            lambda,
            bias: !a.no_bias,
            ..LpMklParams::default()
        },
        standardize: !a.no_standardize,
        seed: a.seed,
        memory: *limit,
    };
    let (m, _) = LpMklModel::fit(
        data.x.view(),
        &data.feature_names,
        y,
        &job.kernels,
        &params,
        &(),
    )?;
    say!(
        out,
        "lp-MKL: p {}, lambda {}, {} kernels ({} with weight 0), objective {:.6} after \
         {} steps{}",
        m.p,
        num(lambda),
        m.kernels.len(),
        m.theta.iter().filter(|t| **t == 0.0).count(),
        m.objective.last().copied().unwrap_or(f64::NAN),
        m.objective.len(),
        if m.converged { "" } else { " (not converged)" }
    );
    let mut w = m.kernels();
    w.sort_by(|x, y| y.1.total_cmp(&x.1));
    print_weights(out, "theta", &w);
    Ok(AnyModel::LpMkl(job.wrap(m)))
}

/// lp-MKL's and mirror descent's lambda (`1/2 ||y - f||^2 + lambda/2 ||w||^2`): `--lambda`
/// as is, `--C` as `1 / C`, default 1.
fn lambda_lp(c: Option<f64>, lambda: Option<f64>) -> Result<f64> {
    match (c, lambda) {
        (_, Some(l)) if !(l.is_finite() && l > 0.0) => bail!("--lambda must be positive, got {l}"),
        (_, Some(l)) => Ok(l),
        (Some(c), None) if !(c.is_finite() && c > 0.0) => bail!("--C must be positive, got {c}"),
        (Some(c), None) => Ok(1.0 / c),
        (None, None) => Ok(1.0),
    }
}

fn train_poly(out: &mut String, job: Job) -> Result<AnyModel> {
    let (a, task, data, y, limit) = (job.a, job.task, job.data, &job.y, &job.limit);
    if task == TaskKind::Multiclass {
        bail!(
            "--algo {} learns one real output (squared loss): use --task binary or regression \
             (for multiclass use --algo gomp or lp-mkl)",
            a.algo
        );
    }
    if !(a.seconds.is_finite() && a.seconds > 0.0) {
        bail!("--seconds must be a positive number, got {}", a.seconds);
    }
    if a.iterations == Some(0) {
        bail!("--iterations must be at least 1");
    }
    if a.poly_degree == 0 {
        bail!("--poly-degree must be at least 1");
    }
    if a.no_standardize {
        eprintln!(
            "note: --algo {} always standardizes the inputs; --no-standardize ignored",
            a.algo
        );
    }
    if a.no_bias {
        eprintln!(
            "note: --algo {} has the constant product kernel (degree 0) as its bias; \
             --no-bias ignored",
            a.algo
        );
    }
    let sampling = if a.algo == "ucd" {
        Sampling::Uniform
    } else {
        Sampling::Importance
    };
    let lambda = lambda_lp(a.c, a.lambda)?;
    let params = MirrorDescentParams {
        sampling,
        degree: a.poly_degree as usize,
        lambda,
        max_iter: a.iterations.unwrap_or(MD_MAX_ITER),
        max_seconds: if a.iterations.is_some() {
            None
        } else {
            Some(a.seconds)
        },
        seed: a.seed,
        base: job.kernels.clone(),
        memory: *limit,
        rho2: a.rho2.clone().unwrap_or_default(),
        ..MirrorDescentParams::default()
    };
    let (m, _) = PolyMklModel::fit(data.x.view(), &y.data, &params, &())?;
    say!(
        out,
        "{}: degree {}, lambda {}, {} product kernels, {} iterations (eta0 {}), \
         objective {:.6}",
        if a.algo == "ucd" {
            "UCD"
        } else {
            "mirror descent"
        },
        m.degree,
        num(lambda),
        count_text(m.kernel_count),
        m.iterations,
        m.eta0,
        m.objective
    );
    print_poly_kernels(out, &m, &data.feature_names);
    Ok(AnyModel::PolyMkl(job.wrap(m)))
}

/// A positive constant in a readable form: `0.0048`, `12.5`, `1.000e-6`.
fn num(v: f64) -> String {
    if (1e-3..1e4).contains(&v.abs()) {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

fn count_text(c: f64) -> String {
    if c < 9.0e15 {
        format!("{}", c as u64)
    } else {
        format!("{c:e}")
    }
}

fn print_weights(out: &mut String, what: &str, w: &[(String, f64)]) {
    say!(out, "  {what:>10}  kernel");
    for (name, weight) in w.iter().take(SHOWN) {
        say!(out, "  {weight:>10.6}  {name}");
    }
    if w.len() > SHOWN {
        say!(out, "  ... {} more", w.len() - SHOWN);
    }
}

fn print_poly_kernels(out: &mut String, m: &PolyMklModel, feature_names: &[String]) {
    let all = m.kernels();
    let (terms, rest) = all.split_at(m.terms.len().min(all.len()));
    print_weights(out, "weight", terms);
    for (name, weight) in rest {
        say!(out, "  {weight:>10.6}  {name}");
    }
    // The base kernels are named x1, x2, ... after the input columns.
    if m.base_names.first().is_some_and(|n| n.starts_with('x')) {
        let legend: Vec<String> = feature_names
            .iter()
            .take(SHOWN)
            .enumerate()
            .map(|(i, f)| format!("x{} = {f}", i + 1))
            .collect();
        let more = if feature_names.len() > SHOWN {
            format!(", ... {} more", feature_names.len() - SHOWN)
        } else {
            String::new()
        };
        say!(out, "  inputs: {}{more}", legend.join(", "));
    }
}

/// Reads labelled rows for a model of `task` with training `classes` and features.
fn read_matching(
    task: TaskKind,
    classes: &[String],
    feature_names: &[String],
    data: &DataArgs,
) -> Result<Dataset> {
    let format = parse_format(&data.format)?;
    let (target, cls) = match task {
        TaskKind::Regression => (TargetKind::Real, None),
        _ => (TargetKind::Classes, Some(classes)),
    };
    let ds = read_table(&data.data, format, target, cls, Some(feature_names.len()))?;
    if ds.n_features() != feature_names.len() {
        bail!(
            "{}: {} features, the model was trained on {}",
            data.data.display(),
            ds.n_features(),
            feature_names.len()
        );
    }
    Ok(ds)
}

fn read_for<L>(m: &BatchModel<L>, data: &DataArgs) -> Result<Dataset> {
    read_matching(m.task, &m.classes, &m.feature_names, data)
}

/// `eval` of a batch model: prints `n N` and `accuracy X` or `mse X`.
pub fn eval<L: DecisionFunction>(
    m: &BatchModel<L>,
    data: &DataArgs,
    limit: &MemoryLimit,
) -> Result<()> {
    let ds = read_for(m, data)?;
    let pred = m.predict(&ds.x, limit)?;
    let (name, value) = multikernel::task::prediction_metric(&pred, &ds.targets);
    emit(&format!("n {}\n{name} {value:.4}\n", ds.len()));
    Ok(())
}

/// `predict` of a batch model: one line per row (a class name or a value).
pub fn predict<L: DecisionFunction>(
    m: &BatchModel<L>,
    data: &DataArgs,
    limit: &MemoryLimit,
) -> Result<String> {
    let ds = read_for(m, data)?;
    let mut out = String::new();
    for p in m.predict(&ds.x, limit)? {
        match p {
            Prediction::Class(c) => match m.classes.get(c) {
                Some(name) => out.push_str(name),
                None => bail!("the model predicted class {c} of {}", m.classes.len()),
            },
            Prediction::Value(v) => out.push_str(&format!("{v}")),
        }
        out.push('\n');
    }
    Ok(out)
}

fn header<L>(out: &mut String, kind: &str, m: &BatchModel<L>) {
    say!(out, "kind: {kind}, task {:?}", m.task);
    if !m.classes.is_empty() {
        say!(out, "classes: {}", m.classes.join(", "));
    }
    say!(out, "features: {}", m.feature_names.len());
}

/// `inspect` of an MKL-GOMP model: the chosen kernels in order with their improvements.
pub fn inspect_gomp(m: &BatchModel<GompModel>) {
    let out = &mut String::new();
    header(out, "MKL-GOMP (Sindhwani & Lozano 2012)", m);
    let g = &m.learner;
    say!(
        out,
        "lambda {}, eps {:e}, outputs {}, dictionary {} kernels",
        num(g.lambda),
        g.eps,
        g.n_outputs(),
        g.dictionary_size
    );
    say!(
        out,
        "path length: {} kernels (training residual {:.6}; stop: {:?})",
        g.n_kernels(),
        g.path.last().map_or(f64::NAN, |p| p.residual),
        g.stop
    );
    print_gomp_kernels(out, g);
    emit(out);
}

/// `inspect` of an lp-MKL model: every kernel with its weight theta.
pub fn inspect_lp(m: &BatchModel<LpMklModel>) {
    let out = &mut String::new();
    header(out, "lp-norm MKL, squared loss (Kloft et al. 2011)", m);
    let l = &m.learner;
    say!(
        out,
        "p {}, lambda {}, outputs {}, objective {:.6} after {} steps{}",
        l.p,
        num(l.lambda),
        l.n_outputs(),
        l.objective.last().copied().unwrap_or(f64::NAN),
        l.objective.len(),
        if l.converged { "" } else { " (not converged)" }
    );
    say!(
        out,
        "kernels: {} ({} with weight 0)",
        l.kernels.len(),
        l.theta.iter().filter(|t| **t == 0.0).count()
    );
    say!(out, "  {:>10}  kernel", "theta");
    for (name, t) in l.kernels() {
        say!(out, "  {t:>10.6}  {name}");
    }
    emit(out);
}

/// `inspect` of a polynomial MKL model: the multi-indices with their weights.
pub fn inspect_poly(m: &BatchModel<PolyMklModel>) {
    let out = &mut String::new();
    header(
        out,
        "polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013)",
        m,
    );
    let p = &m.learner;
    say!(
        out,
        "sampling {}, degree {}, lambda {}, product kernels {}, objective {:.6}, \
         iterations {}, eta0 {}",
        p.sampling,
        p.degree,
        num(p.lambda),
        count_text(p.kernel_count),
        p.objective,
        p.iterations,
        p.eta0
    );
    say!(out, "kernels with their own weight: {}", p.terms.len());
    print_poly_kernels(out, p, &m.feature_names);
    emit(out);
}
