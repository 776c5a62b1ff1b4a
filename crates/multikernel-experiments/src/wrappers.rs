//! `reproduce wrappers`: Figure 2 of Martins et al. (2011), Sec. 4.1, "SPOM versus
//! wrapper-based methods" — the objective and the test accuracy against passes over the data
//! and against seconds, for SPOM and two wrapper MKL methods around structured PEGASOS.
//!
//! Protocol: OCR fold 0 for training, per-character test accuracy on a seeded sample of the
//! other folds' words (as `reproduce ocr`'s curves), `C = 100`, kernels L + Q + G (the
//! mkl-lqg row of `reproduce ocr`, beta0 fixed). Methods:
//! - `spom`: the mkl-lqg online learner (Alg. 3, squared l2,1, `eta0 / sqrt(t)` with the
//!   row's selected `eta0`), recorded after each epoch;
//! - `gauss-seidel` and `simplemkl` ([`multikernel::engine::pipeline::sequence::wrapper`]): 20 PEGASOS epochs
//!   in the first SVM call, 3 warm-started epochs in each later one, recorded after each outer
//!   iteration (the accepted point), with the epochs counted over every inner solve
//!   (line-search trials included).
//!
//! One evaluator for every method ([`mkl_objective`]): `lambda/2 (sum_m ||theta_m||)^2 +`
//! the average structured hinge loss `+ lambda/2 ||W||^2`, SPOM's own objective; a wrapper's
//! iterate enters it with `||theta_m|| = d_m sqrt(c^T K_m c)`. Seconds count training only
//! (the evaluations are timed and subtracted). Each method runs `optimum_epochs` epochs
//! (at least 1,000 for the recorded figure); the optimum is the best objective any of these
//! runs reached, and each method's "epochs to 1%" is its first recorded point within 1% of
//! it; beside it, the epochs to within 10% of the optimum and to 99% of the decrease from the
//! objective at zero parameters (the average word length, where every method starts: the
//! scale on which a plot of the objective shows a method "near the optimum"). The figure's
//! curves stop at `epochs` (150); the CSV files hold the whole runs.

use crate::jobs::JobClock;
use crate::ocr::{curve_sample, kernel_set, methods, state_accuracy, OcrConfig};
use crate::plot::{LinePlot, Series};
use crate::{Report, Row};
use multikernel::data::ocr::read_ocr;
use multikernel::data::SequenceData;
use multikernel::engine::pipeline::sequence::grams::lambda_from_c;
use multikernel::engine::pipeline::sequence::spom::{fit_with_grams, SequenceFitConfig};
use multikernel::engine::pipeline::sequence::wrapper::{
    explicit_sqnorm, fit_wrapper_with_grams, mkl_objective, SequenceWrapperConfig, FIRST_EPOCHS,
    WARM_EPOCHS,
};
use multikernel::engine::pipeline::sequence::KernelGroup;
use multikernel::engine::solver::online::compact::cached_norms;
use multikernel::engine::solver::online::{OnlineParams, OnlineSteps, StepSchedule};
use multikernel::engine::solver::wrapper::{WrapperMethod, WrapperParams};
use multikernel::engine::task::sequence::SeqLoss;
use multikernel::error::{Error, Result};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel::run::Control;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The methods of Figure 2, in plotting order.
pub const METHODS: [&str; 3] = ["spom", "gauss-seidel", "simplemkl"];

/// Within this relative distance of the optimum's objective a method has "reached" it.
pub const REACHED: f64 = 0.01;

/// Settings of `reproduce wrappers`.
#[derive(Debug, Clone)]
pub struct WrappersConfig {
    /// `letter.data` (plain or gzip).
    pub data: PathBuf,
    /// The training fold; the curves are measured on a sample of the others.
    pub fold: usize,
    /// `C = 1 / (lambda N)` (the paper's 100).
    pub c: f64,
    /// The figure's passes over the data (150).
    pub epochs: usize,
    /// Each method's run is this long (at least `epochs`); the optimum is the best objective
    /// of these runs.
    pub optimum_epochs: usize,
    /// PEGASOS epochs of the wrappers' first call and of each later call (20 and 3).
    pub first_epochs: usize,
    pub warm_epochs: usize,
    /// SPOM's `eta0` (the mkl-lqg row's selected value when `None`).
    pub spom_eta0: Option<f64>,
    /// Test words of the accuracy curves (seeded sample; 0 = all).
    pub curve_words: usize,
    pub seed: u64,
    /// Only these methods (all of [`METHODS`] when `None`).
    pub methods: Option<Vec<String>>,
    /// CSV and SVG files go here.
    pub out_dir: Option<PathBuf>,
    pub memory: MemoryLimit,
}

