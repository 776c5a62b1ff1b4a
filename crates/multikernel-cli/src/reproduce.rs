//! `multikernel reproduce ...` and `multikernel demo`: wiring to the library's experiments.

use crate::cli::{
    DemoArgs, GenerateArgs, GompReproArgs, MirrorDescentArgs, MtlReproArgs, OcrArgs, ParsingArgs,
    ReproduceCommand, ReproduceCommon, UciArgs, WrappersArgs,
};
use anyhow::{bail, Result};
use multikernel::data::{read_table, TargetKind};
use multikernel::reproduce::tables::load_uci;
use multikernel::reproduce::uci::{self, UciConfig};
use multikernel::reproduce::Report;
use multikernel::run::{Control, Progress};

pub fn run(cmd: &ReproduceCommand) -> Result<()> {
    match cmd {
        ReproduceCommand::Uci(a) => reproduce_uci(a),
        ReproduceCommand::Ocr(a) => reproduce_ocr(a),
        ReproduceCommand::Gomp(a) => reproduce_gomp(a),
        ReproduceCommand::MirrorDescent(a) => reproduce_mirror_descent(a),
        ReproduceCommand::Parsing(a) => reproduce_parsing(a),
        ReproduceCommand::Mtl(a) => reproduce_mtl(a),
        ReproduceCommand::Wrappers(a) => reproduce_wrappers(a),
    }
}

