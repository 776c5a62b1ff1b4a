//! Command-line grammar (clap). Values are parsed by the library's own `FromStr` types, so
//! a flag accepts exactly what the library does.

use clap::{Args, Parser, Subcommand};
use multikernel::estimator::registry::{Domain, Setting, SETTINGS};
use multikernel::estimator::{LearnerKind, Task};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel_experiments::options::Reproduction;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "multikernel",
    version,
    about = "Multiple kernel learning: online proximal MKL (SPOM), randomized mirror descent, \
             MKL-GOMP and lp-MKL",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Train a model and write it to --out (Ctrl-C stops training and writes nothing).
    Train(Box<TrainArgs>),
    /// Evaluate a model on labelled data; the last line is `METRIC VALUE`.
    Eval(EvalArgs),
    /// Write one prediction per line (the data may leave out the target column).
    Predict(PredictArgs),
    /// Describe a model: learner, settings, kernels and their weights.
    Inspect(InspectArgs),
    /// Reproduce a paper's experiments.
    #[command(subcommand)]
    Reproduce(Reproduction),
    /// Train and evaluate on data shipped in the repository.
    Demo(DemoArgs),
    /// Write a generated data set as CSV (features, then the target).
    Generate(GenerateArgs),
    /// Convert a CoNLL-U treebank to the column format of CRF++ for tagging (columns: form,
    /// lowercased form, lemma, suffixes of 1-3 characters, SpaceAfter, shape, then the label).
    Convert(ConvertArgs),
    /// Score tagged columns as conlleval does: the last two columns of each token are the
    /// gold and the predicted label (what `predict` writes for a labelled file).
    Score(ScoreArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ScoreArgs {
    /// A column file whose last two columns are the gold and the predicted label.
    #[arg(long)]
    pub data: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct ConvertArgs {
    /// A CoNLL-U file (.gz allowed).
    #[arg(long)]
    pub data: PathBuf,
    /// The label column: upos or xpos.
    #[arg(long, default_value = "upos")]
    pub label: String,
    /// Folds to keep (the fold of a sentence is its index mod 10; e.g. 0-7): default all.
    #[arg(long)]
    pub folds: Option<String>,
    /// Output file (written whole or not at all; a device or a FIFO is written in place;
    /// `-`: standard output).
    #[arg(long)]
    pub out: PathBuf,
    /// Encoding of the columns written (the treebank is UTF-8): any ASCII-compatible
    /// encoding by its WHATWG name (utf-8, euc-jp, shift_jis, gbk, gb18030, big5, euc-kr,
    /// windows-1252, iso-8859-2, ...). A character the encoding lacks is an error naming
    /// the sentence; UTF-16 and other encodings that are not ASCII-compatible are refused.
    #[arg(long, default_value = "utf-8")]
    pub encoding: String,
}

#[derive(Args, Debug, Clone)]
pub struct GenerateArgs {
    /// polynomial (Afkanpour et al. 2013, Sec. 5.2: inputs uniform on [-1, 1]^r, the
    /// target the sum of 10 random monomials of degree <= 3), ringnorm or waveform
    /// (Breiman 1996; the class labels 1, 2 (, 3) as the target), interactions (r
    /// Gaussian inputs, the class the sign of x1 * x2, 10 % coin labels) or indicators (180
    /// binary indicators of 60 letters, 3 classes by a 2-letter motif).
    pub dataset: String,
    /// Number of points.
    #[arg(long)]
    pub n: usize,
    /// polynomial, interactions: number of input variables.
    #[arg(long, default_value_t = 20)]
    pub r: usize,
    /// polynomial: seed of the monomials (the points use --seed).
    #[arg(long, default_value_t = 1)]
    pub problem_seed: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output CSV file (written whole or not at all; a device or a FIFO is written in place;
    /// `-`: standard output).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Data file: CSV with a header (the features, the target), LIBSVM, for --task
    /// sequence the OCR letter.data format or CRF++ columns (--format columns), for --task
    /// parsing CoNLL-U; .gz allowed.
    #[arg(long)]
    pub data: PathBuf,
    /// csv, libsvm, ocr, columns or conllu (default: from the file name, else from its
    /// first line; columns when --templates is given with --task sequence).
    #[arg(long)]
    pub format: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    #[arg(long, default_value = "binary")]
    pub task: Task,
    #[command(flatten)]
    pub data: DataArgs,
    /// Learner: online (Alg. 1 / SPOM), gomp, lp-mkl, mirror-descent, ucd, poly (lp-MKL over
    /// the explicit product kernels where they fit the memory limit, mirror descent
    /// otherwise), mtl (multi-template learning: sequences in columns, parsing), simplemkl
    /// or gauss-seidel (wrapper MKL around an SVM: exact SMO on tables, structured PEGASOS
    /// on sequences), lbfgs (the l2 CRF of a template tagger in batch by L-BFGS, CRFsuite's
    /// default trainer: c2 = 1 / (2 C)). Default: chosen by the built-in selection on a table (lp-mkl up to
    /// 3,000 rows, online above; at the --C given, if any) and, without --C, for a template
    /// tagger or a parser (online or mtl, see --select); with --C, or a learner setting
    /// given: mtl for --task sequence
    /// with --templates unless a setting only online takes is given (--epochs, --loss,
    /// --eta0, ...); online otherwise.
    #[arg(long = "algo")]
    pub learner: Option<LearnerKind>,
    /// Kernel SPEC, repeatable: NAME[:key=value,...], NAME in linear, poly, rbf, bspline,
    /// const, perfeature:linear, perfeature:rbf; keys degree, offset, sigma2, scale (rbf:
    /// times the median heuristic), zeros, h, norm=none|diag|trace|variance; or `auto`, the
    /// default dictionary (linear, poly degrees 2 and 3, rbf at 1/16, 1/4, 1, 4 times the
    /// median heuristic, per-feature rbf up to 20 features). Default: auto (online, lp-mkl,
    /// gomp on tables), linear:norm=diag (sequences), perfeature:linear (mirror-descent,
    /// ucd).
    #[arg(long = "kernel", value_name = "SPEC")]
    pub kernels: Vec<KernelArg>,
    /// Built-in selection: `auto` (default) on a table picks what is not given
    /// among C, the online learner's eta0, lp-mkl's p and the learner by seeded 5-fold
    /// cross-validation on the training file (repeated over 3 partitions up to 500 rows);
    /// for a template tagger (--format columns) or a parser with no --algo and no learner
    /// setting, it picks the learner, C and the block norm q among three candidates scored
    /// on the development sentences (--validation, --validation-folds; else a seeded 10% of
    /// the training sentences, then a refit on all): 2.3-3.4 times one fit of --algo mtl.
    /// `--shards`, `--batch` or any other learner setting trains that learner as given;
    /// --checkpoint saves the refit. `none` keeps the defaults (C = 1).
    #[arg(long, default_value = "auto")]
    pub select: SelectMode,
    /// When the selection chooses the learner: at most this many fits (one candidate at
    /// one C on one fold each), spent simplest candidate first (single kernels, the uniform
    /// sum, then learned combinations); the record says which were skipped. Counted in
    /// fits, so the same seed gives the same model on any machine. `30s` (a number and s)
    /// is an opt-in budget in seconds: no candidate starts after it, and the model may then
    /// differ between machines and runs. Default: no limit.
    #[arg(long, value_name = "FITS|SECONDSs")]
    pub select_budget: Option<multikernel::estimator::auto::SelectBudget>,
    /// C: weighs the sum of the losses against 1/2 ||f||^2, the same for every learner
    /// (default: chosen by --select auto on a table, a template tagger or a parser, else 1).
    /// Give --C or --lambda. On a table with no --algo (and no setting only online takes),
    /// the selection still picks the learner, kernels and p at this one C (a fifth of its
    /// cost), so the model is the default's at that C.
    #[arg(
        long = "C",
        value_name = "C",
        conflicts_with = "lambda",
        allow_negative_numbers = true
    )]
    pub c: Option<f64>,
    /// The learner's own regularization constant lambda.
    #[arg(long, allow_negative_numbers = true)]
    pub lambda: Option<f64>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// No unregularized bias.
    #[arg(long)]
    pub no_bias: bool,
    /// Do not standardize the features.
    #[arg(long)]
    pub no_standardize: bool,
    /// A column of row weights in the CSV file, named in its header (not a feature): C
    /// weighs row i's loss by C * w_i (an integer weight is the row repeated, 0 drops it).
    /// Taken by lp-mkl, online, simplemkl, gauss-seidel and the selection (unweighted scores).
    #[arg(long, value_name = "NAME")]
    pub weight_column: Option<String>,
    /// Class weights, multiplied into the row weights: `balanced` (n_rows / (n_classes *
    /// rows of the class), as scikit-learn's) or LABEL:W,LABEL:W (other classes weigh 1).
    #[arg(long, value_name = "balanced|LABEL:W,...")]
    pub class_weight: Option<multikernel::data::weights::ClassWeight>,
    /// Refuse allocations above this many GiB, before they are made: the Gram matrices, and a
    /// tagger's structures sized by its labels (the label-pair parts of bigram templates with
    /// macros, the weights, the sentences' buffers). A positive number; inf: no limit.
    #[arg(
        long,
        default_value_t = 8.0,
        value_parser = memory_limit_gb,
        allow_negative_numbers = true
    )]
    pub memory_limit_gb: f64,
    /// Where to write the model: a file, replaced whole or not at all (through a symbolic
    /// link, the file it names), or a device or FIFO, written in place (`-`: standard
    /// output, the summary then goes to stderr). Refused before training when it is an input
    /// or its folder cannot take a new file.
    #[arg(long)]
    pub out: PathBuf,
    /// Write the run's information (status, steps, seconds, objective trace) as JSON here,
    /// as --out writes the model (`-`: standard output, unless --out is).
    #[arg(long)]
    pub run_json: Option<PathBuf>,
    /// Save the learner's state to this file (atomically, replacing the last one) every
    /// --checkpoint-every steps, so that `--resume FILE` continues a killed run to the same
    /// model, bit for bit. A regular file (not `-`, a FIFO or a device: it is read back).
    /// The online learner (tables, --stream, sequences, parsing,
    /// template taggers) and --algo mtl; the selection of a template tagger or a parser saves
    /// its refit (a resumed run selects again, to the same choice); not the selection on a
    /// table (give --algo with --C, or --lambda).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// --checkpoint: steps between two checkpoints: epochs (default 1), --stream: chunks of
    /// --chunk-rows rows trained (default 1), --algo mtl: cuts (default 10). The state after
    /// the last step is not saved: the model is. At least 1.
    #[arg(
        long,
        value_name = "N",
        requires = "checkpoint",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub checkpoint_every: Option<u64>,
    /// Continue the run saved in this checkpoint file (refused when it was written for other
    /// data, other settings or by another version); later checkpoints go to --checkpoint,
    /// or to this file when --checkpoint is not given. Give the same flags as the run that
    /// wrote it (--epochs, --seed, ...).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// Train the online learner from the table file chunk by chunk, never whole in memory
    /// (a first pass checks every row and takes the classes and the standardization; every
    /// kernel needs an explicit map: linear, or approx=rff|nystrom|sketch; default kernels:
    /// rbf at 1, 4, 1/4 times the median heuristic as 1,024 random Fourier features each;
    /// no built-in selection: C = 1 unless given).
    #[arg(long)]
    pub stream: bool,
    /// --stream: rows parsed at a time.
    #[arg(long, default_value_t = 65_536, requires = "stream")]
    pub chunk_rows: usize,
    /// --stream: rows of the shuffle buffer (1: the file's order).
    #[arg(long, default_value_t = 262_144, requires = "stream")]
    pub shuffle_rows: usize,
    #[command(
        flatten,
        next_help_heading = "Structured data (--task sequence | parsing)"
    )]
    pub structured: StructuredArgs,
    #[command(flatten)]
    pub settings: LearnerFlags,
}

