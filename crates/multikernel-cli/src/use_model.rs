//! `eval`, `predict` and `inspect`: load a model, read data the way the model expects it,
//! print.

use crate::cli::{ConvertArgs, EvalArgs, InspectArgs, PredictArgs, ScoreArgs};
use crate::data::{read_sequences, read_treebank, table_format};
use anyhow::{bail, Result};
use multikernel::data::conllu::Heads;
use multikernel::data::{ModelStream, Targets};
use multikernel::io::AtomicWriter;
use multikernel::kernel::MemoryLimit;
use multikernel::model::{Model, ScoreAccumulator};
use multikernel::solver::online::parser::ParserModel;
use multikernel::solver::tagging::TaggerModel;
use std::path::Path;

/// A stream of the rows of `data` for `model`, matched to its columns by name (the whole
/// file is never in memory: chunks of `--chunk-rows` rows).
fn stream_for(model: &Model, data: &crate::cli::DataArgs) -> Result<ModelStream> {
    let Some(schema) = model.schema() else {
        bail!("a {} model does not read tables", model.task_name());
    };
    Ok(ModelStream::open(
        &data.data,
        table_format(&data.format)?,
        &schema,
    )?)
}

/// `--chunk-rows`, checked.
fn chunk_rows(n: usize) -> Result<usize> {
    if n == 0 {
        bail!("--chunk-rows 0: expected at least 1");
    }
    Ok(n)
}

/// One line per prediction: the class name, or the value.
fn prediction_lines(pred: &Targets, out: &mut String) {
    use std::fmt::Write;
    match pred {
        Targets::Classes { classes, y } => {
            for &c in y {
                out.push_str(&classes[c]);
                out.push('\n');
            }
        }
        Targets::Real(v) => {
            for x in v {
                let _ = writeln!(out, "{x}");
            }
        }
    }
}

/// A treebank's sentences (the given folds) as read, as the parser sees them, and the
/// parser's heads and relations for them.
type Parsed = (
    Vec<multikernel::data::conllu::ConlluSentence>,
    Vec<multikernel::task::parse::ParseSentence>,
    Vec<Vec<usize>>,
    Option<Vec<Vec<String>>>,
);

fn parse_treebank(
    m: &ParserModel,
    data: &crate::cli::DataArgs,
    folds: Option<&str>,
    heads: Heads,
) -> Result<Parsed> {
    use multikernel::task::parse::ParseSentence;
    let input = read_treebank(data, folds, heads)?;
    let sentences: Vec<ParseSentence> = input.iter().map(ParseSentence::from).collect();
    let heads = m.parse(&sentences)?;
    let rels = m.label(&sentences, &heads);
    Ok((input, sentences, heads, rels))
}

/// Attachment scores of a parser on a treebank: counts first, `uas` last (percentages,
/// punctuation excluded).
fn eval_parser(m: &ParserModel, a: &EvalArgs) -> Result<()> {
    use multikernel::task::parse::{score_parses, ParseSentence};
    let (_, sentences, heads, rels) =
        parse_treebank(m, &a.data, a.test_folds.as_deref(), Heads::Required)?;
    let c = score_parses(&sentences, &heads, rels.as_deref());
    let sc = c.scores(rels.is_some());
    let mut out = format!(
        "sentences {}\ntokens {}\nscored {}\n",
        sentences.len(),
        sentences.iter().map(ParseSentence::len).sum::<usize>(),
        c.tokens
    );
    if let Some(las) = sc.las {
        out.push_str(&format!("las {las:.2}\n"));
    }
    if let Some(v) = sc.uas_no_ig {
        out.push_str(&format!("uas_no_ig {v:.2}\n"));
    }
    out.push_str(&format!("uas {:.2}\n", sc.uas));
    crate::emit(&out);
    Ok(())
}

/// The input sentences as CoNLL-U with HEAD and DEPREL filled by the parser.
fn predict_parser(m: &ParserModel, a: &PredictArgs) -> Result<String> {
    use multikernel::data::conllu::write_sentence;
    let (input, _, heads, rels) =
        parse_treebank(m, &a.data, a.test_folds.as_deref(), Heads::Optional)?;
    let mut out = String::new();
    for (i, (s, h)) in input.iter().zip(&heads).enumerate() {
        write_sentence(s, h, rels.as_ref().map(|r| r[i].as_slice()), &mut out);
    }
    Ok(out)
}

/// Sentences in the column format for a tagger (`--format columns` or none).
fn read_tagged(
    data: &crate::cli::DataArgs,
) -> Result<Vec<multikernel::data::columns::ColumnSentence>> {
    match data.format.as_deref() {
        None | Some("columns") => {}
        Some(f) => bail!("a template tagger reads --format columns, not '{f}'"),
    }
    Ok(multikernel::data::columns::read_columns(&data.data)?.sentences)
}

