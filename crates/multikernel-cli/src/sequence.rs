//! `--task sequence`: SPOM (Alg. 3) on the OCR words, and the OCR demo.

use crate::cli::{DataArgs, TrainArgs};
use crate::commands::{lambda_from, online_params, parse_kernels};
use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use multikernel::data::ocr::{parse_folds, read_ocr};
use multikernel::data::SequenceData;
use multikernel::kernel::MemoryLimit;
use multikernel::model::{self, AnyModel};
use multikernel::prox::RegSpec;
use multikernel::solver::online::sequence::{fit_sequence, SequenceFitConfig};
use multikernel::solver::online::sequence_model::SequenceModel;
use multikernel::solver::online::OnlineParams;

/// Reads the OCR file and keeps the given folds (all when `folds` is None).
pub fn read_folds(data: &DataArgs, folds: Option<&str>) -> Result<SequenceData> {
    match data.format.as_deref() {
        None | Some("ocr") => {}
        Some(f) => bail!("--task sequence reads --format ocr (Taskar's letter.data), not '{f}'"),
    }
    let all = read_ocr(&data.data)?;
    Ok(match folds {
        Some(list) => {
            let f = parse_folds(list)?;
            let d = all.select_folds(&f);
            if d.n_sequences() == 0 {
                bail!("{}: no words in folds {list}", data.data.display());
            }
            d
        }
        None => all,
    })
}

pub fn train(a: &TrainArgs) -> Result<()> {
    if a.algo != "online" {
        bail!(
            "--task sequence is learned by --algo online (SPOM), not '{}'",
            a.algo
        );
    }
    let train = read_folds(&a.data, a.train_folds.as_deref())?;
    let kernels = parse_kernels(&a.kernels, "linear:norm=diag")?;
    let reg: RegSpec = match &a.reg {
        Some(r) => r.parse()?,
        None if kernels.len() > 1 => RegSpec::L21Sq,
        None => RegSpec::L2,
    };
    let loss = a.loss.as_deref().unwrap_or("hinge").parse()?;
    let params = online_params(a, lambda_from(a.c, a.lambda, train.n_sequences())?, reg)?;
    let cfg = SequenceFitConfig {
        loss,
        kernels,
        average: false,
        learn_beta0: a.learn_beta0,
        params,
        memory: MemoryLimit::gib(a.memory_limit_gb),
    };
    let m = fit_with_progress(&train, &cfg)?;
    model::save(&a.out, &AnyModel::Sequence(m.clone()))?;
    eprintln!(
        "trained on {} words / {} characters; model written to {}",
        train.n_sequences(),
        train.n_positions(),
        a.out.display()
    );
    for (name, w) in m.kernel_weights() {
        println!("  {w:>8.4}  {name}");
    }
    Ok(())
}

fn fit_with_progress(train: &SequenceData, cfg: &SequenceFitConfig) -> Result<SequenceModel> {
    let pb = ProgressBar::new(cfg.params.epochs as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} epoch {pos}/{len} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (m, _) = fit_sequence(train, cfg, &|p: &multikernel::run::Progress| {
        pb.set_message(format!("objective {:.4}", p.objective.unwrap_or(f64::NAN)));
        pb.inc(1);
        multikernel::run::Control::Continue
    })?;
    pb.finish_and_clear();
    Ok(m)
}

pub fn eval(
    m: &SequenceModel,
    data: &DataArgs,
    folds: Option<&str>,
    limit: &MemoryLimit,
) -> Result<()> {
    let test = read_folds(data, folds)?;
    let acc = m.token_accuracy(&test, limit)?;
    println!("words {}", test.n_sequences());
    println!("characters {}", test.n_positions());
    println!("char_accuracy {acc:.4}");
    Ok(())
}

pub fn predict(
    m: &SequenceModel,
    data: &DataArgs,
    folds: Option<&str>,
    limit: &MemoryLimit,
) -> Result<String> {
    let test = read_folds(data, folds)?;
    let mut out = String::new();
    for w in m.predict_names(&test.x, &test.spans, limit)? {
        out.push_str(&w.concat());
        out.push('\n');
    }
    Ok(out)
}

pub fn inspect(m: &SequenceModel) {
    println!("kind: SPOM on sequences (Alg. 3), loss {}", m.loss);
    println!("training: {}", m.training);
    println!(
        "labels: {}, support characters: {}",
        m.labels.len(),
        m.support.rows
    );
    println!("  {:>8}  {:>10}  group", "weight", "norm");
    for ((name, w), n) in m.weight_names.iter().zip(&m.weights).zip(&m.group_norms) {
        println!("  {w:>8.4}  {n:>10.4e}  {name}");
    }
}

/// The demo: sparse MKL over L, Q and G on OCR fold 0, tested on folds 1-9.
pub fn demo(data_dir: &std::path::Path) -> Result<()> {
    use multikernel::reproduce::ocr::methods;
    let path = data_dir.join("ocr/letter.data.gz");
    let all = read_ocr(&path)?;
    let train = all.select_folds(&[0]);
    let test = all.exclude_folds(&[0]);
    let method = methods()
        .into_iter()
        .find(|m| m.name == "mkl-lqg")
        .ok_or_else(|| anyhow::anyhow!("mkl-lqg row missing"))?;
    println!(
        "demo: SPOM sparse MKL (squared l2,1) over linear, quadratic and Gaussian kernels on OCR \
         fold 0 ({} words, {} characters); C = {}, eta0 = {}, 20 epochs",
        train.n_sequences(),
        train.n_positions(),
        method.c,
        method.eta0
    );
    let cfg = SequenceFitConfig {
        loss: multikernel::task::sequence::SeqLoss::Hinge,
        kernels: method
            .kernels
            .iter()
            .map(|k| k.spec().parse())
            .collect::<multikernel::Result<_>>()?,
        average: false,
        learn_beta0: false,
        params: OnlineParams {
            lambda: 1.0 / (method.c * train.n_sequences() as f64),
            reg: method.reg(),
            eta0: method.eta0,
            epochs: 20,
            seed: 1,
            ..OnlineParams::default()
        },
        memory: MemoryLimit::default(),
    };
    let start = std::time::Instant::now();
    let m = fit_with_progress(&train, &cfg)?;
    println!(
        "trained in {:.1} s; kernel weights:",
        start.elapsed().as_secs_f64()
    );
    for (name, w) in m.kernel_weights() {
        println!("  {w:.4}  {name}");
    }
    let acc = m.token_accuracy(&test, &MemoryLimit::default())?;
    println!(
        "test: folds 1-9, {} words, {} characters (paper, Table 1: 87.5)",
        test.n_sequences(),
        test.n_positions()
    );
    println!("char_accuracy {acc:.4}");
    Ok(())
}