/// `--select`: built-in selection or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SelectMode {
    Auto,
    None,
}

/// A `--kernel` value: a kernel spec, or `auto` (the default dictionary).
#[derive(Debug, Clone, PartialEq)]
pub enum KernelArg {
    Auto,
    Spec(KernelSpec),
}

impl std::str::FromStr for KernelArg {
    type Err = multikernel::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "auto" {
            Ok(KernelArg::Auto)
        } else {
            s.parse().map(KernelArg::Spec)
        }
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct StructuredArgs {
    /// Sequence data (OCR) or a treebank: folds to train on (e.g. 0 or 0,3 or 1-9; for a
    /// treebank the fold of a sentence is its index mod 10).
    #[arg(long)]
    pub train_folds: Option<String>,
    /// Parsing: folds of --data that choose the epoch (e.g. 8), instead of --validation FILE.
    #[arg(long, conflicts_with = "validation")]
    pub validation_folds: Option<String>,
    /// Parsing: an arc template file (default: the built-in templates). Sequences in
    /// columns: a CRF++ template file (required).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Sequences in columns: keep template expansions seen at least this often in training
    /// (CRF++ -f; default 1).
    #[arg(long)]
    pub min_count: Option<usize>,
    /// Parsing: decode projective trees (Eisner) instead of any tree (Chu-Liu-Edmonds).
    #[arg(long)]
    pub projective: bool,
}

/// The learners' own settings, one flag each, made from the library's registry
/// ([`SETTINGS`](multikernel::estimator::registry::SETTINGS): flag, doc, default, learners);
/// the library parses and checks the values ([`multikernel::estimator::LearnerSpec::set`]).
#[derive(Debug, Clone, Default)]
pub struct LearnerFlags {
    /// The settings given, in table order: the setting, the flag as typed (current or
    /// deprecated) and the value as text (`on` for a switch).
    pub given: Vec<(&'static Setting, &'static str, String)>,
}

impl LearnerFlags {
    /// The text given for the setting `name`.
    pub fn text(&self, name: &str) -> Option<&str> {
        let found = self.given.iter().find(|(s, _, _)| s.name == name);
        found.map(|(_, _, t)| t.as_str())
    }
}

/// The clap id of a flag: the flag without its dashes.
fn arg_id(flag: &'static str) -> &'static str {
    flag.trim_start_matches('-')
}

impl clap::FromArgMatches for LearnerFlags {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for s in SETTINGS {
            for flag in std::iter::once(s.flag).chain(s.deprecated_flags.iter().copied()) {
                let text = match s.domain {
                    Domain::Switch => m.get_flag(arg_id(flag)).then(|| "on".to_string()),
                    _ => m.get_one::<String>(arg_id(flag)).cloned(),
                };
                given.extend(text.map(|t| (s, flag, t)));
            }
        }
        Ok(LearnerFlags { given })
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for LearnerFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let mut cmd = cmd.next_help_heading("Learner settings (each for the --algo it names)");
        for s in SETTINGS {
            let arg = |flag: &'static str| {
                let a = clap::Arg::new(arg_id(flag)).long(arg_id(flag));
                match s.domain {
                    Domain::Switch => a.action(clap::ArgAction::SetTrue),
                    _ => a.value_name("VALUE").allow_negative_numbers(true),
                }
            };
            let algos: Vec<&str> = s.learners.iter().map(|k| k.name()).collect();
            let help = format!(
                "{} (default {}; --algo {})",
                s.doc,
                s.default,
                algos.join(", ")
            );
            let mut current = arg(s.flag).help(help);
            if s.name == "seconds" {
                current = current.conflicts_with_all(["max-iter", "iterations"]);
            }
            cmd = cmd.arg(current);
            for &old in s.deprecated_flags {
                let help = format!("Deprecated: {} (the same setting)", s.flag);
                cmd = cmd.arg(
                    arg(old)
                        .hide(true)
                        .help(help)
                        .conflicts_with(arg_id(s.flag)),
                );
            }
        }
        cmd
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

#[derive(Args, Debug, Clone)]
pub struct EvalArgs {
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    /// Sequence data (OCR) or a treebank: folds to test on (e.g. 1-9, or 9).
    #[arg(long)]
    pub test_folds: Option<String>,
    /// Refuse allocations above this many GiB, before they are made: the kernel rows of the
    /// test points, and a tagger's buffers sized by its labels. A positive number; inf: no
    /// limit.
    #[arg(
        long,
        default_value_t = 8.0,
        value_parser = memory_limit_gb,
        allow_negative_numbers = true
    )]
    pub memory_limit_gb: f64,
    /// Tables: rows read and scored at a time (the file is never whole in memory; the score
    /// is the same for every chunk size).
    #[arg(long, default_value_t = multikernel::data::model_stream::DEFAULT_CHUNK_ROWS)]
    pub chunk_rows: usize,
}

