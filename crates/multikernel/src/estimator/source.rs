//! One fit over a data source: the library picks the reader and the path, so a program
//! that wants what `multikernel train FILE` does calls [`TrainSource::load`], then
//! [`Loaded::fit`] (and can say what was read before a long run).
//!
//! Which reader, from the task, the format and the templates:
//!
//! | task | format | reader | entry point |
//! |---|---|---|---|
//! | parsing | `conllu` (or none) | CoNLL-U, [`crate::data::conllu`] | [`fit()`](super::fit()) on a [`ParseData`] |
//! | sequence | `columns`, or none with templates | CRF++ columns, [`crate::data::columns`] | [`fit()`](super::fit()) on a [`TagData`] |
//! | sequence | `ocr` (or none) | Taskar's OCR format, [`crate::data::ocr`] | [`fit()`](super::fit()) on [`SequenceData`] |
//! | binary, multiclass, regression | `csv`, `libsvm` (or none: from the file) | [`read_table`] | [`fit()`](super::fit()), with validation rows or the built-in selection ([`FitRequest`]) |
//! | binary, multiclass, regression, streamed | `csv`, `libsvm` | [`crate::data::stream`] | the online learner chunk by chunk ([`super::stream`]) |
//!
//! A validation source chooses MKL-GOMP's path length (table rows with the training
//! table's columns and classes) or the epoch of a parser or a tagger (sentences). Folds
//! select OCR sequences (their fold column) or treebank sentences (index mod 10).

use super::auto::AutoConfig;
use super::fit::TrainingData;
use super::fitted::Fitted;
use super::request::{fit, FitRequest};
use super::spec::{LearnerSpec, Task};
use super::stream::{fit_stream, StreamOptions};
use super::structured_auto::StructuredPlan;
use crate::data::columns::{read_columns, ColumnSentence};
use crate::data::conllu::{read_conllu, ConlluSentence, Heads};
use crate::data::ocr::{parse_folds, read_ocr};
use crate::data::read::looks_like;
use crate::data::weights::{read_weighted_table, ClassWeight};
use crate::data::{
    read_for_model, read_table, Dataset, Format, Schema, SequenceData, TargetKind, TargetSchema,
    Targets,
};
use crate::error::{Error, Result};
use crate::run::Observer;
use crate::task::parse::{ParseData, ParseSentence, TemplateSet, TreeKind};
use crate::task::tagging::{TagData, TemplateFile};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The format of a data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// A table: comma-separated values with a header, the target last.
    Csv,
    /// A table: libsvm / svmlight sparse rows.
    Libsvm,
    /// Sequences: Taskar's OCR `letter.data`.
    Ocr,
    /// Sentences in CRF++'s column format.
    Columns,
    /// Treebank sentences in CoNLL-U.
    Conllu,
}

impl FromStr for DataFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<DataFormat> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "ocr" => DataFormat::Ocr,
            "columns" => DataFormat::Columns,
            "conllu" => DataFormat::Conllu,
            other => match other.parse::<Format>() {
                Ok(Format::Csv) => DataFormat::Csv,
                Ok(Format::Libsvm) => DataFormat::Libsvm,
                Err(_) => {
                    return Err(Error::param(
                        "format",
                        s,
                        "csv, libsvm, ocr, columns or conllu",
                    ))
                }
            },
        })
    }
}

impl fmt::Display for DataFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DataFormat::Csv => "csv",
            DataFormat::Libsvm => "libsvm",
            DataFormat::Ocr => "ocr",
            DataFormat::Columns => "columns",
            DataFormat::Conllu => "conllu",
        })
    }
}

/// A data file: its path, its format (`None`: from the task, the file name or its first
/// line) and the folds to keep (a list such as `0`, `0,3` or `1-9`; OCR sequences and
/// treebank sentences only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSource {
    pub path: PathBuf,
    pub format: Option<DataFormat>,
    pub folds: Option<String>,
}

/// The targets a table of `task` holds: real numbers for a regression, classes otherwise.
fn table_target(task: Task) -> TargetKind {
    if task == Task::Regression {
        TargetKind::Real
    } else {
        TargetKind::Classes
    }
}

impl FileSource {
    /// The whole file, its format from the task or the file.
    pub fn new(path: impl Into<PathBuf>) -> FileSource {
        FileSource {
            path: path.into(),
            format: None,
            folds: None,
        }
    }

    /// The same file with `format`.
    pub fn with_format(mut self, format: Option<DataFormat>) -> FileSource {
        self.format = format;
        self
    }

    /// The same file, only the folds `list`.
    pub fn with_folds(mut self, list: Option<String>) -> FileSource {
        self.folds = list;
        self
    }

