//! The subcommands: parse flags into library configurations, call the library, print.

use crate::cli::{EvalArgs, InspectArgs, PredictArgs, TrainArgs};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use multikernel::data::{read_table, Format, TargetKind};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel::model::{self, AnyModel};
use multikernel::prox::RegSpec;
use multikernel::run::{Control, Progress};
use multikernel::solver::online::vector::{fit_vector, VectorFitConfig};
use multikernel::solver::online::vector_model::KernelMachine;
use multikernel::solver::online::{OnlineParams, StepSchedule};
use multikernel::task::vector::default_loss;
use multikernel::task::Loss;
use multikernel::task::{prediction_metric, Prediction, TaskKind};
use std::io::Write;
use std::path::Path;

/// Parses `--format`.
pub fn parse_format(f: &Option<String>) -> Result<Option<Format>> {
    f.as_deref()
        .map(|s| s.parse::<Format>().map_err(anyhow::Error::from))
        .transpose()
}

pub fn parse_kernels(specs: &[String], default: &str) -> Result<Vec<KernelSpec>> {
    let list: Vec<&str> = if specs.is_empty() {
        vec![default]
    } else {
        specs.iter().map(|s| s.as_str()).collect()
    };
    list.iter()
        .map(|s| {
            s.parse::<KernelSpec>()
                .with_context(|| format!("--kernel {s}"))
        })
        .collect()
}

/// The online learner's parameters (Alg. 1 / SPOM) from the `train` flags.
pub fn online_params(a: &TrainArgs, lambda: f64, reg: RegSpec) -> Result<OnlineParams> {
    Ok(OnlineParams {
        lambda,
        reg,
        eta0: a.eta0,
        schedule: parse_schedule(&a.schedule)?,
        epochs: a.epochs,
        seed: a.seed,
        averaging: a.average,
        projection: !a.no_projection,
        shuffle: true,
    })
}

pub fn parse_schedule(s: &str) -> Result<StepSchedule> {
    Ok(match s {
        "sqrt" => StepSchedule::InvSqrt,
        "const" | "constant" => StepSchedule::Constant,
        "inv" => StepSchedule::Inv { sigma: None },
        _ => bail!("unknown --schedule '{s}': expected sqrt, const or inv"),
    })
}

/// lambda from `--C` or `--lambda` (C = 1 / (lambda N)); default C = 1.
pub fn lambda_from(c: Option<f64>, lambda: Option<f64>, n: usize) -> Result<f64> {
    match (c, lambda) {
        (_, Some(l)) if !(l.is_finite() && l > 0.0) => bail!("--lambda must be positive, got {l}"),
        (_, Some(l)) => Ok(l),
        (Some(c), None) if !(c.is_finite() && c > 0.0) => bail!("--C must be positive, got {c}"),
        (Some(c), None) => Ok(1.0 / (c * n as f64)),
        (None, None) => Ok(1.0 / n as f64),
    }
}