fn reproduce_wrappers(a: &WrappersArgs) -> Result<()> {
    use multikernel::reproduce::wrappers::{self, WrappersConfig};
    if a.epochs == 0 || a.first_epochs == 0 || a.warm_epochs == 0 {
        bail!("--epochs, --first-epochs and --warm-epochs must be at least 1");
    }
    let cfg = WrappersConfig {
        data: a.data.clone(),
        fold: a.fold,
        c: a.c,
        epochs: a.epochs,
        optimum_epochs: a.optimum_epochs,
        first_epochs: a.first_epochs,
        warm_epochs: a.warm_epochs,
        spom_eta0: a.spom_eta0,
        curve_words: a.curve_words,
        seed: a.seed,
        methods: a.methods.clone(),
        out_dir: a.common.out_dir.clone(),
        ..WrappersConfig::default()
    };
    let report = wrappers::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

fn reproduce_mtl(a: &MtlReproArgs) -> Result<()> {
    use multikernel::reproduce::mtl::{self, MtlConfig};
    if a.epochs == 0 || a.max_iter == 0 {
        bail!("--epochs and --max-iter must be at least 1");
    }
    if !(a.eps.is_finite() && a.eps > 0.0) {
        bail!("--eps must be a positive number, got {}", a.eps);
    }
    let cfg = MtlConfig {
        data_dir: a.data_dir.clone(),
        template_dir: a.template_dir.clone(),
        template_sets: a.template_sets.clone(),
        methods: a.methods.clone(),
        parsing: a.parsing,
        epsilon: a.eps,
        max_iter: a.max_iter,
        epochs: a.epochs,
        cv: a.cv,
        seed: a.seed,
        out_dir: a.common.out_dir.clone(),
        schedule: a.spom_schedule,
        eta0: a.spom_eta0.clone(),
        calibration_epochs: a.spom_calibration_epochs,
        average_from: a.spom_average_from,
        lbfgs_redundant: a.crf_lbfgs_redundant,
    };
    if let Some(e) = a
        .spom_eta0
        .iter()
        .find(|e| !(e.is_finite() && **e > 0.0))
        .or(a.spom_eta0.is_empty().then_some(&f64::NAN))
    {
        bail!("--spom-eta0 must be positive numbers, got {e}");
    }
    if a.spom_calibration_epochs == 0 {
        bail!("--spom-calibration-epochs must be at least 1");
    }
    if let Some(d) = &cfg.out_dir {
        multikernel::io::create_dir(d)?;
    }
    let report = mtl::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
}

fn reproduce_parsing(a: &ParsingArgs) -> Result<()> {
    use multikernel::reproduce::parsing::{self, ParsingConfig};
    use multikernel::task::parse::TemplateSet;
    if a.epochs == 0 {
        bail!("--epochs must be at least 1");
    }
    let cfg = ParsingConfig {
        data_dir: a.data_dir.clone(),
        datasets: a.datasets.clone(),
        methods: a.methods.clone(),
        epochs: a.epochs,
        cv: a.cv,
        templates: match &a.templates {
            Some(p) => TemplateSet::read(p)?,
            None => TemplateSet::default_set(),
        },
        seed: a.seed,
        support: match a.support.as_str() {
            "gold" => multikernel::task::parse::Support::Gold,
            "all" => multikernel::task::parse::Support::All,
            s => bail!("--support takes gold or all, got '{s}'"),
        },
        out_dir: a.common.out_dir.clone(),
    };
    if let Some(d) = &cfg.out_dir {
        multikernel::io::create_dir(d)?;
    }
    for d in &cfg.datasets {
        if d != "web" && d != "wiki" {
            bail!("--datasets takes web and wiki, got '{d}'");
        }
    }
    let report = parsing::run(&cfg, &mut |line| eprintln!("{line}"))?;
    finish(&report, &a.common)
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

fn reproduce_gomp(a: &GompReproArgs) -> Result<()> {
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
        methods: a.methods.clone(),
        ..d
    };
    if let Some(m) = cfg.methods.iter().flatten().find(|m| {
        !uci::methods().iter().any(|(n, _, _)| n == m)
            && !uci::SELECTED_METHODS.contains(&m.as_str())
    }) {
        anyhow::bail!(
            "--methods: unknown row '{m}' (accepted: linear, poly2, rbf, average, mkl-l21sq, \
             mkl-l2q, auto, single-cv)"
        );
    }
    if let Some(dir) = &a.common.out_dir {
        write_uci_splits(dir, &tables, &cfg)?;
    }
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

/// `DIR/uci-splits.json` and `DIR/data/NAME.csv`: every table as CSV (the generated ones
/// too) and the rows of each split, so that a peer's script trains on exactly the same rows
/// (benches/peers/sklearn_svm).
fn write_uci_splits(
    dir: &std::path::Path,
    tables: &[multikernel::reproduce::uci::UciTable],
    cfg: &UciConfig,
) -> Result<()> {
    use serde_json::json;
    let data_dir = dir.join("data");
    std::fs::create_dir_all(&data_dir)?;
    let mut out = Vec::new();
    for t in tables {
        let file = data_dir.join(format!("{}.csv", t.name));
        multikernel::io::write_atomic(&file, multikernel::data::to_csv(&t.data).as_bytes())?;
        let splits: Vec<serde_json::Value> = (0..cfg.splits)
            .map(|s| {
                let (train, test) = uci::split_rows(t, s, cfg);
                json!({"train": train, "test": test})
            })
            .collect();
        out.push(json!({
            "name": t.name,
            "task": multikernel::estimator::Task::from(t.task).to_string(),
            "file": format!("data/{}.csv", t.name),
            "splits": splits,
        }));
    }
    let text = serde_json::to_string(&json!({"seed": cfg.seed, "tables": out}))?;
    multikernel::io::write_atomic(&dir.join("uci-splits.json"), text.as_bytes())?;
    eprintln!("tables and splits written to {}", dir.display());
    Ok(())
}

pub fn demo(a: &DemoArgs) -> Result<()> {
    use multikernel::reproduce::demo;
    if a.uci {
        let epoch = |p: &Progress| {
            println!(
                "epoch {:>2}  objective {:.5}",
                p.step,
                p.objective.unwrap_or(f64::NAN)
            );
            Control::Continue
        };
        println!(
            "demo: sparse MKL (squared l2,1, online proximal Alg. 1) on ionosphere, 70/30 split"
        );
        let d = demo::uci_demo(&a.data_dir, &epoch)?;
        println!(
            "{} train / {} test rows; kernel weights:",
            d.train_rows, d.test_rows
        );
        for (name, w) in &d.weights {
            println!("  {w:.4}  {name}");
        }
        println!("accuracy {:.4}", d.accuracy);
        return Ok(());
    }
    let (spec, _) = demo::ocr_demo_spec()?;
    println!(
        "demo: SPOM sparse MKL (squared l2,1) over linear, quadratic and Gaussian kernels on OCR \
         fold 0; {}",
        spec.kernels
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let bar = crate::observe::Bar::new();
    let d = demo::ocr_demo(&a.data_dir, &bar)?;
    bar.finish();
    println!(
        "trained on {} words, {} characters in {:.1} s (C = {}, eta0 = {}, {} epochs); kernel \
         weights:",
        d.train_words, d.train_chars, d.seconds, d.c, d.eta0, d.epochs
    );
    for (name, w) in &d.weights {
        println!("  {w:.4}  {name}");
    }
    println!(
        "test: folds 1-9, {} words, {} characters (paper, Table 1: {})",
        d.test_words, d.test_chars, d.paper
    );
    println!("char_accuracy {:.4}", d.accuracy);
    Ok(())
}

/// Rows per chunk of `multikernel generate`: 65,536 ringnorm rows are 10 MB of values and
/// about 26 MB of CSV text, the most the command holds at once whatever `--n`.
const GENERATE_CHUNK: usize = 65_536;

/// `multikernel generate`: a generated data set written as CSV, drawn and written a chunk of
/// rows at a time (memory bounded by one chunk) into a temporary file renamed over `--out` at
/// the end, so that `--out` is whole or absent. The rows are those of the in-memory generator
/// (`synthetic::generate`) for the same seeds.
pub fn generate(a: &GenerateArgs) -> Result<()> {
    let chunks = multikernel::data::synthetic::generate_chunks(
        &a.dataset,
        a.n,
        a.r,
        a.problem_seed,
        a.seed,
        GENERATE_CHUNK,
    )?;
    if let Some(t) = chunks.target() {
        eprintln!("target: {t}");
    }
    let features = chunks.n_features();
    let mut out = multikernel::io::AtomicWriter::create(&a.out)?;
    let rows = chunks.write_csv(|text| out.write_all(text.as_bytes()))?;
    out.commit()?;
    eprintln!(
        "wrote {rows} points x {features} features to {}",
        a.out.display()
    );
    Ok(())
}