    /// The table format (`None`: from the file name or its first line); an error for the
    /// formats of sequences and sentences.
    pub(crate) fn table_format(&self) -> Result<Option<Format>> {
        match self.format {
            None => Ok(None),
            Some(DataFormat::Csv) => Ok(Some(Format::Csv)),
            Some(DataFormat::Libsvm) => Ok(Some(Format::Libsvm)),
            Some(f) => Err(Error::param(
                "format",
                f,
                "csv or libsvm for a table (ocr and columns are sequence data: the sequence \
                 task; conllu is a treebank: the parsing task)",
            )),
        }
    }

    /// The table with a weight per row (`TableRef::with_weights`): the CSV column
    /// `weight_column` (not a feature then), else 1, times `class_weight`'s weight of the
    /// row's class ([`crate::data::weights`]); the whole file, in memory.
    pub fn read_weighted_table(
        &self,
        task: Task,
        weight_column: Option<&str>,
        class_weight: Option<&ClassWeight>,
    ) -> Result<(Dataset, Vec<f64>)> {
        self.no_folds()?;
        read_weighted_table(
            &self.path,
            self.table_format()?,
            table_target(task),
            weight_column,
            class_weight,
        )
    }

    fn no_folds(&self) -> Result<()> {
        match &self.folds {
            None => Ok(()),
            Some(_) => Err(Error::unsupported(
                "folds select OCR sequences or treebank sentences; a column file or a table \
                 is used whole (split it beforehand)",
            )),
        }
    }

    fn expect(&self, want: DataFormat, what: &str) -> Result<()> {
        match self.format {
            None => Ok(()),
            Some(f) if f == want => Ok(()),
            Some(f) => Err(Error::param("format", f, format!("{want} for {what}"))),
        }
    }

    /// OCR sequences, the folds asked for or all of them.
    pub fn read_sequences(&self) -> Result<SequenceData> {
        self.expect(DataFormat::Ocr, "sequences (Taskar's letter.data)")?;
        let all = read_ocr(&self.path)?;
        let Some(list) = &self.folds else {
            return Ok(all);
        };
        let d = all.select_folds(&parse_folds(list)?);
        if d.n_sequences() == 0 {
            return Err(Error::data(format!(
                "{}: no sequences in folds {list}",
                self.path.display()
            )));
        }
        Ok(d)
    }

    /// CoNLL-U sentences, the folds asked for (sentence index mod 10) or all of them;
    /// `heads` says whether every sentence must carry its tree.
    pub fn read_treebank(&self, heads: Heads) -> Result<Vec<ConlluSentence>> {
        use crate::data::conllu::select_folds;
        self.expect(DataFormat::Conllu, "a treebank")?;
        let all = read_conllu(&self.path, heads)?;
        let Some(list) = &self.folds else {
            return Ok(all);
        };
        let s = select_folds(&all, &parse_folds(list)?);
        if s.is_empty() {
            return Err(Error::data(format!(
                "{}: no sentences in folds {list}",
                self.path.display()
            )));
        }
        Ok(s)
    }

    /// Sentences in the column format (used whole). A file the column reader refuses that
    /// looks like another kind of file ([`looks_like`]: a treebank, a table, a model) is
    /// named as such in the message.
    pub(crate) fn read_columns(&self) -> Result<Vec<ColumnSentence>> {
        self.expect(DataFormat::Columns, "a template tagger")?;
        self.no_folds()?;
        match read_columns(&self.path) {
            Ok(d) => Ok(d.sentences),
            Err(Error::Parse { path, line, msg }) => Err(Error::Parse {
                msg: format!("{msg}{}", self.columns_hint()),
                path,
                line,
            }),
            Err(e) => Err(e),
        }
    }

    /// When the file looks like a kind of file this crate knows ([`looks_like`]), a clause
    /// that says so and what a template tagger reads; empty otherwise.
    pub(crate) fn columns_hint(&self) -> String {
        let bytes = crate::data::lines::read_bytes(&self.path).ok();
        match bytes.as_deref().and_then(looks_like) {
            Some(kind) => format!(
                " (the file looks like {kind}; a template tagger reads CRF++ columns: one \
                 token a line, whitespace-separated columns, the label last, a blank line \
                 between sentences)"
            ),
            None => String::new(),
        }
    }

    /// Whether the data are sentences in columns for a template tagger: the sequence task
    /// with the columns format, or no format and templates.
    fn is_columns(&self, task: Task, templates: bool) -> bool {
        task == Task::Sequence
            && (self.format == Some(DataFormat::Columns) || (self.format.is_none() && templates))
    }
}

/// Where the training data come from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source<'a> {
    /// A file read whole.
    File(FileSource),
    /// A table file read chunk by chunk, never whole in memory (the online learner,
    /// [`super::stream`]).
    Stream(FileSource, StreamOptions),
    /// Data already in memory.
    Memory(TrainingData<'a>),
}