fn progress(epochs: usize) -> ProgressBar {
    let pb = ProgressBar::new(epochs as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} epoch {pos}/{len} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

pub fn train(a: &TrainArgs) -> Result<()> {
    if a.task == "sequence" {
        return crate::sequence::train(a);
    }
    let task: TaskKind = a.task.parse()?;
    let format = parse_format(&a.data.format)?;
    let target = if task == TaskKind::Regression {
        TargetKind::Real
    } else {
        TargetKind::Classes
    };
    let data = read_table(&a.data.data, format, target, None, None)?;
    match a.algo.as_str() {
        "online" => train_online(a, task, data),
        "gomp" | "lp-mkl" | "mirror-descent" | "ucd" => crate::batch::train(a, task, data),
        other => {
            bail!("unknown --algo '{other}': expected online, gomp, lp-mkl, mirror-descent or ucd")
        }
    }
}

fn train_online(a: &TrainArgs, task: TaskKind, data: multikernel::data::Dataset) -> Result<()> {
    let kernels = parse_kernels(&a.kernels, "rbf")?;
    let reg: RegSpec = match &a.reg {
        Some(r) => r.parse()?,
        None if kernels.len() > 1 || kernels.iter().any(|k| k.perfeature) => RegSpec::L21Sq,
        None => RegSpec::L2,
    };
    let loss = match &a.loss {
        Some(l) => l.parse::<Loss>()?,
        None => default_loss(task),
    };
    let params = online_params(a, lambda_from(a.c, a.lambda, data.len())?, reg)?;
    let cfg = VectorFitConfig {
        task,
        loss,
        kernels,
        params,
        bias: !a.no_bias,
        standardize: !a.no_standardize,
        memory: MemoryLimit::gib(a.memory_limit_gb),
    };
    let pb = progress(a.epochs);
    let (model, _) = fit_vector(&data, &cfg, &|p: &Progress| {
        pb.set_message(format!("objective {:.5}", p.objective.unwrap_or(f64::NAN)));
        pb.inc(1);
        Control::Continue
    })?;
    pb.finish_and_clear();
    let obj = model.training["final_objective"]
        .as_f64()
        .unwrap_or(f64::NAN);
    model::save(&a.out, &AnyModel::KernelMachine(model.clone()))?;
    eprintln!(
        "trained on {} rows, {} kernels, {} support points; objective {obj:.6}; model written to {}",
        data.len(),
        model.kernels.len(),
        model.support.rows,
        a.out.display()
    );
    print_weights(&model.kernel_weights());
    Ok(())
}

fn print_weights(w: &[(String, f64)]) {
    let shown = w.len().min(40);
    for (name, weight) in &w[..shown] {
        println!("  {weight:>8.4}  {name}");
    }
    if w.len() > shown {
        println!("  ... {} more kernels", w.len() - shown);
    }
}

fn load_machine(path: &Path) -> Result<AnyModel> {
    Ok(model::load(path)?)
}

fn read_for_machine(
    m: &KernelMachine,
    data: &crate::cli::DataArgs,
) -> Result<multikernel::data::Dataset> {
    let format = parse_format(&data.format)?;
    let (target, classes) = match m.task {
        TaskKind::Regression => (TargetKind::Real, None),
        _ => (TargetKind::Classes, Some(m.classes.as_slice())),
    };
    let ds = read_table(
        &data.data,
        format,
        target,
        classes,
        Some(m.feature_names.len()),
    )?;
    if ds.n_features() != m.feature_names.len() {
        bail!(
            "{}: {} features, the model was trained on {}",
            data.data.display(),
            ds.n_features(),
            m.feature_names.len()
        );
    }
    Ok(ds)
}

pub fn eval(a: &EvalArgs) -> Result<()> {
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    match load_machine(&a.model)? {
        AnyModel::KernelMachine(m) => {
            let ds = read_for_machine(&m, &a.data)?;
            let pred = m.predict(&ds.x, &limit)?;
            let (name, value) = prediction_metric(&pred, &ds.targets);
            println!("n {}", ds.len());
            println!("{name} {value:.4}");
        }
        AnyModel::Sequence(m) => {
            crate::sequence::eval(&m, &a.data, a.test_folds.as_deref(), &limit)?;
        }
        AnyModel::Gomp(m) => crate::batch::eval(&m, &a.data, &limit)?,
        AnyModel::LpMkl(m) => crate::batch::eval(&m, &a.data, &limit)?,
        AnyModel::PolyMkl(m) => crate::batch::eval(&m, &a.data, &limit)?,
    }
    Ok(())
}

pub fn predict(a: &PredictArgs) -> Result<()> {
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let mut out = String::new();
    match load_machine(&a.model)? {
        AnyModel::KernelMachine(m) => {
            let ds = read_for_machine(&m, &a.data)?;
            for p in m.predict(&ds.x, &limit)? {
                match p {
                    Prediction::Class(c) => out.push_str(&m.classes[c]),
                    Prediction::Value(v) => out.push_str(&format!("{v}")),
                }
                out.push('\n');
            }
        }
        AnyModel::Sequence(m) => {
            out = crate::sequence::predict(&m, &a.data, a.test_folds.as_deref(), &limit)?;
        }
        AnyModel::Gomp(m) => out = crate::batch::predict(&m, &a.data, &limit)?,
        AnyModel::LpMkl(m) => out = crate::batch::predict(&m, &a.data, &limit)?,
        AnyModel::PolyMkl(m) => out = crate::batch::predict(&m, &a.data, &limit)?,
    }
    match &a.out {
        Some(path) => multikernel::io::write_atomic(path, out.as_bytes())?,
        None => std::io::stdout().write_all(out.as_bytes())?,
    }
    Ok(())
}

pub fn inspect(a: &InspectArgs) -> Result<()> {
    match load_machine(&a.model)? {
        AnyModel::KernelMachine(m) => {
            println!(
                "kind: online proximal MKL (Alg. 1), task {:?}, loss {}",
                m.task, m.loss
            );
            println!("training: {}", m.training);
            if !m.classes.is_empty() {
                println!("classes: {}", m.classes.join(", "));
            }
            println!(
                "support points: {}, kernels: {} ({} with weight 0)",
                m.support.rows,
                m.kernels.len(),
                m.weights.iter().filter(|w| **w == 0.0).count()
            );
            println!("  {:>8}  {:>10}  kernel", "weight", "norm");
            for ((k, w), n) in m.kernels.iter().zip(&m.weights).zip(&m.group_norms) {
                println!("  {w:>8.4}  {n:>10.4e}  {}", k.name);
            }
        }
        AnyModel::Sequence(m) => crate::sequence::inspect(&m),
        AnyModel::Gomp(m) => crate::batch::inspect_gomp(&m),
        AnyModel::LpMkl(m) => crate::batch::inspect_lp(&m),
        AnyModel::PolyMkl(m) => crate::batch::inspect_poly(&m),
    }
    Ok(())
}