/// Token accuracy and, for chunk labels, conlleval's chunk precision, recall and F1
/// (percent); the last line is `f1 X` for chunk labels, `accuracy X` otherwise.
fn eval_tagger(m: &TaggerModel, a: &EvalArgs) -> Result<()> {
    use multikernel::task::tagging::is_chunk_scheme;
    if a.test_folds.is_some() {
        bail!("--test-folds selects folds of OCR data or a treebank; a column file is used whole");
    }
    let sentences = read_tagged(&a.data)?;
    let need = m.featurizer.n_columns + 1;
    if let Some(s) = sentences.iter().find(|s| s.tokens[0].len() < need) {
        bail!(
            "{}:{}: {} columns; eval needs the model's {} observation columns and the label",
            a.data.data.display(),
            s.line,
            s.tokens[0].len(),
            need - 1
        );
    }
    let (sc, unseen) = m.evaluate(&sentences)?;
    if unseen > 0 {
        eprintln!(
            "warning: {unseen} tokens have a label the model never saw in training; they count \
             as wrong"
        );
    }
    let mut out = format!(
        "sentences {}\ntokens {}\nunseen_labels {unseen}\n",
        sentences.len(),
        sc.tokens
    );
    out.push_str(&tag_scores(&sc, is_chunk_scheme(&m.featurizer.labels)));
    crate::emit(&out);
    Ok(())
}

/// `score`: conlleval on the last two columns (gold, predicted).
pub fn score(a: &ScoreArgs) -> Result<()> {
    use multikernel::task::tagging::{is_chunk_scheme, TagScores};
    let d = multikernel::data::columns::read_columns(&a.data)?;
    if d.n_columns < 2 {
        bail!(
            "{}: {} column; score needs the gold and the predicted label as the last two",
            a.data.display(),
            d.n_columns
        );
    }
    let k = d.n_columns;
    let gold: Vec<Vec<&[u8]>> = d.sentences.iter().map(|s| s.column(k - 2)).collect();
    let pred: Vec<Vec<&[u8]>> = d.sentences.iter().map(|s| s.column(k - 1)).collect();
    let mut labels: Vec<&[u8]> = gold.iter().chain(&pred).flatten().copied().collect();
    labels.sort_unstable();
    labels.dedup();
    let sc = TagScores::of(&gold, &pred);
    let mut out = format!("sentences {}\ntokens {}\n", d.sentences.len(), sc.tokens);
    out.push_str(&tag_scores(&sc, is_chunk_scheme(&labels)));
    crate::emit(&out);
    Ok(())
}

/// Accuracy and, for chunk labels, chunk counts, precision, recall and F1 (percent).
fn tag_scores(sc: &multikernel::task::tagging::TagScores, chunks: bool) -> String {
    let mut out = String::new();
    if chunks {
        let c = sc.chunks;
        out.push_str(&format!(
            "accuracy {:.2}\nchunks_gold {}\nchunks_found {}\nchunks_correct {}\n\
             precision {:.2}\nrecall {:.2}\nf1 {:.2}\n",
            100.0 * sc.accuracy(),
            c.gold,
            c.predicted,
            c.correct,
            100.0 * c.precision(),
            100.0 * c.recall(),
            100.0 * c.f1()
        ));
    } else {
        out.push_str(&format!("accuracy {:.2}\n", 100.0 * sc.accuracy()));
    }
    out
}

/// The input columns with the predicted label appended (as `crf_test` prints them), as
/// bytes: the columns are the input's, in its encoding. With `--marginals` (CRF loss
/// only), CRF++'s `-v1` / `-v2` layout.
fn predict_tagger(m: &TaggerModel, a: &PredictArgs) -> Result<Vec<u8>> {
    use multikernel::data::columns::write_with_predictions;
    if a.test_folds.is_some() {
        bail!("--test-folds selects folds of OCR data or a treebank; a column file is used whole");
    }
    let sentences = read_tagged(&a.data)?;
    let mut out = Vec::new();
    match a.marginals {
        None => write_with_predictions(&mut out, &sentences, &m.tag(&sentences)?)?,
        Some(level) => {
            let marg = m
                .marginals(&sentences)
                .map_err(|e| anyhow::anyhow!("{}: --marginals: {e}", a.model.display()))?;
            write_marginals(&mut out, m, &sentences, &marg, level);
        }
    }
    Ok(out)
}