#[derive(Args, Debug, Clone)]
pub struct PredictArgs {
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    /// Sequence data (OCR) or a treebank: folds to predict.
    #[arg(long)]
    pub test_folds: Option<String>,
    /// Output file, written whole or not at all (a malformed row leaves an older file as it
    /// was); a device or a FIFO is written in place; `-` or none: standard output, which for a table gets the predictions chunk by
    /// chunk (a malformed row stops the output after the chunks before its own).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Refuse allocations above this many GiB, before they are made: the kernel rows of the
    /// test points, and a tagger's buffers sized by its labels. A positive number; inf: no
    /// limit.
    #[arg(
        long,
        default_value_t = 8.0,
        value_parser = memory_limit_gb,
        allow_negative_numbers = true
    )]
    pub memory_limit_gb: f64,
    /// Tables: rows read and predicted at a time (the file is never whole in memory).
    #[arg(long, default_value_t = multikernel::data::model_stream::DEFAULT_CHUNK_ROWS)]
    pub chunk_rows: usize,
    /// Taggers trained with the CRF loss: print probabilities as CRF++'s `crf_test -v1`
    /// does (`# P(sentence)` before each sentence, `label/P(label)` after each token's
    /// columns); `--marginals 2` (`-v2`) adds every label's `label/P` on each token.
    #[arg(
        short = 'v',
        long,
        num_args = 0..=1,
        default_missing_value = "1",
        value_parser = clap::value_parser!(u8).range(1..=2),
        value_name = "LEVEL"
    )]
    pub marginals: Option<u8>,
}

#[derive(Args, Debug, Clone)]
pub struct InspectArgs {
    #[arg(long)]
    pub model: PathBuf,
    /// List every kernel (default: the first 40).
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Directory holding the shipped data.
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// The small vector demo (sparse MKL on ionosphere) instead of OCR.
    #[arg(long)]
    pub uci: bool,
}

/// The parser of every `--memory-limit-gb`: a positive number of GiB, `inf` for no limit
/// ([`MemoryLimit::try_gib`]); zero, a negative number or NaN is a usage error, before any
/// work.
pub fn memory_limit_gb(s: &str) -> std::result::Result<f64, String> {
    let expected = || format!("expected {}", MemoryLimit::EXPECTED);
    let g: f64 = s.trim().parse().map_err(|_| expected())?;
    MemoryLimit::try_gib(g).map(|_| g).map_err(|_| expected())
}
