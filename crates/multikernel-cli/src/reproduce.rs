//! `multikernel reproduce ...` and `multikernel demo`: wiring to the library's experiments.

use crate::cli::{
    DemoArgs, GompArgs, MirrorDescentArgs, OcrArgs, ReproduceCommand, ReproduceCommon, UciArgs,
};
use anyhow::{bail, Result};
use multikernel::data::{read_table, TargetKind};
use multikernel::reproduce::uci::{self, UciConfig, UciTable};
use multikernel::reproduce::Report;
use multikernel::task::TaskKind;
use std::path::Path;

pub fn run(cmd: &ReproduceCommand) -> Result<()> {
    match cmd {
        ReproduceCommand::Uci(a) => reproduce_uci(a),
        ReproduceCommand::Ocr(a) => reproduce_ocr(a),
        ReproduceCommand::Gomp(a) => reproduce_gomp(a),
        ReproduceCommand::MirrorDescent(a) => reproduce_mirror_descent(a),
    }
}

fn reproduce_mirror_descent(a: &MirrorDescentArgs) -> Result<()> {
    use multikernel::reproduce::mirror_descent::{self, MirrorDescentConfig};
    let tables = mirror_descent::load_tables(&a.data_dir)?;
    let mut cfg = if a.quick {
        MirrorDescentConfig::quick(tables)
    } else {
        MirrorDescentConfig::full(tables)
    };
    let mut figures = [false; 3];
    for &f in &a.figures {
        match f {
            1..=3 => figures[f - 1] = true,
            _ => bail!("--figures takes 1, 2 or 3, got {f}"),
        }
    }
    cfg.figures = figures;
    if let Some(s) = a.seconds {
        if !(s.is_finite() && s > 0.0) {
            bail!("--seconds must be positive, got {s}");
        }
        cfg.fig1_seconds = s;
    }
    if let Some(r) = &a.r {
        if r.contains(&0) {
            bail!("--r takes positive input dimensions");
        }
        cfg.fig2_r = r.clone();
    }
    if !(a.memory_limit_gb.is_finite() && a.memory_limit_gb > 0.0) {
        bail!(
            "--memory-limit-gb must be positive, got {}",
            a.memory_limit_gb
        );
    }
    cfg.lp_memory = multikernel::kernel::MemoryLimit::gib(a.memory_limit_gb);
    if let Some(reps) = a.reps {
        if reps == 0 {
            bail!("--reps must be at least 1");
        }
        cfg.fig2_reps = reps;
        cfg.fig3_reps = reps;
    }
    cfg.seed = a.seed;
    cfg.out_dir = a.common.out_dir.clone();
    let report = mirror_descent::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

fn reproduce_ocr(a: &OcrArgs) -> Result<()> {
    use multikernel::reproduce::ocr::{self, OcrConfig};
    let cfg = OcrConfig {
        data: a.data.clone(),
        folds: multikernel::data::ocr::parse_folds(&a.folds)?,
        epochs: a.epochs,
        cv: a.cv,
        out_dir: a.common.out_dir.clone(),
        methods: a
            .methods
            .as_ref()
            .map(|m| m.split(',').map(|s| s.trim().to_string()).collect()),
        loss: a.loss.parse()?,
        ..OcrConfig::default()
    };
    if let Some(d) = &cfg.out_dir {
        multikernel::io::create_dir(d)?;
    }
    let report = ocr::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

fn reproduce_gomp(a: &GompArgs) -> Result<()> {
    use multikernel::reproduce::gomp::{self, GompConfig};
    let glass = if a.glass.exists() {
        Some(read_table(&a.glass, None, TargetKind::Classes, None, None)?)
    } else {
        eprintln!("{} not found: glass skipped", a.glass.display());
        None
    };
    let cfg = GompConfig {
        reps: a.reps,
        seed: a.seed,
        glass,
        out_dir: a.common.out_dir.clone(),
        ..GompConfig::default()
    };
    if let Some(d) = &cfg.out_dir {
        multikernel::io::create_dir(d)?;
    }
    let report = gomp::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

/// Prints the table and writes the JSON rows where asked.
fn finish(report: &Report, common: &ReproduceCommon) -> Result<()> {
    println!("{}", report.table);
    if let Some(path) = &common.json {
        multikernel::io::write_atomic(path, report.to_json().as_bytes())?;
        eprintln!("rows written to {}", path.display());
    }
    Ok(())
}

/// The UCI tables of `reproduce uci`: (file stem, task).
pub const UCI_TABLES: [(&str, TaskKind); 5] = [
    ("sonar", TaskKind::Binary),
    ("ionosphere", TaskKind::Binary),
    ("breast-cancer", TaskKind::Binary),
    ("pima-diabetes", TaskKind::Binary),
    ("boston-housing", TaskKind::Regression),
];

pub fn load_uci(dir: &Path, names: Option<&str>) -> Result<Vec<UciTable>> {
    let wanted: Option<Vec<&str>> = names.map(|s| s.split(',').map(str::trim).collect());
    if let Some(w) = &wanted {
        for n in w {
            if !UCI_TABLES.iter().any(|(t, _)| t == n) {
                bail!(
                    "unknown data set '{n}': expected one of {}",
                    UCI_TABLES.map(|t| t.0).join(", ")
                );
            }
        }
    }
    let mut out = Vec::new();
    for (name, task) in UCI_TABLES {
        if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        let target = if task == TaskKind::Regression {
            TargetKind::Real
        } else {
            TargetKind::Classes
        };
        let data = read_table(&dir.join(format!("{name}.csv")), None, target, None, None)?;
        out.push(UciTable {
            name: name.to_string(),
            data,
            task,
        });
    }
    Ok(out)
}

fn reproduce_uci(a: &UciArgs) -> Result<()> {
    let tables = load_uci(&a.data_dir, a.datasets.as_deref())?;
    let d = UciConfig::default();
    let cfg = UciConfig {
        splits: a.splits,
        epochs: a.epochs,
        seed: a.seed,
        averaging: a.average,
        try_inv: !a.no_inv,
        c_grid: a.c_grid.clone().unwrap_or(d.c_grid.clone()),
        eta0_grid: a.eta0_grid.clone().unwrap_or(d.eta0_grid.clone()),
        ..d
    };
    eprintln!(
        "reproduce uci: {} splits, C from {:?}, step rule from {:?} by {}-fold validation",
        cfg.splits,
        cfg.c_grid,
        cfg.step_rules(),
        cfg.folds
    );
    let report = uci::run(&tables, &cfg, &|line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

pub fn demo(a: &DemoArgs) -> Result<()> {
    if a.uci {
        return demo_uci(a);
    }
    crate::sequence::demo(&a.data_dir)
}

/// The small demo: sparse MKL on ionosphere.
fn demo_uci(a: &DemoArgs) -> Result<()> {
    use multikernel::kernel::{KernelSpec, MemoryLimit};
    use multikernel::prox::RegSpec;
    use multikernel::solver::online::vector::{fit_vector, VectorFitConfig};
    use multikernel::solver::online::{OnlineParams, StepSchedule};
    let tables = load_uci(&a.data_dir.join("uci"), Some("ionosphere"))?;
    let t = &tables[0];
    let y = match &t.data.targets {
        multikernel::data::Targets::Classes { y, .. } => y.clone(),
        _ => bail!("ionosphere has class labels"),
    };
    let (tr, te) = multikernel::data::split::stratified_split(&y, 0.7, 1);
    let train = t.data.select(&tr);
    let test = t.data.select(&te);
    println!(
        "demo: sparse MKL (squared l2,1, online proximal Alg. 1) on ionosphere, {} train / {} test rows",
        train.len(),
        test.len()
    );
    let kernels: Vec<KernelSpec> = [
        "linear:norm=trace",
        "poly:degree=2,offset=1,norm=trace",
        "rbf:norm=trace",
    ]
    .iter()
    .map(|s| s.parse())
    .collect::<multikernel::Result<_>>()?;
    let cfg = VectorFitConfig {
        task: TaskKind::Binary,
        loss: multikernel::task::Loss::Hinge,
        kernels,
        params: OnlineParams {
            lambda: 1.0 / (10.0 * train.len() as f64),
            reg: RegSpec::L21Sq,
            eta0: 1.0,
            schedule: StepSchedule::InvSqrt,
            epochs: 20,
            seed: 0,
            averaging: false,
            projection: true,
            shuffle: true,
        },
        bias: true,
        standardize: true,
        memory: MemoryLimit::default(),
    };
    let (model, _) = fit_vector(&train, &cfg, &|p: &multikernel::run::Progress| {
        println!(
            "epoch {:>2}  objective {:.5}",
            p.step,
            p.objective.unwrap_or(f64::NAN)
        );
        multikernel::run::Control::Continue
    })?;
    let acc = uci::score(&model, &test)?;
    println!("kernel weights:");
    for (name, w) in model.kernel_weights() {
        println!("  {w:.4}  {name}");
    }
    println!("accuracy {acc:.4}");
    Ok(())
}
