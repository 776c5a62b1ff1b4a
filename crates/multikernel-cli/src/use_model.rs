//! `eval`, `predict` and `inspect`: load a model, read data the way the model expects it,
//! print.

use crate::cli::{EvalArgs, InspectArgs, PredictArgs};
use crate::data::{read_sequences, table_format};
use anyhow::{bail, Result};
use multikernel::data::{read_for_model, ModelRows, Targets};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::Path;

/// Rows of `data` for `model`, matched to its columns by name.
fn rows_for(model: &Model, data: &crate::cli::DataArgs) -> Result<ModelRows> {
    let Some(schema) = model.schema() else {
        bail!("a sequence model reads sequences");
    };
    Ok(read_for_model(
        &data.data,
        table_format(&data.format)?,
        &schema,
    )?)
}

pub fn eval(a: &EvalArgs) -> Result<()> {
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let model = Model::load(&a.model)?;
    if let Model::Sequence(m) = &model {
        let test = read_sequences(&a.data, a.test_folds.as_deref())?;
        let acc = m.token_accuracy(&test, &limit)?;
        crate::emit(&format!(
            "sequences {}\npositions {}\ntoken_accuracy {acc:.4}\n",
            test.n_sequences(),
            test.n_positions(),
        ));
        return Ok(());
    }
    let rows = rows_for(&model, &a.data)?;
    let Some(targets) = rows.targets else {
        bail!(
            "{}: no target column; eval needs the labels (predict works without them)",
            a.data.data.display()
        );
    };
    let s = model.score_with(rows.x.view(), &targets, &limit)?;
    crate::emit(&format!("n {}\n{} {:.4}\n", s.n, s.metric, s.value));
    Ok(())
}

pub fn predict(a: &PredictArgs) -> Result<()> {
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let model = Model::load(&a.model)?;
    let mut out = String::new();
    if let Model::Sequence(m) = &model {
        let test = read_sequences(&a.data, a.test_folds.as_deref())?;
        let pred = m.predict_names(&test.x, &test.spans, &limit)?;
        out = sequence_lines(&pred);
    } else {
        let rows = rows_for(&model, &a.data)?;
        match model.predict_with(rows.x.view(), &limit)? {
            Targets::Classes { classes, y } => {
                for c in y {
                    out.push_str(&classes[c]);
                    out.push('\n');
                }
            }
            Targets::Real(v) => {
                for x in v {
                    out.push_str(&format!("{x}\n"));
                }
            }
        }
    }
    match &a.out {
        Some(path) if path != Path::new("-") => {
            multikernel::io::write_atomic(path, out.as_bytes())?
        }
        _ => crate::emit(&out),
    }
    Ok(())
}

/// One line per sequence: its labels joined by spaces, or spelled out as a word when every
/// label is one character (OCR letters).
fn sequence_lines(pred: &[Vec<String>]) -> String {
    let letters = pred.iter().flatten().all(|l| l.chars().count() == 1);
    let mut out = String::new();
    for p in pred {
        out.push_str(&p.join(if letters { "" } else { " " }));
        out.push('\n');
    }
    out
}

pub fn inspect(a: &InspectArgs) -> Result<()> {
    let model = Model::load(&a.model)?;
    let s = model.summary();
    crate::emit(&if a.all {
        format!("{s:#}")
    } else {
        s.to_string()
    });
    Ok(())
}