/// Everything [`Loaded::fit`] trains on (read by [`TrainSource::load`]): the data, a validation source, and for sentences
/// the template file, the count cutoff and the trees decoded.
#[derive(Debug, Clone)]
pub struct TrainSource<'a> {
    pub data: Source<'a>,
    /// Rows that choose MKL-GOMP's path length, or sentences that choose a parser's or a
    /// tagger's epoch.
    pub validation: Option<FileSource>,
    /// Arc templates of a parser (default: the built-in set) or CRF++ templates of a
    /// tagger (required for sentences in columns).
    pub templates: Option<PathBuf>,
    /// A tagger keeps template expansions seen at least this often (CRF++ `-f`).
    pub min_count: Option<usize>,
    /// A parser decodes projective trees (Eisner) instead of any tree.
    pub projective: bool,
}

impl<'a> TrainSource<'a> {
    /// The data alone, with no validation and the default templates.
    pub fn new(data: Source<'a>) -> TrainSource<'a> {
        TrainSource {
            data,
            validation: None,
            templates: None,
            min_count: None,
            projective: false,
        }
    }

    /// Reads the data for `task` (module docs: which reader). A streamed table is only
    /// checked here and read by [`Loaded::fit`].
    pub fn load(&self, task: Task) -> Result<Loaded<'a>> {
        let file = match &self.data {
            Source::Memory(d) => {
                if self.validation.is_some() || self.templates.is_some() {
                    return Err(Error::unsupported(
                        "data in memory carry their own validation rows and templates",
                    ));
                }
                return Ok(Loaded::new(Data::Memory(*d)));
            }
            Source::Stream(f, opts) => {
                if matches!(task, Task::Sequence | Task::Parsing) {
                    return Err(Error::unsupported(
                        "training from a stream takes a table task",
                    ));
                }
                f.no_folds()?;
                f.table_format()?;
                return Ok(Loaded::new(Data::Stream(f.clone(), *opts)));
            }
            Source::File(f) => f,
        };
        if self.templates.is_some() && !matches!(task, Task::Sequence | Task::Parsing) {
            return Err(Error::unsupported(
                "templates are the groups of a parser or a tagger (the parsing task, or the \
                 sequence task on sentences in columns)",
            ));
        }
        if task == Task::Parsing {
            return self
                .parse_data(file)
                .map(|d| Loaded::new(Data::Treebank(d)));
        }
        if file.is_columns(task, self.templates.is_some()) {
            return self.tag_data(file).map(|d| Loaded::new(Data::Tagged(d)));
        }
        if self.min_count.is_some() {
            return Err(Error::unsupported(
                "the count cutoff applies to a tagger on sentences in columns",
            ));
        }
        if task == Task::Sequence {
            if self.validation.is_some() {
                return Err(Error::unsupported(
                    "validation sentences choose the epoch of a parser or a tagger in \
                     columns; OCR sequences take none",
                ));
            }
            return Ok(Loaded::new(Data::Sequences(file.read_sequences()?)));
        }
        file.no_folds()?;
        let data = read_table(
            &file.path,
            file.table_format()?,
            table_target(task),
            None,
            None,
        )?;
        let validation = match &self.validation {
            Some(v) => Some(read_validation(v, &data).map_err(|e| e.within("validation"))?),
            None => None,
        };
        Ok(Loaded {
            data: Data::Table(data),
            validation,
        })
    }

    /// A parser's data: the training sentences, the development sentences, the templates.
    fn parse_data(&self, file: &FileSource) -> Result<ParseData> {
        let conv = |s: Vec<ConlluSentence>| -> Vec<ParseSentence> {
            s.iter().map(ParseSentence::from).collect()
        };
        let mut data = ParseData::new(conv(file.read_treebank(Heads::Required)?));
        if let Some(v) = &self.validation {
            data.dev = conv(
                v.read_treebank(Heads::Required)
                    .map_err(|e| e.within("validation"))?,
            );
        }
        if let Some(path) = &self.templates {
            data.templates = TemplateSet::read(path)?;
        }
        if self.projective {
            data.trees = TreeKind::Projective;
        }
        Ok(data)
    }

    /// A tagger's data: sentences in columns, the development sentences, the templates.
    fn tag_data(&self, file: &FileSource) -> Result<TagData> {
        let Some(tpl) = &self.templates else {
            return Err(Error::param(
                "templates",
                "none",
                "a CRF++ template file (lines like U00:%x[0,0] and B) for sentences in columns",
            ));
        };
        let templates = TemplateFile::read(tpl)?;
        let mut data = TagData::new(file.read_columns()?, templates);
        if let Some(v) = &self.validation {
            data.dev = v.read_columns().map_err(|e| e.within("validation"))?;
        }
        if let Some(m) = self.min_count {
            if m == 0 {
                return Err(Error::param("min_count", 0, "at least 1"));
            }
            data.min_count = m;
        }
        Ok(data)
    }
}

