//! A model on a data file: [`evaluate`] and [`predict`] read the file the way the model
//! expects it (the same choice for every shell): a table chunk by chunk, matched to the
//! model's columns by name ([`crate::data::ModelStream`]: the file is never whole in
//! memory); OCR sequences for a sequence model; CoNLL-U sentences for a parser; sentences
//! in CRF++ columns for a template tagger.
//!
//! The text forms are those of `multikernel eval` / `predict`: one `NAME VALUE` per line,
//! the headline metric last; one prediction per line (a class name or a value); a word per
//! line for OCR (labels joined); CoNLL-U with HEAD and DEPREL filled; the input columns with
//! the label appended, as CRF++'s `crf_test` writes them (`-v1` / `-v2` with probabilities).

use super::source::FileSource;
use crate::data::columns::{read_columns, write_with_predictions, ColumnSentence};
use crate::data::conllu::{write_sentence, Heads};
use crate::data::{ModelStream, Targets};
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::model::{Model, Score, ScoreAccumulator};
use crate::pipeline::columns::tagging::{SentenceMarginals, TaggerModel};
use crate::task::parse::{score_parses, AttachmentScores, ParseSentence};
use crate::task::tagging::{is_chunk_scheme, TagScores};
use std::fmt::{self, Write as _};
use std::path::Path;

/// How a model reads a file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApplyOptions {
    /// Refuse allocations above this.
    pub memory: MemoryLimit,
    /// Tables: rows read at a time (the score and the predictions do not depend on it).
    pub chunk_rows: usize,
    /// Taggers trained with the CRF loss: label probabilities, CRF++'s `-v1` (1: the
    /// sentence's and each best label's) or `-v2` (2: every label's too).
    pub marginals: Option<u8>,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            memory: MemoryLimit::default(),
            chunk_rows: crate::data::model_stream::DEFAULT_CHUNK_ROWS,
            marginals: None,
        }
    }
}

impl ApplyOptions {
    fn chunk_rows(&self) -> Result<usize> {
        if self.chunk_rows == 0 {
            return Err(Error::param("chunk_rows", 0, "at least 1"));
        }
        Ok(self.chunk_rows)
    }
}

/// A model's scores on a labelled file; its `Display` is one `NAME VALUE` per line, the
/// headline metric last.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Evaluation {
    /// A table: accuracy (a fraction) or the mean squared error.
    Table(Score),
    /// OCR sequences: the fraction of positions labelled right.
    Sequences {
        sequences: usize,
        positions: usize,
        token_accuracy: f64,
    },
    /// A parser: attachment scores (percent, punctuation excluded) over `scores.tokens`
    /// scored tokens.
    Parser {
        sentences: usize,
        tokens: usize,
        scores: AttachmentScores,
    },
    /// A tagger (or predicted columns): token accuracy and, for chunk labels (B-/I-/O),
    /// conlleval's chunk counts; `unseen`: gold labels the model never saw (counted wrong).
    Tags {
        sentences: usize,
        unseen: Option<usize>,
        scores: TagScores,
        chunks: bool,
    },
}