impl Default for WrappersConfig {
    fn default() -> Self {
        WrappersConfig {
            data: PathBuf::from("data/ocr/letter.data.gz"),
            fold: 0,
            c: 100.0,
            epochs: 150,
            optimum_epochs: 1000,
            first_epochs: FIRST_EPOCHS,
            warm_epochs: WARM_EPOCHS,
            spom_eta0: None,
            curve_words: 500,
            seed: 1,
            methods: None,
            out_dir: None,
            memory: MemoryLimit::default(),
        }
    }
}

/// One recorded point of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Passes over the training data so far.
    pub epochs: f64,
    /// Training seconds so far (Gram matrices and evaluations excluded).
    pub seconds: f64,
    /// The shared evaluator's objective.
    pub objective: f64,
    /// The method's own objective (SPOM's report, a wrapper's `J(d)`).
    pub own_objective: f64,
    /// Per-character accuracy on the curve sample (NaN beyond the figure's epochs).
    pub accuracy: f64,
    /// Kernel weights (SPOM's implied by its group norms; a wrapper's `d`).
    pub weights: Vec<f64>,
}

/// One method's run.
#[derive(Debug, Clone)]
pub struct MethodRun {
    pub method: String,
    pub points: Vec<Point>,
    /// How the run ended (a wrapper may stop before the epochs on its own criterion).
    pub status: String,
}

impl MethodRun {
    /// The last point within `epochs` passes.
    pub fn at(&self, epochs: f64) -> Option<&Point> {
        self.points.iter().rev().find(|p| p.epochs <= epochs + 1e-9)
    }

    /// The first point within `REACHED` of `optimum` (relative).
    pub fn reached(&self, optimum: f64) -> Option<&Point> {
        self.first_within(optimum, optimum.abs(), REACHED)
    }

    /// The first point with `objective - optimum <= within * scale`.
    pub fn first_within(&self, optimum: f64, scale: f64, within: f64) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| p.objective - optimum <= within * scale)
    }
}

/// `(objective - optimum) / |optimum|`.
pub fn relative_excess(objective: f64, optimum: f64) -> f64 {
    (objective - optimum) / optimum.abs().max(f64::MIN_POSITIVE)
}

/// The methods `cfg` asks for, in [`METHODS`] order.
fn selected(cfg: &WrappersConfig) -> Result<Vec<&'static str>> {
    match &cfg.methods {
        None => Ok(METHODS.to_vec()),
        Some(names) => {
            if let Some(bad) = names.iter().find(|n| !METHODS.contains(&n.as_str())) {
                return Err(Error::param(
                    "methods",
                    bad,
                    format!("one of {}", METHODS.join(", ")),
                ));
            }
            Ok(METHODS
                .iter()
                .copied()
                .filter(|m| names.iter().any(|n| n == m))
                .collect())
        }
    }
}

/// Runs the experiment on the file `cfg.data`.
pub fn run(cfg: &WrappersConfig, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let data = read_ocr(&cfg.data)?;
    run_on(&data, cfg, progress)
}

