//! `multikernel reproduce ...`, `demo` and `generate`: the experiments crate runs the
//! experiment ([`Reproduction::run`]: the options, their flags and checks are that crate's),
//! this prints.

use crate::cli::{DemoArgs, GenerateArgs};
use anyhow::{bail, Result};
use multikernel::run::{Control, Progress};
use multikernel_experiments::options::Reproduction;
use std::path::Path;

/// Runs the reproduction, prints its table and writes its JSON rows where asked.
pub fn run(r: &Reproduction) -> Result<()> {
    check_json(r)?;
    let log = |line: &str| eprintln!("{line}");
    let report = r.run(&log)?;
    r.output()
        .finish(&report, &mut std::io::stdout().lock(), &log)?;
    Ok(())
}

/// `--json`, before the run: a file (standard output gets the table) that can be written and
/// is none of the files the experiment reads, nor a file in one of the folders it reads.
fn check_json(r: &Reproduction) -> Result<()> {
    let Some(json) = &r.output().json else {
        return Ok(());
    };
    if multikernel::io::is_stdout(json) {
        bail!("--json -: standard output gets the table; give --json a file name");
    }
    let flags: Vec<(String, &Path)> = r
        .inputs()
        .into_iter()
        .map(|(name, path)| (crate::errors::flag_of(name), path))
        .collect();
    let inputs: Vec<(&str, &Path)> = flags.iter().map(|(f, p)| (f.as_str(), *p)).collect();
    Ok(multikernel::io::check_outputs(
        &[("--json", json)],
        &inputs,
    )?)
}

pub fn demo(a: &DemoArgs) -> Result<()> {
    use multikernel_experiments::demo;
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
/// the end, so that `--out` is whole or absent (a device or a FIFO is written in place, `-`
/// is standard output). The rows are those of the in-memory generator
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
    if multikernel::io::is_stdout(&a.out) {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let rows = chunks.write_csv(|text| {
            stdout
                .write_all(text.as_bytes())
                .map_err(|source| multikernel::Error::Io {
                    path: "<standard output>".into(),
                    source,
                })
        })?;
        stdout.flush()?;
        eprintln!("wrote {rows} points x {features} features to standard output");
        return Ok(());
    }
    multikernel::io::check_outputs(&[("--out", &a.out)], &[])?;
    let mut out = multikernel::io::AtomicWriter::create(&a.out)?;
    let rows = chunks.write_csv(|text| out.write_all(text.as_bytes()))?;
    out.commit()?;
    eprintln!(
        "wrote {rows} points x {features} features to {}",
        a.out.display()
    );
    Ok(())
}