/// Labelled rows of a validation file with the training table's columns and classes.
fn read_validation(v: &FileSource, train: &Dataset) -> Result<Dataset> {
    v.no_folds()?;
    let schema = Schema {
        feature_names: train.feature_names.clone(),
        target: match &train.targets {
            Targets::Classes { classes, .. } => TargetSchema::Classes(classes.clone()),
            Targets::Real(_) => TargetSchema::Real,
        },
    };
    let rows = read_for_model(&v.path, v.table_format()?, &schema)?;
    let Some(targets) = rows.targets else {
        return Err(Error::data(format!(
            "{}: no target column",
            v.path.display()
        )));
    };
    Ok(Dataset {
        x: rows.x,
        targets,
        feature_names: train.feature_names.clone(),
    })
}

/// The data as read.
#[derive(Debug)]
enum Data<'a> {
    Memory(TrainingData<'a>),
    Table(Dataset),
    Sequences(SequenceData),
    Treebank(ParseData),
    Tagged(TagData),
    Stream(FileSource, StreamOptions),
}

/// Training data read by [`TrainSource::load`], ready for [`Loaded::fit`].
#[derive(Debug)]
pub struct Loaded<'a> {
    data: Data<'a>,
    validation: Option<Dataset>,
}

impl<'a> Loaded<'a> {
    fn new(data: Data<'a>) -> Loaded<'a> {
        Loaded {
            data,
            validation: None,
        }
    }

    fn training(&self) -> Option<TrainingData<'_>> {
        Some(match &self.data {
            Data::Memory(d) => *d,
            Data::Table(d) => TrainingData::Table(d.view()),
            Data::Sequences(d) => TrainingData::Sequences(d),
            Data::Treebank(d) => TrainingData::Treebank(d),
            Data::Tagged(d) => TrainingData::Tagged(d),
            Data::Stream(..) => return None,
        })
    }

    /// What was read, in a few words ("208 rows x 60 features", "40 sentences (10
    /// development sentences), 50 templates", ...).
    pub fn describe(&self) -> String {
        match &self.data {
            Data::Stream(f, o) => format!(
                "{} read in chunks of {} rows (shuffle buffer {} rows)",
                f.path.display(),
                o.chunk_rows,
                o.shuffle_rows
            ),
            _ => match self.training() {
                Some(TrainingData::Table(t)) => {
                    format!("{} rows x {} features", t.len(), t.n_features())
                }
                Some(TrainingData::Sequences(d)) => format!("{} sequences", d.n_sequences()),
                Some(TrainingData::Treebank(d)) => format!(
                    "{} sentences ({} development sentences), {} templates",
                    d.train.len(),
                    d.dev.len(),
                    d.templates.templates.len()
                ),
                Some(TrainingData::Tagged(d)) => format!(
                    "{} sentences, {} tokens ({} development sentences), {} templates",
                    d.train.len(),
                    d.train.iter().map(|s| s.len()).sum::<usize>(),
                    d.dev.len(),
                    d.templates.templates.len()
                ),
                _ => "the data".to_string(),
            },
        }
    }

    /// Trains `spec` on the data (one of the three ways to train, with
    /// [`fit()`](super::fit()) on data in memory and
    /// [`IncrementalFit`](super::incremental::IncrementalFit)): a stream chunk by chunk
    /// (the online learner; [`Fitted::stream`] reports the passes); a table with the
    /// validation rows of the source (MKL-GOMP's path length), else with `select` the
    /// built-in selection, else the spec as it is; template taggers and parsers with
    /// `structured` the structured selection ([`super::structured_auto`]), else the spec
    /// (their development sentences are in the data); OCR sequences with the spec.
    pub fn fit(
        &self,
        spec: &LearnerSpec,
        select: Option<&AutoConfig>,
        structured: Option<&StructuredPlan>,
        observer: &dyn Observer,
    ) -> Result<Fitted> {
        if let Data::Stream(f, opts) = &self.data {
            let (fitted, report) = fit_stream(&f.path, f.table_format()?, spec, opts, observer)?;
            return Ok(Fitted {
                stream: Some(report),
                ..fitted
            });
        }
        let data = self.training().expect("not a stream");
        let request = match &self.validation {
            Some(v) => FitRequest::new(spec).validation(v.view()),
            None => FitRequest::new(spec)
                .select(select)
                .select_structured(structured),
        };
        fit(data, request, observer)
    }
}

/// `path` as a whole file of unknown format (a convenience for programs).
impl From<&Path> for FileSource {
    fn from(path: &Path) -> FileSource {
        FileSource::new(path)
    }
}