/// Runs the experiment on loaded data.
pub fn run_on(
    data: &SequenceData,
    cfg: &WrappersConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Report> {
    if cfg.epochs == 0 {
        return Err(Error::param("epochs", 0, "at least 1"));
    }
    if !(cfg.c.is_finite() && cfg.c > 0.0) {
        return Err(Error::param("C", cfg.c, "a positive number"));
    }
    if !data.fold_list().contains(&cfg.fold) {
        return Err(Error::data(format!(
            "fold {} has no words in the data",
            cfg.fold
        )));
    }
    let names = selected(cfg)?;
    if let Some(dir) = &cfg.out_dir {
        multikernel::io::create_dir(dir)?;
    }
    let row = methods()
        .into_iter()
        .find(|m| m.name == "mkl-lqg")
        .ok_or_else(|| Error::data("internal: no mkl-lqg row"))?;
    let eta0 = cfg.spom_eta0.unwrap_or(row.eta0);
    let total = cfg.epochs.max(cfg.optimum_epochs);
    let train = data.select_folds(&[cfg.fold]);
    let test = data.exclude_folds(&[cfg.fold]);
    let curve = curve_sample(
        &test,
        &OcrConfig {
            curve_words: cfg.curve_words,
            seed: cfg.seed,
            ..OcrConfig::default()
        },
    );
    progress(&format!(
        "fold {}: {} training words ({} characters); accuracy on {} test words ({} characters); \
         C {}, {} epochs per run, the figure's first {}",
        cfg.fold,
        train.n_sequences(),
        train.n_positions(),
        curve.n_sequences(),
        curve.n_positions(),
        cfg.c,
        total,
        cfg.epochs
    ));
    let set = kernel_set(row.kernels, &train.x, cfg.seed, &cfg.memory)?;
    progress(&format!(
        "training Grams of L, Q, G in {:.2} s",
        set.gram_seconds
    ));
    let lambda = lambda_from_c(cfg.c, train.n_sequences());
    let specs: Vec<KernelSpec> = row
        .kernels
        .iter()
        .map(|b| b.spec().parse())
        .collect::<Result<_>>()?;
    // The methods are independent jobs on the same Grams.
    let wall = Instant::now();
    let lanes = super::jobs::lanes(names.len(), 0, &cfg.memory);
    let runs = super::jobs::run_jobs(&names, lanes, progress, |&name, ctx| {
        let t = Instant::now();
        let thread_time = ctx.concurrent();
        let r = match name {
            "spom" => run_spom(&train, &curve, &set, eta0, lambda, total, cfg, thread_time)?,
            _ => {
                let method = if name == "simplemkl" {
                    WrapperMethod::SimpleMkl
                } else {
                    WrapperMethod::GaussSeidel
                };
                run_wrapper(
                    &train,
                    &curve,
                    &set,
                    &specs,
                    method,
                    lambda,
                    total,
                    cfg,
                    thread_time,
                )?
            }
        };
        let last = r.points.last();
        ctx.log(&format!(
            "{name}: {} points, {:.0} epochs, {:.1} training s ({:.0} s with evaluations, wall), \
             objective {:.6}, {}",
            r.points.len(),
            last.map_or(0.0, |p| p.epochs),
            last.map_or(0.0, |p| p.seconds),
            t.elapsed().as_secs_f64(),
            last.map_or(f64::NAN, |p| p.objective),
            r.status
        ));
        Ok(r)
    })?;
    progress(&format!(
        "methods {lanes} at once on {} threads: {:.1} s wall (training seconds: {})",
        rayon::current_num_threads(),
        wall.elapsed().as_secs_f64(),
        if lanes > 1 {
            "each run's thread CPU time"
        } else {
            "wall time"
        }
    ));
    // The optimum: the best objective of the long runs.
    let mut optimum = f64::INFINITY;
    let mut from = String::new();
    for r in &runs {
        for p in &r.points {
            if p.objective < optimum {
                optimum = p.objective;
                from = format!("{} at {} epochs", r.method, p.epochs);
            }
        }
    }
    if !optimum.is_finite() {
        return Err(Error::Numerical("no finite objective was recorded".into()));
    }
    progress(&format!(
        "optimum {optimum:.6} (the best of runs of {total} epochs: {from})"
    ));
    if let Some(dir) = &cfg.out_dir {
        write_outputs(dir, &runs, optimum, cfg)?;
    }
    // Every method starts from zero parameters, where the objective is the average loss at
    // zero: the average word length (every character wrong under the Hamming cost).
    let start = train.n_positions() as f64 / train.n_sequences() as f64;
    Ok(report(
        &runs,
        Reference {
            optimum,
            from,
            start,
            total,
        },
        eta0,
        lambda,
        set.gram_seconds,
        cfg,
    ))
}

/// SPOM (the mkl-lqg row at `C`): one point per epoch.
#[allow(clippy::too_many_arguments)]
fn run_spom(
    train: &SequenceData,
    curve: &SequenceData,
    set: &crate::ocr::KernelSet,
    eta0: f64,
    lambda: f64,
    total: usize,
    cfg: &WrappersConfig,
    thread_time: bool,
) -> Result<MethodRun> {
    let groups = KernelGroup::separate(&set.kernels);
    let fc = SequenceFitConfig {
        loss: SeqLoss::Hinge,
        kernels: Vec::new(),
        average: false,
        params: OnlineParams {
            lambda,
            reg: multikernel::engine::prox::RegSpec::L21Sq,
            steps: OnlineSteps {
                eta0,
                schedule: StepSchedule::InvSqrt,
                epochs: total,
                averaging: false,
                projection: true,
                shards: 1,
                batch: 1,
                learn_beta0: false,
            },
            seed: cfg.seed,
            shuffle: true,
        },
        memory: cfg.memory,
    };
    let mut points = Vec::new();
    let mut eval_seconds = 0.0;
    let mut error: Option<Error> = None;
    let start = JobClock::start(thread_time);
    let (_, info) = fit_with_grams(
        train,
        set.kernels.clone(),
        groups.clone(),
        &set.grams,
        &fc,
        &(),
        &mut |rep, st| {
            let t = JobClock::start(thread_time);
            let seconds = start.elapsed() - eval_seconds;
            let accuracy = if rep.epoch <= cfg.epochs {
                match state_accuracy(st, &set.kernels, &groups, &train.x, curve, &cfg.memory) {
                    Ok(a) => a,
                    Err(e) => {
                        error = Some(e);
                        return Control::Stop;
                    }
                }
            } else {
                f64::NAN
            };
            let objective = mkl_objective(
                lambda,
                &cached_norms(st),
                rep.average_loss,
                explicit_sqnorm(st),
            );
            points.push(Point {
                epochs: rep.epoch as f64,
                seconds,
                objective,
                own_objective: rep.objective,
                accuracy,
                weights: rep.weights.clone(),
            });
            eval_seconds += t.elapsed();
            Control::Continue
        },
    )?;
    if let Some(e) = error {
        return Err(e);
    }
    Ok(MethodRun {
        method: "spom".into(),
        points,
        status: info.status.describe().to_string(),
    })
}

/// A wrapper: one point per outer iteration, until `total` passes. When the wrapper stops
/// on its own criterion before (SimpleMKL declares convergence where the reduced gradient
/// of an inexact PEGASOS solution vanishes, e.g. at a vertex of the simplex), it is restarted
/// where it stopped: its weights, the SVM warm-started (`warm_epochs` more), as its own
/// stall branch refreshes an inexact solve.
#[allow(clippy::too_many_arguments)]
fn run_wrapper(
    train: &SequenceData,
    curve: &SequenceData,
    set: &crate::ocr::KernelSet,
    specs: &[KernelSpec],
    method: WrapperMethod,
    lambda: f64,
    total: usize,
    cfg: &WrappersConfig,
    thread_time: bool,
) -> Result<MethodRun> {
    let mut wc = SequenceWrapperConfig {
        method,
        kernels: specs.to_vec(),
        c: cfg.c,
        first_epochs: cfg.first_epochs,
        warm_epochs: cfg.warm_epochs,
        // Run to the epoch budget: no stop on the MKL gap.
        wrapper: WrapperParams {
            tol: 1e-12,
            max_iter: usize::MAX / 2,
            weight_tol: 0.0,
            ..WrapperParams::default()
        },
        seed: cfg.seed,
        memory: cfg.memory,
    };
    let mut points = Vec::new();
    let mut passes0 = 0.0;
    let mut resume = None;
    let mut stops: Vec<String> = Vec::new();
    // Training seconds: the whole run's clock less the evaluations.
    let start = JobClock::start(thread_time);
    let mut eval_seconds = 0.0;
    loop {
        let mut error: Option<Error> = None;
        let result = fit_wrapper_with_grams(
            train,
            set.kernels.clone(),
            &set.grams,
            &wc,
            resume.take(),
            &(),
            &mut |step, solve| {
                let t = JobClock::start(thread_time);
                let epochs = passes0 + step.passes;
                let seconds = start.elapsed() - eval_seconds;
                let st = &solve.state;
                let accuracy = if epochs <= cfg.epochs as f64 + 1e-9 {
                    let group = KernelGroup {
                        name: method.name().into(),
                        components: st.weights.iter().copied().enumerate().collect(),
                    };
                    match state_accuracy(
                        &st.online,
                        &set.kernels,
                        std::slice::from_ref(&group),
                        &train.x,
                        curve,
                        &cfg.memory,
                    ) {
                        Ok(a) => a,
                        Err(e) => {
                            error = Some(e);
                            return Control::Stop;
                        }
                    }
                } else {
                    f64::NAN
                };
                points.push(Point {
                    epochs,
                    seconds,
                    objective: st.mkl_objective(lambda),
                    own_objective: step.objective,
                    accuracy,
                    weights: step.weights.clone(),
                });
                eval_seconds += t.elapsed();
                if epochs >= total as f64 {
                    Control::Stop
                } else {
                    Control::Continue
                }
            },
        );
        if let Some(e) = error {
            return Err(e);
        }
        let (_, result) = result?;
        let passes = result.steps.last().map_or(0.0, |s| s.passes);
        if passes0 + passes >= total as f64 || passes == 0.0 {
            break;
        }
        // Stopped on its own criterion: restart where it stopped.
        stops.push(format!(
            "{} at {} epochs",
            result.run.status.describe(),
            passes0 + passes
        ));
        passes0 += passes;
        wc.wrapper.start = Some(result.weights.clone());
        resume = Some(result.solve.state);
    }
    let restarts = if stops.is_empty() {
        String::new()
    } else {
        let shown: Vec<&str> = stops.iter().take(3).map(String::as_str).collect();
        format!(
            "; restarted {} times after its own stop ({}{})",
            stops.len(),
            shown.join(", "),
            if stops.len() > 3 { ", ..." } else { "" }
        )
    };
    Ok(MethodRun {
        method: method.name().into(),
        status: format!(
            "{} epochs{restarts}",
            points.last().map_or(0.0, |p| p.epochs)
        ),
        points,
    })
}

fn fmt_opt(v: f64, digits: usize) -> String {
    if v.is_finite() {
        format!("{v:.digits$}")
    } else {
        String::new()
    }
}

/// CSV per method (every point of the long run; accuracy empty beyond the figure's epochs),
/// the objective against epochs and seconds (relative to the optimum, log scale), the
/// accuracy against epochs, and the long runs' objective.
fn write_outputs(dir: &Path, runs: &[MethodRun], optimum: f64, cfg: &WrappersConfig) -> Result<()> {
    let budget = cfg.epochs as f64;
    for r in runs {
        let mut header = vec![
            "epochs".to_string(),
            "seconds".into(),
            "objective".into(),
            "relative_excess".into(),
            "own_objective".into(),
            "char_accuracy".into(),
        ];
        header.extend(["L", "Q", "G"].iter().map(|k| format!("weight_{k}")));
        let rows: Vec<Vec<String>> = r
            .points
            .iter()
            .map(|p| {
                let mut row = vec![
                    format!("{}", p.epochs),
                    format!("{:.4}", p.seconds),
                    format!("{:.8}", p.objective),
                    format!("{:.6e}", relative_excess(p.objective, optimum)),
                    format!("{:.8}", p.own_objective),
                    fmt_opt(p.accuracy, 6),
                ];
                row.extend(p.weights.iter().map(|w| format!("{w:.6}")));
                row
            })
            .collect();
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        multikernel::io::write_csv(&dir.join(format!("wrappers-{}.csv", r.method)), &h, &rows)?;
    }
    let series = |x: &dyn Fn(&Point) -> f64, y: &dyn Fn(&Point) -> f64, all: bool| -> Vec<Series> {
        runs.iter()
            .map(|r| Series {
                name: r.method.clone(),
                points: r
                    .points
                    .iter()
                    .filter(|p| all || p.epochs <= budget + 1e-9)
                    .map(|p| (x(p), y(p)))
                    .collect(),
            })
            .collect()
    };
    let excess = |p: &Point| relative_excess(p.objective, optimum);
    let plots = [
        (
            "wrappers-objective-epochs.svg",
            LinePlot {
                title: format!(
                    "OCR, C = {}: objective vs passes over the data (Figure 2)",
                    cfg.c
                ),
                x_label: "epochs (passes over the data)".into(),
                y_label: "(objective - optimum) / optimum".into(),
                log_x: false,
                log_y: true,
                series: series(&|p| p.epochs, &excess, false),
            },
        ),
        (
            "wrappers-objective-seconds.svg",
            LinePlot {
                title: format!("OCR, C = {}: objective vs training seconds", cfg.c),
                x_label: "training seconds (Gram matrices and evaluations excluded)".into(),
                y_label: "(objective - optimum) / optimum".into(),
                log_x: false,
                log_y: true,
                series: series(&|p| p.seconds, &excess, false),
            },
        ),
        (
            "wrappers-accuracy-epochs.svg",
            LinePlot {
                title: format!("OCR, C = {}: test accuracy vs passes over the data", cfg.c),
                x_label: "epochs (passes over the data)".into(),
                y_label: "per-character test accuracy (%)".into(),
                log_x: false,
                log_y: false,
                series: series(&|p| p.epochs, &|p| 100.0 * p.accuracy, false),
            },
        ),
        (
            "wrappers-objective-long.svg",
            LinePlot {
                title: format!(
                    "OCR, C = {}: objective over the whole runs (the optimum's)",
                    cfg.c
                ),
                x_label: "epochs (passes over the data)".into(),
                y_label: "(objective - optimum) / optimum".into(),
                log_x: true,
                log_y: true,
                series: series(&|p| p.epochs, &excess, true),
            },
        ),
    ];
    for (file, plot) in plots {
        multikernel::io::write_atomic(&dir.join(file), plot.to_svg().as_bytes())?;
    }
    Ok(())
}

/// What the runs are measured against.
struct Reference {
    /// The best objective of the long runs, and which run and epoch gave it.
    optimum: f64,
    from: String,
    /// The objective at zero parameters (where every method starts).
    start: f64,
    /// Epochs of each run.
    total: usize,
}

/// Rows and the printed table.
fn report(
    runs: &[MethodRun],
    reference: Reference,
    eta0: f64,
    lambda: f64,
    gram_seconds: f64,
    cfg: &WrappersConfig,
) -> Report {
    let Reference {
        optimum,
        from,
        start,
        total,
    } = reference;
    let budget = cfg.epochs as f64;
    let mut table = format!(
        "OCR fold {} (Martins et al. 2011, Figure 2): C = {}, kernels L + Q + G, SPOM eta0 {eta0}, \
         wrappers with PEGASOS {} then {} warm epochs; optimum {optimum:.6} = best of runs of \
         {total} epochs ({from}); objective at zero {start:.4}; Gram matrices \
         {gram_seconds:.2} s (not counted)\n\n\
         | method | epochs to 1% of the optimum | to 10% | to 99% of the decrease from zero | \
         objective at {} epochs | above the optimum | accuracy at {} epochs | \
         training s at {} epochs | end of the run |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        cfg.fold,
        cfg.c,
        cfg.first_epochs,
        cfg.warm_epochs,
        cfg.epochs,
        cfg.epochs,
        cfg.epochs,
    );
    let value = |p: Option<&Point>| -> Value {
        match p {
            Some(p) => Value::from(p.epochs),
            None => Value::from("not reached"),
        }
    };
    let text = |p: Option<&Point>| -> String {
        match p {
            Some(p) if p.epochs <= budget + 1e-9 => format!("{}", p.epochs),
            Some(p) => format!("{} (beyond {})", p.epochs, cfg.epochs),
            None => format!("not reached in {total}"),
        }
    };
    let mut rows = Vec::new();
    for r in runs {
        let at = r.at(budget);
        let reached = r.reached(optimum);
        let ten = r.first_within(optimum, optimum.abs(), 0.1);
        let decrease = r.first_within(optimum, start - optimum, REACHED);
        let acc = at.map_or(f64::NAN, |p| p.accuracy);
        let mut row = Row::from_values(
            "ocr",
            &r.method,
            "char_accuracy",
            &if acc.is_finite() { vec![acc] } else { vec![] },
        );
        row.train_seconds = at.map(|p| p.seconds);
        let names = ["L", "Q", "G"];
        if let Some(p) = at {
            row.weights = Some(
                names
                    .iter()
                    .zip(&p.weights)
                    .map(|(n, w)| (n.to_string(), Value::from(*w)))
                    .collect(),
            );
        }
        let obj = at.map_or(f64::NAN, |p| p.objective);
        row = row
            .with("epochs_to_1pct", value(reached))
            .with("seconds_to_1pct", reached.map(|p| p.seconds))
            .with("epochs_to_10pct", value(ten))
            .with("epochs_to_99pct_of_decrease", value(decrease))
            .with("seconds_to_99pct_of_decrease", decrease.map(|p| p.seconds))
            .with("objective_at_zero", start)
            .with("objective", at.map(|p| p.objective))
            .with(
                "relative_excess",
                at.map(|p| relative_excess(p.objective, optimum)),
            )
            .with("epochs_at_budget", at.map(|p| p.epochs))
            .with("budget_epochs", cfg.epochs)
            .with("run_epochs", r.points.last().map(|p| p.epochs))
            .with("run_objective", r.points.last().map(|p| p.objective))
            .with("status", r.status.clone())
            .with("optimum", optimum)
            .with("optimum_from", from.clone())
            .with("optimum_epochs", total)
            .with("C", cfg.c)
            .with("lambda", lambda)
            .with("fold", cfg.fold)
            .with("curve_words", cfg.curve_words);
        if r.method == "spom" {
            row = row.with("eta0", eta0);
        } else {
            row = row
                .with("first_epochs", cfg.first_epochs)
                .with("warm_epochs", cfg.warm_epochs);
        }
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.method,
            text(reached),
            text(ten),
            text(decrease),
            fmt_opt(obj, 6),
            at.map_or(String::new(), |p| format!(
                "{:.2}%",
                100.0 * relative_excess(p.objective, optimum)
            )),
            fmt_opt(100.0 * acc, 2),
            at.map_or(String::new(), |p| format!("{:.1}", p.seconds)),
            r.status,
        ));
        rows.push(row);
    }
    table.push_str(
        "\nThe paper: SPOM approaches the optimum within 20-30 passes, the wrappers need about 100.\n",
    );
    Report {
        experiment: "wrappers".into(),
        rows,
        table,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multikernel::data::ocr::synthetic_words;

    /// A small synthetic OCR file: 2 folds of short words over 4 letters.
    fn synthetic() -> SequenceData {
        synthetic_words(50, 2, 0.1)
    }

    /// The whole pipeline on a tiny set: three runs, the optimum their best point, the
    /// epochs counted as the protocol says, the outputs written.
    #[test]
    fn runs_on_synthetic_words() {
        let data = synthetic();
        let dir = tempfile::tempdir().unwrap();
        let cfg = WrappersConfig {
            c: 10.0,
            epochs: 12,
            optimum_epochs: 30,
            first_epochs: 4,
            warm_epochs: 2,
            curve_words: 0,
            out_dir: Some(dir.path().to_path_buf()),
            ..WrappersConfig::default()
        };
        let mut lines = Vec::new();
        let rep = run_on(&data, &cfg, &mut |l| lines.push(l.to_string())).unwrap();
        assert_eq!(rep.rows.len(), 3);
        let optimum = rep.rows[0].extra["optimum"].as_f64().unwrap();
        for r in &rep.rows {
            assert!(r.mean.unwrap() > 0.8, "{}: {:?}", r.method, r.mean);
            assert_eq!(r.extra["optimum"].as_f64().unwrap(), optimum);
            assert!(r.extra["objective"].as_f64().unwrap() >= optimum);
            assert!(r.extra["epochs_at_budget"].as_f64().unwrap() <= 12.0);
            let w = r.weights.as_ref().unwrap();
            let total: f64 = w.values().map(|v| v.as_f64().unwrap()).sum();
            assert!((total - 1.0).abs() < 1e-9, "{}: {w:?}", r.method);
        }
        for m in METHODS {
            let csv =
                std::fs::read_to_string(dir.path().join(format!("wrappers-{m}.csv"))).unwrap();
            let lines: Vec<&str> = csv.lines().collect();
            assert!(lines.len() > 3, "{m}");
            // Epochs grow along the run; the first wrapper point is its cold solve.
            let epochs: Vec<f64> = lines[1..]
                .iter()
                .map(|l| l.split(',').next().unwrap().parse().unwrap())
                .collect();
            assert!(epochs.windows(2).all(|w| w[0] < w[1]), "{m}: {epochs:?}");
            assert_eq!(epochs[0], if m == "spom" { 1.0 } else { 4.0 });
            assert!(*epochs.last().unwrap() >= 30.0, "{m}: {epochs:?}");
        }
        for f in [
            "wrappers-objective-epochs.svg",
            "wrappers-objective-seconds.svg",
            "wrappers-accuracy-epochs.svg",
            "wrappers-objective-long.svg",
        ] {
            assert!(dir.path().join(f).exists(), "{f}");
        }
        assert!(rep.table.contains("| simplemkl |"));
        assert!(rep.to_json().contains("\"epochs_to_1pct\""));
        let cfg = WrappersConfig {
            methods: Some(vec!["spom".into(), "lbfgs".into()]),
            ..cfg
        };
        assert!(run_on(&data, &cfg, &mut |_| {}).is_err());
    }
}
