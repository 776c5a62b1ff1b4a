//! `eval`, `predict`, `inspect`, `score` and `convert`: load a model, let the library read
//! the data the way the model expects it ([`multikernel::estimator::apply`]), print.

use crate::cli::{ConvertArgs, EvalArgs, InspectArgs, PredictArgs, ScoreArgs};
use crate::data::file_source;
use anyhow::{bail, Result};
use multikernel::data::conllu::Heads;
use multikernel::estimator::{ApplyOptions, FileSource};
use multikernel::io::AtomicWriter;
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;

/// `score`: conlleval on the last two columns (gold, predicted).
pub fn score(a: &ScoreArgs) -> Result<()> {
    crate::emit(&multikernel::estimator::score_columns(&a.data)?.to_string());
    Ok(())
}

/// `convert`: a CoNLL-U treebank as tagging columns.
pub fn convert(a: &ConvertArgs) -> Result<()> {
    use multikernel::data::columns::write_columns;
    use multikernel::estimator::tagger::{from_conllu, LabelColumn};
    let label: LabelColumn = a.label.parse()?;
    multikernel::io::check_outputs(&[("--out", &a.out)], &[("--data", &a.data)])?;
    let sentences = FileSource::new(&a.data)
        .with_folds(a.folds.clone())
        .read_treebank(Heads::Optional)?;
    let encoding = crate::data::ascii_compatible_encoding(&a.encoding)?;
    let columns = from_conllu(&sentences, label);
    let mut out = Vec::new();
    for s in &columns {
        let mut text = Vec::new();
        write_columns(&mut text, std::slice::from_ref(s))?;
        let text = std::str::from_utf8(&text)?;
        let (bytes, _, unmappable) = encoding.encode(text);
        if unmappable {
            // Name the first such character (this path runs once, on the way out).
            let c = text
                .chars()
                .find(|c| encoding.encode(&c.to_string()).2)
                .unwrap_or('\u{fffd}');
            bail!(
                "{}:{}: the sentence has a character that {} cannot encode: U+{:04X} '{}' \
                 (the form lowercased, column 1, may hold one the treebank does not: \
                 'I' with a dot lowercases to 'i' and U+0307)",
                a.data.display(),
                s.line,
                encoding.name(),
                c as u32,
                c
            );
        }
        out.extend_from_slice(&bytes);
    }
    if multikernel::io::is_stdout(&a.out) {
        crate::emit_bytes(&out);
    } else {
        multikernel::io::write_atomic(&a.out, &out)?;
        eprintln!(
            "wrote {} sentences, {} tokens to {}",
            columns.len(),
            columns.iter().map(|s| s.len()).sum::<usize>(),
            a.out.display()
        );
    }
    Ok(())
}

pub fn eval(a: &EvalArgs) -> Result<()> {
    let model = Model::load(&a.model)?;
    let opts = ApplyOptions {
        memory: MemoryLimit::try_gib(a.memory_limit_gb)?,
        chunk_rows: a.chunk_rows,
        marginals: None,
    };
    let e = multikernel::estimator::evaluate(&model, &file_source(&a.data, &a.test_folds)?, &opts)?;
    for w in e.warnings() {
        eprintln!("warning: {w}");
    }
    crate::emit(&e.to_string());
    Ok(())
}

/// Predictions, written to `--out` through a temporary file renamed over it at the end (a
/// malformed row leaves no output and an older file as it was), or to standard output, a
/// device or a FIFO as they come (a table's chunk by chunk: a malformed row stops the output
/// after the chunks before it). An `--out` that is the model or the data is refused first.
pub fn predict(a: &PredictArgs) -> Result<()> {
    if let Some(out) = &a.out {
        multikernel::io::check_outputs(
            &[("--out", out)],
            &[("--model", &a.model), ("--data", &a.data.data)],
        )?;
    }
    let model = Model::load(&a.model)?;
    if a.marginals.is_some() && !matches!(model, Model::Tagger(_)) {
        bail!(
            "--marginals prints the label probabilities of a sequence tagger trained with the \
             CRF loss; {} is a {} model",
            a.model.display(),
            model.task_name()
        );
    }
    let opts = ApplyOptions {
        memory: MemoryLimit::try_gib(a.memory_limit_gb)?,
        chunk_rows: a.chunk_rows,
        marginals: a.marginals,
    };
    let source = file_source(&a.data, &a.test_folds)?;
    let mut writer = match &a.out {
        Some(path) if !multikernel::io::is_stdout(path) => Some(AtomicWriter::create(path)?),
        _ => None,
    };
    multikernel::estimator::predict(&model, &source, &opts, |bytes| match writer.as_mut() {
        Some(w) => w.write_all(bytes),
        None => {
            crate::emit_bytes(bytes);
            Ok(())
        }
    })?;
    if let Some(w) = writer {
        w.commit()?;
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
