//! A dependency parser from CoNLL-U sentences in memory: the parser of `multikernel train
//! --task parsing` (arc-factored trees, one feature group per arc template, martins2011
//! Sec. 4.2), trained by SPOM (martins2011 Alg. 1 with the structured hinge, eq. 4, or the
//! tree CRF loss, eq. 3) or by multi-template learning (mao-tsang Alg. 1, problem (6)/(11)),
//! through the same [`fit`](super::fit()), so the same sentences and settings give the same
//! model as the command line. Trees are any trees (Chu-Liu-Edmonds) or projective ones
//! (Eisner); a second stage labels the arcs with relations when training had them.
//!
//! The Python package's `DependencyParser` calls only this module: a [`Treebank`] (CoNLL-U
//! text, a file, or one text block per sentence), [`Settings`](super::Settings) (the settings named as
//! in [`super::registry`]), [`training_data`] (then [`fit()`](super::fit())) and [`DependencyParser`] (parse, write
//! back, attachment scores, the templates and their weights, bytes).
//!
//! A column the templates read must be there: UPOS `_` (Universal Dependencies gives every
//! token a UPOS, so `_` means the column is missing) is an error naming the sentence and the
//! token when a template reads `upos`. The other columns' `_` is a value (no lemma, an
//! unspecified XPOS, no features), as the command line reads them.

use crate::data::conllu::{parse_conllu, read_conllu, write_sentence, ConlluSentence, Heads};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::pipeline::treebank::arc_labels::default_label_templates;
use crate::pipeline::treebank::parser::ParserModel;
use crate::task::parse::templates::{Atom, Attribute};
use crate::task::parse::{score_parses, ParseData, ParseSentence, TemplateSet, TreeKind};
use std::path::{Path, PathBuf};

pub mod parts;

pub use crate::task::parse::AttachmentScores;

const ARC_TEMPLATES: &str = "the arc templates";
const LABEL_TEMPLATES: &str = "the relation labeler's templates";

/// Where a treebank's sentences came from, for error messages.
#[derive(Debug, Clone)]
enum Origin {
    /// One text or file: errors name it and the line.
    File(PathBuf),
    /// One text block per sentence: errors name `X[i]` and the line within the block.
    List,
}

/// CoNLL-U sentences with where they came from: what [`training_data`] turns into a parser's training data
/// and [`DependencyParser`] parses. Comment lines, multi-word token ranges and empty nodes
/// are kept for writing back ([`Treebank::to_text`]).
#[derive(Debug, Clone)]
pub struct Treebank {
    sentences: Vec<ConlluSentence>,
    origin: Origin,
}

impl Treebank {
    /// The sentences of CoNLL-U text; `origin` names it in errors. `heads`: required
    /// (training and scoring: every sentence a tree) or optional (sentences to parse).
    pub fn parse(text: &str, origin: &str, heads: Heads) -> Result<Treebank> {
        Ok(Treebank {
            sentences: parse_conllu(text.as_bytes(), Path::new(origin), heads)?,
            origin: Origin::File(PathBuf::from(origin)),
        })
    }

    /// The sentences of a CoNLL-U file (plain or gzip).
    pub fn read(path: &Path, heads: Heads) -> Result<Treebank> {
        Ok(Treebank {
            sentences: read_conllu(path, heads)?,
            origin: Origin::File(path.to_path_buf()),
        })
    }