impl Evaluation {
    /// Warnings a user should see beside the scores.
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Evaluation::Tags {
                unseen: Some(u), ..
            } if *u > 0 => vec![format!(
                "{u} tokens have a label the model never saw in training; they count as wrong"
            )],
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for Evaluation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Evaluation::Table(s) => writeln!(f, "n {}\n{} {:.4}", s.n, s.metric, s.value),
            Evaluation::Sequences {
                sequences,
                positions,
                token_accuracy,
            } => writeln!(
                f,
                "sequences {sequences}\npositions {positions}\ntoken_accuracy {token_accuracy:.4}"
            ),
            Evaluation::Parser {
                sentences,
                tokens,
                scores,
            } => {
                writeln!(
                    f,
                    "sentences {sentences}\ntokens {tokens}\nscored {}",
                    scores.tokens
                )?;
                if let Some(las) = scores.las {
                    writeln!(f, "las {las:.2}")?;
                }
                if let Some(v) = scores.uas_no_ig {
                    writeln!(f, "uas_no_ig {v:.2}")?;
                }
                writeln!(f, "uas {:.2}", scores.uas)
            }
            Evaluation::Tags {
                sentences,
                unseen,
                scores,
                chunks,
            } => {
                writeln!(f, "sentences {sentences}\ntokens {}", scores.tokens)?;
                if let Some(u) = unseen {
                    writeln!(f, "unseen_labels {u}")?;
                }
                writeln!(f, "accuracy {:.2}", 100.0 * scores.accuracy())?;
                if *chunks {
                    let c = scores.chunks;
                    write!(
                        f,
                        "chunks_gold {}\nchunks_found {}\nchunks_correct {}\nprecision {:.2}\n\
                         recall {:.2}\nf1 {:.2}\n",
                        c.gold,
                        c.predicted,
                        c.correct,
                        100.0 * c.precision(),
                        100.0 * c.recall(),
                        100.0 * c.f1()
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// A stream of the rows of `source` for `model`, matched to its columns by name.
fn table_stream(model: &Model, source: &FileSource) -> Result<ModelStream> {
    let Some(schema) = model.schema() else {
        return Err(Error::unsupported(format!(
            "a {} model does not read tables",
            model.task_name()
        )));
    };
    if source.folds.is_some() {
        return Err(Error::unsupported(
            "folds select OCR sequences or treebank sentences; a table is used whole",
        ));
    }
    ModelStream::open(&source.path, source.table_format()?, &schema)
}

/// Scores `model` on the labelled file `source` (module docs: which reader).
pub fn evaluate(model: &Model, source: &FileSource, opts: &ApplyOptions) -> Result<Evaluation> {
    match model {
        Model::Parser(m) => {
            let input = source.read_treebank(Heads::Required)?;
            let sentences: Vec<ParseSentence> = input.iter().map(ParseSentence::from).collect();
            let heads = m.parse(&sentences)?;
            let rels = m.label(&sentences, &heads);
            let c = score_parses(&sentences, &heads, rels.as_deref());
            Ok(Evaluation::Parser {
                sentences: sentences.len(),
                tokens: sentences.iter().map(ParseSentence::len).sum(),
                scores: c.scores(rels.is_some()),
            })
        }
        Model::Tagger(m) => {
            let sentences = tagger_sentences(m, source, true)?;
            let (scores, unseen) = m.evaluate_with(&sentences, &opts.memory)?;
            Ok(Evaluation::Tags {
                sentences: sentences.len(),
                unseen: Some(unseen),
                scores,
                chunks: is_chunk_scheme(&m.featurizer.labels),
            })
        }
        Model::Sequence(m) => {
            let test = source.read_sequences()?;
            Ok(Evaluation::Sequences {
                sequences: test.n_sequences(),
                positions: test.n_positions(),
                token_accuracy: m.token_accuracy(&test, &opts.memory)?,
            })
        }
        _ => {
            // A table, chunk by chunk: the same score as the whole file at once.
            let chunk = opts.chunk_rows()?;
            let mut stream = table_stream(model, source)?;
            let mut acc = ScoreAccumulator::new(model);
            while let Some(rows) = stream.next_chunk(chunk)? {
                let Some(targets) = rows.targets else {
                    return Err(Error::data(format!(
                        "{}: no target column; evaluation needs the labels (prediction works \
                         without them)",
                        source.path.display()
                    )));
                };
                acc.push(rows.x.view(), &targets, &opts.memory)?;
            }
            Ok(Evaluation::Table(acc.finish()))
        }
    }
}

/// The sentences of `source` for the tagger `m`: CRF++ columns with the model's observation
/// columns and, when `labelled` (evaluation), the label after them. A file with fewer is
/// refused with its name, the line of the first such sentence and what the model reads.
fn tagger_sentences(
    m: &TaggerModel,
    source: &FileSource,
    labelled: bool,
) -> Result<Vec<ColumnSentence>> {
    let sentences = source.read_columns()?;
    let observed = m.featurizer.n_columns;
    let need = observed + usize::from(labelled);
    // Every token line of a column file has the same number of columns.
    if let Some(s) = sentences.iter().find(|s| s.tokens[0].len() < need) {
        let found = s.tokens[0].len();
        return Err(Error::Parse {
            path: source.path.clone(),
            line: s.line,
            msg: format!(
                "{found} column{}; {} {observed} observation column{}{}{}",
                if found == 1 { "" } else { "s" },
                if labelled {
                    "evaluation needs the model's"
                } else {
                    "the tagger model reads"
                },
                if observed == 1 { "" } else { "s" },
                if labelled {
                    " and the label"
                } else {
                    " a token"
                },
                source.columns_hint()
            ),
        });
    }
    Ok(sentences)
}

/// conlleval's scores of the last two columns (gold, predicted) of a column file.
pub fn score_columns(path: &Path) -> Result<Evaluation> {
    let d = read_columns(path)?;
    if d.n_columns < 2 {
        return Err(Error::data(format!(
            "{}: {} column; scoring needs the gold and the predicted label as the last two",
            path.display(),
            d.n_columns
        )));
    }
    let k = d.n_columns;
    let gold: Vec<Vec<&[u8]>> = d.sentences.iter().map(|s| s.column(k - 2)).collect();
    let pred: Vec<Vec<&[u8]>> = d.sentences.iter().map(|s| s.column(k - 1)).collect();
    let mut labels: Vec<&[u8]> = gold.iter().chain(&pred).flatten().copied().collect();
    labels.sort_unstable();
    labels.dedup();
    Ok(Evaluation::Tags {
        sentences: d.sentences.len(),
        unseen: None,
        scores: TagScores::of(&gold, &pred),
        chunks: is_chunk_scheme(&labels),
    })
}

/// Predicts every item of `source` with `model` and hands the text form (module docs) to
/// `out`: a table's lines chunk by chunk (so a malformed row stops the output after the
/// chunks before it), any other model's output whole.
pub fn predict(
    model: &Model,
    source: &FileSource,
    opts: &ApplyOptions,
    mut out: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    if opts.marginals.is_some() && !matches!(model, Model::Tagger(_)) {
        return Err(Error::unsupported(format!(
            "label probabilities come from a sequence tagger trained with the CRF loss, not a \
             {} model",
            model.task_name()
        )));
    }
    let text = match model {
        Model::Parser(m) => {
            let input = source.read_treebank(Heads::Optional)?;
            let sentences: Vec<ParseSentence> = input.iter().map(ParseSentence::from).collect();
            let heads = m.parse(&sentences)?;
            let rels = m.label(&sentences, &heads);
            let mut text = String::new();
            for (i, (s, h)) in input.iter().zip(&heads).enumerate() {
                write_sentence(s, h, rels.as_ref().map(|r| r[i].as_slice()), &mut text);
            }
            text.into_bytes()
        }
        Model::Tagger(m) => {
            let sentences = tagger_sentences(m, source, false)?;
            let mut text = Vec::new();
            let io = |e: std::io::Error| Error::data(e.to_string());
            match opts.marginals {
                None => write_with_predictions(
                    &mut text,
                    &sentences,
                    &m.tag_with(&sentences, &opts.memory)?,
                )
                .map_err(io)?,
                Some(level) => {
                    let marg = m
                        .marginals_with(&sentences, &opts.memory)
                        .map_err(|e| match e {
                            // A sentence's scores: the file's name before its line.
                            Error::Data(msg) => {
                                Error::data(format!("{}: {msg}", source.path.display()))
                            }
                            e => e.within("marginals"),
                        })?;
                    write_marginals(&mut text, m, &sentences, &marg, level);
                }
            }
            text
        }
        Model::Sequence(m) => {
            let test = source.read_sequences()?;
            let pred = m.predict_names(&test.x, &test.spans, &opts.memory)?;
            sequence_lines(&pred).into_bytes()
        }
        _ => {
            let chunk = opts.chunk_rows()?;
            let mut stream = table_stream(model, source)?;
            let mut lines = String::new();
            model.predict_stream(&mut stream, chunk, &opts.memory, |pred| {
                lines.clear();
                prediction_lines(&pred, &mut lines);
                out(lines.as_bytes())
            })?;
            return Ok(());
        }
    };
    out(&text)
}

/// One line per prediction: the class name, or the value.
fn prediction_lines(pred: &Targets, out: &mut String) {
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

/// CRF++'s `crf_test -v1` / `-v2` output: `# P(best sequence)`, then each token's columns
/// and `label/P(label)` separated by tabs (`-v2`: then every label's `label/P`), a blank line
/// after each sentence. Probabilities are printed in full (shortest round-trip decimal),
/// where CRF++ prints 6 significant digits.
fn write_marginals(
    out: &mut Vec<u8>,
    m: &TaggerModel,
    sentences: &[ColumnSentence],
    marg: &[SentenceMarginals],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_print_as_words_or_spaced_labels() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(sequence_lines(&[w(&["a", "b"]), w(&["c"])]), "ab\nc\n");
        assert_eq!(sequence_lines(&[w(&["NN", "V"])]), "NN V\n");
    }

    #[test]
    fn a_tag_evaluation_prints_chunks_only_for_chunk_labels() {
        let gold = vec![vec!["B-NP", "I-NP", "O"]];
        let pred = vec![vec!["B-NP", "O", "O"]];
        let scores = TagScores::of(&gold, &pred);
        let e = Evaluation::Tags {
            sentences: 1,
            unseen: Some(0),
            scores,
            chunks: true,
        };
        let text = e.to_string();
        assert!(text.starts_with("sentences 1\ntokens 3\nunseen_labels 0\naccuracy 66.67\n"));
        assert!(text.contains("chunks_gold 1\nchunks_found 1\nchunks_correct 0\n"));
        assert!(text.ends_with("f1 0.00\n"), "{text}");
        let plain = Evaluation::Tags {
            sentences: 1,
            unseen: None,
            scores,
            chunks: false,
        };
        assert_eq!(plain.to_string(), "sentences 1\ntokens 3\naccuracy 66.67\n");
    }
}