/// CRF++'s `crf_test -v1` / `-v2` output: `# P(best sequence)`, then each token's columns
/// and `label/P(label)` separated by tabs (`-v2`: then every label's `label/P`), a blank line
/// after each sentence. Probabilities are printed in full (shortest round-trip decimal),
/// where CRF++ prints 6 significant digits.
fn write_marginals(
    out: &mut Vec<u8>,
    m: &TaggerModel,
    sentences: &[multikernel::data::columns::ColumnSentence],
    marg: &[multikernel::solver::tagging::SentenceMarginals],
    level: u8,
) {
    let labels = &m.featurizer.labels;
    let l = labels.len();
    for (s, g) in sentences.iter().zip(marg) {
        out.extend_from_slice(format!("# {}\n", g.sequence).as_bytes());
        for (i, tok) in s.tokens.iter().enumerate() {
            for c in tok {
                out.extend_from_slice(c);
                out.push(b'\t');
            }
            let p = &g.token[i * l..(i + 1) * l];
            out.extend_from_slice(&labels[g.best[i]]);
            out.extend_from_slice(format!("/{}", p[g.best[i]]).as_bytes());
            if level >= 2 {
                for (y, py) in labels.iter().zip(p) {
                    out.push(b'\t');
                    out.extend_from_slice(y);
                    out.extend_from_slice(format!("/{py}").as_bytes());
                }
            }
            out.push(b'\n');
        }
        out.push(b'\n');
    }
}

/// `convert`: a CoNLL-U treebank as tagging columns.
pub fn convert(a: &ConvertArgs) -> Result<()> {
    use multikernel::data::columns::write_columns;
    use multikernel::task::tagging::convert::{from_conllu, LabelColumn};
    let label: LabelColumn = a.label.parse()?;
    let args = crate::cli::DataArgs {
        data: a.data.clone(),
        format: None,
    };
    let sentences = read_treebank(&args, a.folds.as_deref(), Heads::Optional)?;
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
    if a.out == Path::new("-") {
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
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let model = Model::load(&a.model)?;
    if let Model::Parser(m) = &model {
        return eval_parser(m, a);
    }
    if let Model::Tagger(m) = &model {
        return eval_tagger(m, a);
    }
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
    // A table, chunk by chunk: the same score as the whole file at once.
    let chunk = chunk_rows(a.chunk_rows)?;
    let mut stream = stream_for(&model, &a.data)?;
    let mut acc = ScoreAccumulator::new(&model);
    while let Some(rows) = stream.next_chunk(chunk)? {
        let Some(targets) = rows.targets else {
            bail!(
                "{}: no target column; eval needs the labels (predict works without them)",
                a.data.data.display()
            );
        };
        acc.push(rows.x.view(), &targets, &limit)?;
    }
    let s = acc.finish();
    crate::emit(&format!("n {}\n{} {:.4}\n", s.n, s.metric, s.value));
    Ok(())
}

pub fn predict(a: &PredictArgs) -> Result<()> {
    let limit = MemoryLimit::gib(a.memory_limit_gb);
    let model = Model::load(&a.model)?;
    if a.marginals.is_some() && !matches!(model, Model::Tagger(_)) {
        bail!(
            "--marginals prints the label probabilities of a sequence tagger trained with the \
             CRF loss; {} is a {} model",
            a.model.display(),
            model.task_name()
        );
    }
    let out = if let Model::Parser(m) = &model {
        predict_parser(m, a)?.into_bytes()
    } else if let Model::Tagger(m) = &model {
        predict_tagger(m, a)?
    } else if let Model::Sequence(m) = &model {
        let test = read_sequences(&a.data, a.test_folds.as_deref())?;
        let pred = m.predict_names(&test.x, &test.spans, &limit)?;
        sequence_lines(&pred).into_bytes()
    } else {
        return predict_table(&model, a, &limit);
    };
    match &a.out {
        Some(path) if path != Path::new("-") => multikernel::io::write_atomic(path, &out)?,
        _ => crate::emit_bytes(&out),
    }
    Ok(())
}

/// Predictions of a table model, chunk by chunk (memory: one chunk of rows and its lines).
/// A file (`--out`) is written through a temporary file renamed over it at the end, so a
/// malformed row leaves no output and an older file as it was; standard output gets each
/// chunk's lines once the chunk is predicted, so a malformed row stops the output after
/// the chunks before it (a file of at most one chunk prints nothing).
fn predict_table(model: &Model, a: &PredictArgs, limit: &MemoryLimit) -> Result<()> {
    let chunk = chunk_rows(a.chunk_rows)?;
    let mut writer = match &a.out {
        Some(path) if path != Path::new("-") => Some(AtomicWriter::create(path)?),
        _ => None,
    };
    let mut stream = stream_for(model, &a.data)?;
    let mut lines = String::new();
    model.predict_stream(&mut stream, chunk, limit, |pred| {
        lines.clear();
        prediction_lines(&pred, &mut lines);
        match writer.as_mut() {
            Some(w) => w.write_all(lines.as_bytes()),
            None => {
                crate::emit(&lines);
                Ok(())
            }
        }
    })?;
    if let Some(w) = writer {
        w.commit()?;
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