    /// One sentence from each text block (its CoNLL-U lines); errors name the block `X[i]`
    /// and the line within it.
    pub fn from_blocks(blocks: &[String], heads: Heads) -> Result<Treebank> {
        let sentences = blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let name = format!("X[{i}]");
                let mut s = parse_conllu(b.as_bytes(), Path::new(&name), heads)?;
                if s.len() != 1 {
                    return Err(Error::data(format!(
                        "X[{i}] holds {} sentences (blank lines end a sentence); give one \
                         sentence per item",
                        s.len()
                    )));
                }
                Ok(s.remove(0))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Treebank {
            sentences,
            origin: Origin::List,
        })
    }

    pub fn len(&self) -> usize {
        self.sentences.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sentences.is_empty()
    }

    pub fn sentences(&self) -> &[ConlluSentence] {
        &self.sentences
    }

    fn parse_sentences(&self) -> Vec<ParseSentence> {
        self.sentences.iter().map(ParseSentence::from).collect()
    }

    /// An error at token `k` of sentence `i` (0-based): the file and the token's line, or
    /// `X[i]` and the line within its block.
    fn token_error(&self, i: usize, k: usize, msg: String) -> Error {
        let s = &self.sentences[i];
        let (path, line) = match &self.origin {
            Origin::File(p) => (p.clone(), s.token_line(k)),
            Origin::List => (PathBuf::from(format!("X[{i}]")), s.token_line(k)),
        };
        Error::Parse { path, line, msg }
    }

    /// Refuses a token without a column that `templates` read: UPOS `_` (module docs).
    /// Each set comes with what it is in the message (the arc templates, the relation
    /// labeler's).
    fn check_columns(&self, templates: &[(&TemplateSet, &str)]) -> Result<()> {
        let reads_upos = |set: &TemplateSet, t: &crate::task::parse::templates::Template| {
            t.atoms.iter().any(|a| {
                matches!(a, Atom::Token { attr, .. } if set.attributes[*attr] == Attribute::Upos)
            })
        };
        let Some((what, reader)) = templates.iter().find_map(|(set, what)| {
            set.templates
                .iter()
                .find(|t| reads_upos(set, t))
                .map(|t| (*what, t.name.clone()))
        }) else {
            return Ok(());
        };
        for (i, s) in self.sentences.iter().enumerate() {
            if let Some(k) = s
                .tokens
                .iter()
                .position(|t| t.upos == "_" || t.upos.is_empty())
            {
                return Err(self.token_error(
                    i,
                    k,
                    format!(
                        "sentence {}, token {} ('{}') has no UPOS (_), and {what} read it \
                         ('{reader}'); give every token its UPOS",
                        i + 1,
                        k + 1,
                        s.tokens[k].form
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Each sentence's lines with HEAD and DEPREL from `parses` (DEPREL unchanged without
    /// relations): comments, multi-word token ranges and empty nodes as they were.
    pub fn to_blocks(&self, parses: &[Parse]) -> Result<Vec<String>> {
        self.check_parses(parses)?;
        Ok(self
            .sentences
            .iter()
            .zip(parses)
            .map(|(s, p)| {
                let mut out = String::new();
                write_sentence(s, &p.heads, p.deprels.as_deref(), &mut out);
                out
            })
            .collect())
    }

    /// The whole treebank as CoNLL-U text ([`Treebank::to_blocks`], one after the other):
    /// what `multikernel predict` writes for a parser.
    pub fn to_text(&self, parses: &[Parse]) -> Result<String> {
        Ok(self.to_blocks(parses)?.concat())
    }

    fn check_parses(&self, parses: &[Parse]) -> Result<()> {
        if parses.len() != self.len() {
            return Err(Error::shape(
                "parses (one per sentence)",
                self.len(),
                parses.len(),
            ));
        }
        for (i, (s, p)) in self.sentences.iter().zip(parses).enumerate() {
            let n = s.tokens.len();
            let rel = p.deprels.as_ref().map_or(n, Vec::len);
            if p.heads.len() != n || rel != n {
                return Err(Error::data(format!(
                    "sentence {i} has {n} tokens but its parse {} heads and {rel} relations",
                    p.heads.len()
                )));
            }
        }
        Ok(())
    }
}

/// The parse of one sentence: the head of each token (`heads[k]` for token `k + 1`, 0 the
/// root) and, when the parser labels arcs, each token's relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    pub heads: Vec<usize>,
    pub deprels: Option<Vec<String>>,
}

/// A parser's training data from `train` (read with [`Heads::Required`]), for
/// [`fit()`](super::fit()) with a parsing spec (see
/// [`Settings::structured_spec`](super::Settings::structured_spec)). `templates`: the text
/// of an arc template file and a name for it in errors (`None`: the default templates,
/// `crate::task::parse::DEFAULT_TEMPLATES`); `projective`: Eisner's projective trees
/// instead of any tree.
///
/// ```
/// use multikernel::data::conllu::Heads;
/// use multikernel::estimator::parser::{training_data, DependencyParser, Treebank};
/// use multikernel::estimator::{fit, LearnerKind, Settings, Task};
/// let text = "1\tdogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n";
/// let train = Treebank::parse(text, "<text>", Heads::Required)?;
/// let spec = Settings::new().with("epochs", "2").structured_spec(Task::Parsing, LearnerKind::Online, 1.0, 0)?;
/// let parser = DependencyParser::new(fit(&training_data(&train, None, false)?, &spec, &())?.model)?;
/// let parses = parser.parse(&train)?;
/// assert_eq!(parses[0].heads, [2, 0]);
/// assert_eq!(parser.score(&train)?.uas, 100.0);
/// assert_eq!(parser.to_text(&train)?, text);
/// # Ok::<(), multikernel::Error>(())
/// ```
pub fn training_data(
    train: &Treebank,
    templates: Option<(&str, &str)>,
    projective: bool,
) -> Result<ParseData> {
    let templates = match templates {
        Some((text, origin)) => TemplateSet::parse(text, Path::new(origin))?,
        None => TemplateSet::default_set(),
    };
    let labels = default_label_templates();
    train.check_columns(&[(&templates, ARC_TEMPLATES), (&labels, LABEL_TEMPLATES)])?;
    let mut data = ParseData::new(train.parse_sentences());
    data.templates = templates;
    if projective {
        data.trees = TreeKind::Projective;
    }
    Ok(data)
}

/// A trained parser ([`Model::Parser`]) on sentences in memory.
#[derive(Debug, Clone)]
pub struct DependencyParser {
    model: Model,
}

impl DependencyParser {
    /// The parser of a model; an error for a model of another kind.
    pub fn new(model: Model) -> Result<DependencyParser> {
        match model {
            Model::Parser(_) => Ok(DependencyParser { model }),
            _ => Err(Error::unsupported(format!(
                "a {} model is not a dependency parser",
                model.task_name()
            ))),
        }
    }

    /// The parser from model bytes ([`Model::from_bytes`]; a parser's model file).
    pub fn from_bytes(bytes: &[u8]) -> Result<DependencyParser> {
        DependencyParser::new(Model::from_bytes(bytes)?)
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.model.to_bytes()
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    fn inner(&self) -> &ParserModel {
        match &self.model {
            Model::Parser(m) => m,
            _ => unreachable!("checked by new"),
        }
    }

    /// The arc templates (one feature group each), in file order.
    pub fn templates(&self) -> Vec<String> {
        let t = &self.inner().featurizer.templates.templates;
        t.iter().map(|t| t.name.clone()).collect()
    }

    /// Each template's learned weight, in [`DependencyParser::templates`] order: the l2 norm
    /// `||w_j||` of its weights (martins2011 Sec. 3.4's group norm; 0 for a template the
    /// regularizer dropped).
    pub fn template_weights(&self) -> Vec<f64> {
        self.inner().group_norms()
    }

    /// Whether it labels arcs with relations (training had them).
    pub fn labeled(&self) -> bool {
        self.inner().labeler.is_some()
    }

    /// The relations it predicts, sorted (empty without a labeler).
    pub fn classes(&self) -> Vec<String> {
        let mut c = self
            .inner()
            .labeler
            .as_ref()
            .map_or_else(Vec::new, |l| l.labels.clone());
        c.sort();
        c
    }

    /// Whether it outputs projective trees only (Eisner), else any tree (Chu-Liu-Edmonds).
    pub fn projective(&self) -> bool {
        self.inner().trees == TreeKind::Projective
    }

    /// The best tree of each sentence and, with a labeler, its relations; an error naming
    /// the sentence and token for a column the templates read that is missing.
    pub fn parse(&self, treebank: &Treebank) -> Result<Vec<Parse>> {
        let m = self.inner();
        let mut sets = vec![(&m.featurizer.templates, ARC_TEMPLATES)];
        if let Some(l) = &m.labeler {
            sets.push((&l.featurizer.templates, LABEL_TEMPLATES));
        }
        treebank.check_columns(&sets)?;
        let sentences = treebank.parse_sentences();
        let heads = m.parse(&sentences)?;
        let rels = m.label(&sentences, &heads);
        Ok(match rels {
            Some(r) => heads
                .into_iter()
                .zip(r)
                .map(|(heads, d)| Parse {
                    heads,
                    deprels: Some(d),
                })
                .collect(),
            None => heads
                .into_iter()
                .map(|heads| Parse {
                    heads,
                    deprels: None,
                })
                .collect(),
        })
    }

    /// The treebank parsed, as CoNLL-U text ([`Treebank::to_text`]).
    pub fn to_text(&self, treebank: &Treebank) -> Result<String> {
        treebank.to_text(&self.parse(treebank)?)
    }

    /// Attachment scores against the gold trees of `treebank` (read with
    /// [`Heads::Required`]): UAS, and LAS when the parser labels arcs, in percent over the
    /// tokens that are not punctuation, as `multikernel eval` prints them.
    pub fn score(&self, treebank: &Treebank) -> Result<AttachmentScores> {
        let sentences = treebank.parse_sentences();
        if let Some(i) = sentences.iter().position(|s| s.heads.is_none()) {
            return Err(Error::data(format!(
                "sentence {} has a token without HEAD; scoring needs the gold trees",
                i + 1
            )));
        }
        let parses = self.parse(treebank)?;
        let heads: Vec<Vec<usize>> = parses.iter().map(|p| p.heads.clone()).collect();
        let rels: Option<Vec<Vec<String>>> = parses.iter().map(|p| p.deprels.clone()).collect();
        Ok(score_parses(&sentences, &heads, rels.as_deref()).scores(rels.is_some()))
    }
}

#[cfg(test)]
mod tests;
