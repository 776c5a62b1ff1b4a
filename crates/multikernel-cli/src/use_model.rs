//! `eval`, `predict` and `inspect`: load a model, read data the way the model expects it,
//! print.

use crate::cli::{EvalArgs, InspectArgs, PredictArgs};
use crate::data::{read_sequences, table_format};
use anyhow::{bail, Result};
use multikernel::data::{read_for_model, ModelRows, Targets};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use multikernel::solver::online::sequence_model::char_accuracy;
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
        let pred = m.predict_words(&test.x, &test.words, &limit)?;
        crate::emit(&format!(
            "words {}\ncharacters {}\nchar_accuracy {:.4}\n",
            test.n_words(),
            test.n_chars(),
            char_accuracy(&pred, &test)
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
        for w in m.predict_ocr(&test, &limit)? {
            out.push_str(&w);
            out.push('\n');
        }
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
