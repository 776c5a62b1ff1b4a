//! The learner registry: each learner family's name and documentation, and each setting a
//! user can give a learner, declared once: its name, command-line flag, domain, default,
//! documentation and the learners that take it.
//!
//! The shells read it instead of keeping their own lists: the CLI refuses a flag of another
//! learner and the Python binding a keyword of another learner by [`owners`], and the Python
//! estimators build their `_parameter_constraints` and the settings `partial_fit` refuses
//! from [`SETTINGS`] (through the binding's `learner_settings()`). The settings' values are
//! checked once, by [`LearnerSpec::check`](super::LearnerSpec::check), in the family's
//! settings type (`OnlineSpec`, `GompSpec`, `LpMklSpec`, `PolySpec`, `MtlSpec`,
//! `WrapperSpec`); the online learner's steps (`eta0`, `epochs`, `shards`, ...) are the
//! engine's own [`OnlineSteps`](super::OnlineSteps), which the spec holds and checks with
//! the engine's one check.
//!
//! Adding a setting: one [`Setting`] here, its field in the family's settings type (its
//! default there; a step of the online learner in [`OnlineSteps`](super::OnlineSteps), or
//! the engine's default where the spec reads it from the engine's params), its arm
//! in the family's `set` (its file of `estimator/spec/`, which
//! [`LearnerSpec::set`](super::LearnerSpec::set) calls; the CLI's flag is made from this table
//! and its text set there; the Python doors pass it by name in a
//! [`Settings`](super::Settings), with no edit) and, for a Python keyword, the estimators'
//! `__init__` (a Python test checks the keywords and constraints against this table). A
//! unit test (`estimator::settings`) sets every owner's default spec to this table's
//! default text and fails where they differ.

use super::kinds::{LearnerKind, Task};
use crate::error::{Error, Result};
use crate::solver::lp_mkl::parse_p;
use LearnerKind::*;

/// The values a setting takes (the Python constraints are built from it).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Domain {
    /// A real number `> 0`.
    PositiveReal,
    /// A real number `>= 0`.
    NonNegativeReal,
    /// A real number `>= 1`, a fraction such as `4/3`, or `inf` (lp-MKL's p,
    /// [`crate::solver::lp_mkl::parse_p`]).
    Norm,
    /// An integer `>= 1`.
    Count,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// Text in the setting's own grammar (a regularizer, a step rule, a path, a list).
    Text,
    /// On when given (a command-line switch).
    Switch,
}

/// One setting of one or more learner families.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// The setting's name: the Python keyword, the name in error messages and model
    /// summaries.
    pub name: &'static str,
    /// The command-line flag of `multikernel train`.
    pub flag: &'static str,
    /// Older flags still accepted, with a deprecation warning.
    pub deprecated_flags: &'static [&'static str],
    pub domain: Domain,
    /// The default, as text (`"auto"`: chosen from the task and the kernels at `check()`).
    pub default: &'static str,
    pub doc: &'static str,
    /// The learner families that take it.
    pub learners: &'static [LearnerKind],
    /// A keyword of the Python estimators (else command line only).
    pub python: bool,
}

/// A learner family: its name and what it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnerInfo {
    pub kind: LearnerKind,
    pub doc: &'static str,
}

const POLY: &[LearnerKind] = &[MirrorDescent, Ucd, Poly];
const WRAPPERS: &[LearnerKind] = &[SimpleMkl, GaussSeidel];

/// Every learner family, in [`LearnerKind::ALL`] order.
pub const LEARNERS: &[LearnerInfo] = &[
    LearnerInfo {
        kind: Online,
        doc: "online proximal MKL (Martins et al. 2011, Alg. 1; SPOM, Alg. 3, on sequences)",
    },
    LearnerInfo {
        kind: Gomp,
        doc: "MKL-GOMP, greedy kernel selection (Sindhwani & Lozano 2012)",
    },
    LearnerInfo {
        kind: LpMkl,
        doc: "lp-norm MKL for the squared loss (Kloft et al. 2011)",
    },
    LearnerInfo {
        kind: MirrorDescent,
        doc: "polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013)",
    },
    LearnerInfo {
        kind: Ucd,
        doc: "the same problem by uniform coordinate descent",
    },
    LearnerInfo {
        kind: Poly,
        doc: "the same problem by the faster exact solver that fits (lp-MKL, p = 2, or mirror descent)",
    },
    LearnerInfo {
        kind: Mtl,
        doc: "multi-template learning, a 1-slack cutting-plane structural SVM (Mao & Tsang)",
    },
    LearnerInfo {
        kind: SimpleMkl,
        doc: "SimpleMKL, reduced gradient on the kernel weights around an SVM (Rakotomamonjy et al. 2008)",
    },
    LearnerInfo {
        kind: GaussSeidel,
        doc: "Gauss-Seidel wrapper MKL: SVM and closed-form kernel weights in turn",
    },
    LearnerInfo {
        kind: Lbfgs,
        doc: "the l2 CRF trained in batch by L-BFGS (CRFsuite's lbfgs), for template taggers",
    },
];

/// The settings the learners of taggers and parsers take (the online learner's and
/// multi-template learning's; `C` is the spec's own): the Python `SequenceTagger`'s and
/// `DependencyParser`'s keywords.
pub const STRUCTURED_SETTINGS: &[&str] = &[
    "regularizer",
    "loss",
    "epochs",
    "eta0",
    "q",
    "eps",
    "max_iter",
];

/// Every learner setting (the settings all learners share, such as `C`, the kernels, the
/// seed, are the spec's own fields and not listed).
pub const SETTINGS: &[Setting] = &[
    Setting {
        name: "regularizer",
        flag: "--reg",
        deprecated_flags: &[],
        domain: Domain::Text,
        default: "auto",
        doc: "the regularizer (l2, l1, l21, l21sq, l2q:q=Q, ...); auto: l21sq with several kernels, l2 with one",
        learners: &[Online],
        python: true,
    },
    Setting {
        name: "loss",
        flag: "--loss",
        deprecated_flags: &[],
        domain: Domain::Choice(&["hinge", "logistic", "crf", "squared"]),
        default: "auto",
        doc: "the loss; auto: hinge for classes and sequences, squared for regression; crf (the logistic loss of sequences) for taggers",
        learners: &[Online],
        python: true,
    },
    Setting {
        name: "epochs",
        flag: "--epochs",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "20",
        doc: "passes over the training data",
        learners: &[Online],
        python: true,
    },
    Setting {
        name: "eta0",
        flag: "--eta0",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "1",
        doc: "the initial step size",
        learners: &[Online],
        python: true,
    },
    Setting {
        name: "schedule",
        flag: "--schedule",
        deprecated_flags: &[],
        domain: Domain::Text,
        default: "sqrt",
        doc: "the step rule (sqrt, const, inv, inv:sigma=S, bottou; adagrad: per-coordinate steps, template taggers with l2)",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "average",
        flag: "--average",
        deprecated_flags: &[],
        domain: Domain::Switch,
        default: "off",
        doc: "return the average of the iterates",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "no_projection",
        flag: "--no-projection",
        deprecated_flags: &[],
        domain: Domain::Switch,
        default: "off",
        doc: "do not project onto the ball of radius sqrt(2 L(0) / lambda)",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "learn_beta0",
        flag: "--learn-beta0",
        deprecated_flags: &[],
        domain: Domain::Switch,
        default: "off",
        doc: "sequences: learn the label-pair group's weight inside the MKL regularizer",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "shards",
        flag: "--shards",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "1",
        doc: "sequences and parsing: cut each epoch into this many shards, one parallel pass \
              each from the same weights, then average them and take the regularizer's \
              proximal step (iterative parameter mixing); the same seed and shards give the \
              same model on any number of threads; 1 trains round after round",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "batch",
        flag: "--batch",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "1",
        doc: "sequences and parsing: decode this many consecutive examples in parallel \
              against the same weights, then apply their updates one round after another \
              (and the kernel scores' updates of the batch in parallel); the same seed and \
              batch give the same model on any number of threads; 1 trains round after round",
        learners: &[Online],
        python: false,
    },
    Setting {
        name: "max_kernels",
        flag: "--max-kernels",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "20",
        doc: "the largest number of kernels chosen",
        learners: &[Gomp],
        python: true,
    },
    Setting {
        name: "eps",
        flag: "--eps",
        deprecated_flags: &[],
        // gomp takes 0 (stop on --max-kernels alone); mtl's check() refuses it.
        domain: Domain::NonNegativeReal,
        default: "1e-4 (gomp), 0.01 (mtl)",
        doc: "gomp: stop when the best improvement is at most this; mtl: the cutting plane's tolerance",
        learners: &[Gomp, Mtl],
        python: false,
    },
    Setting {
        name: "validation",
        flag: "--validation",
        deprecated_flags: &[],
        domain: Domain::Text,
        default: "none",
        doc: "a file on which gomp picks its path length",
        learners: &[Gomp],
        python: false,
    },
    Setting {
        name: "subsample",
        flag: "--subsample",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "none",
        doc: "search a seeded random subsample of this many kernels per step",
        learners: &[Gomp],
        python: false,
    },
    Setting {
        name: "p",
        flag: "--p",
        deprecated_flags: &[],
        domain: Domain::Norm,
        default: "2",
        doc: "the kernel-weight norm: a number >= 1 such as 1, 4/3, 2, 4, or inf",
        learners: &[LpMkl],
        python: true,
    },
    Setting {
        name: "degree",
        flag: "--degree",
        deprecated_flags: &["--poly-degree"],
        domain: Domain::Count,
        default: "3",
        doc: "the degree D of the learned polynomial kernel",
        learners: POLY,
        python: true,
    },
    Setting {
        name: "rho2",
        flag: "--rho2",
        deprecated_flags: &[],
        domain: Domain::Text,
        default: "all 1",
        doc: "rho_d^2 for d = 0..=D, comma-separated",
        learners: POLY,
        python: false,
    },
    Setting {
        name: "seconds",
        flag: "--seconds",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "10 (command line)",
        doc: "train for this many seconds (not reproducible across machines)",
        learners: POLY,
        python: false,
    },
    Setting {
        name: "max_iter",
        flag: "--max-iter",
        deprecated_flags: &["--iterations"],
        domain: Domain::Count,
        default: "1000 (mirror descent, ucd, poly from Python), 500 (mtl, lbfgs), 100 (wrappers)",
        doc: "iterations at most: mirror descent's and UCD's iterations, the cutting plane's \
              cuts, L-BFGS's iterations, the wrappers' outer iterations",
        learners: &[MirrorDescent, Ucd, Poly, Mtl, SimpleMkl, GaussSeidel, Lbfgs],
        python: true,
    },
    Setting {
        name: "q",
        flag: "--q",
        deprecated_flags: &[],
        domain: Domain::Norm,
        default: "1",
        doc: "the block norm over templates (1: sparse, 2: plain l2)",
        learners: &[Mtl],
        python: false,
    },
    Setting {
        name: "separation_step",
        flag: "--separation-step",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "0.1",
        doc: "find each cut at best + S (working-set solution - best), S in (0, 1]; 1 is the paper's loop",
        learners: &[Mtl],
        python: false,
    },
    Setting {
        name: "tol",
        flag: "--tol",
        deprecated_flags: &["--gap-tol"],
        domain: Domain::PositiveReal,
        default: "0.01",
        doc: "stop when the relative MKL duality gap is at most this",
        learners: WRAPPERS,
        python: true,
    },
    Setting {
        name: "svm_tol",
        flag: "--svm-tol",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "1e-3",
        doc: "the inner SMO solver's tolerance (libsvm's -e)",
        learners: WRAPPERS,
        python: true,
    },
    Setting {
        name: "epsilon",
        flag: "--epsilon",
        deprecated_flags: &["--svr-epsilon"],
        domain: Domain::NonNegativeReal,
        default: "0.1",
        doc: "the epsilon-insensitive zone of the regression loss (libsvm's -p)",
        learners: WRAPPERS,
        python: true,
    },
    Setting {
        name: "first_epochs",
        flag: "--first-epochs",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "20",
        doc: "sequences: PEGASOS epochs of the first inner solve",
        learners: WRAPPERS,
        python: false,
    },
    Setting {
        name: "warm_epochs",
        flag: "--warm-epochs",
        deprecated_flags: &[],
        domain: Domain::Count,
        default: "3",
        doc: "sequences: warm-started PEGASOS epochs of each later inner solve",
        learners: WRAPPERS,
        python: false,
    },
];

/// The regularization constant, which every learner takes ([`LearnerSpec`]'s `strength`,
/// not a learner setting of [`SETTINGS`]): `C`, with one meaning for every learner (the
/// weight of the sum of the losses against `1/2 ||f||^2`), or the learner's own `lambda`.
/// The command line's `--C` / `--lambda` (their own flags, beside the selection's), Python's
/// `C`; [`LearnerSpec::set`](super::LearnerSpec::set) sets them by name like any setting.
///
/// [`LearnerSpec`]: super::LearnerSpec
pub const STRENGTH: &[Setting] = &[
    Setting {
        name: "C",
        flag: "--C",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "1",
        doc: "weighs the sum of the losses against 1/2 ||f||^2, the same for every learner; without it, a table runs the built-in selection",
        learners: &LearnerKind::ALL,
        python: true,
    },
    Setting {
        name: "lambda",
        flag: "--lambda",
        deprecated_flags: &[],
        domain: Domain::PositiveReal,
        default: "none",
        doc: "the learner's own regularization constant, instead of C",
        learners: &LearnerKind::ALL,
        python: false,
    },
];

/// The setting of this name: a learner setting ([`SETTINGS`]) or the regularization
/// constant ([`STRENGTH`]).
pub(crate) fn setting(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().chain(STRENGTH).find(|s| s.name == name)
}

/// The setting of this command-line flag (current or deprecated).
#[cfg(test)]
pub(crate) fn setting_by_flag(flag: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.flag == flag || s.deprecated_flags.contains(&flag))
}

/// The learner families that take the setting `name` (none for a name not listed).
pub fn owners(name: &str) -> &'static [LearnerKind] {
    setting(name).map_or(&[], |s| s.learners)
}

/// The learner a structured task trains when none is named (and no built-in selection
/// runs): multi-template learning for a template tagger (`Task::Sequence` with a template
/// file), online otherwise; a template tagger given a setting (by registry name) that
/// multi-template learning does not take (`epochs`, `loss`, `eta0`, ...) stays online.
/// Why mtl: with every default, TWT UPOS folds 0-7 -> 9, it tags 93.12 % (small templates)
/// and 93.52 % (redundant) where SPOM with the paper's steps tags 92.48 % and 89.13 %, and
/// it stops at a certificate of its optimum rather than after a number of epochs
/// (docs/papers/tagging-mtl.md).
pub fn default_learner<'a>(
    task: Task,
    templates: bool,
    given: impl IntoIterator<Item = &'a str>,
) -> LearnerKind {
    let tagger = task == Task::Sequence && templates;
    let online_only = given
        .into_iter()
        .any(|name| name != "validation" && !owners(name).contains(&Mtl));
    if tagger && !online_only {
        Mtl
    } else {
        Online
    }
}

/// The settings of one learner family, in table order.
pub fn settings_of(kind: LearnerKind) -> impl Iterator<Item = &'static Setting> {
    SETTINGS.iter().filter(move |s| s.learners.contains(&kind))
}

/// The learner family's entry.
pub fn learner(kind: LearnerKind) -> &'static LearnerInfo {
    LEARNERS
        .iter()
        .find(|l| l.kind == kind)
        .expect("every learner family is registered")
}

// The parsers of a setting's text in its domain, for `LearnerSpec::set` and each family's
// `set`.

impl Domain {
    /// What a value of this domain is, in the words of an error message.
    pub fn describe(self) -> String {
        match self {
            Domain::PositiveReal => "a positive number".into(),
            Domain::NonNegativeReal => "a finite number >= 0".into(),
            Domain::Norm => "a number >= 1 such as 1, 4/3, 2, 4, or inf".into(),
            Domain::Count => "an integer, at least 1".into(),
            Domain::Choice(names) => format!("one of {}", names.join(", ")),
            Domain::Text => "text in the setting's grammar".into(),
            Domain::Switch => "on or off".into(),
        }
    }
}

/// The text as a real number of `s`'s domain.
pub(crate) fn real(s: &Setting, text: &str) -> Result<f64> {
    let bad = || Error::param(s.name, text, s.domain.describe());
    let v: f64 = text.trim().parse().map_err(|_| bad())?;
    let ok = match s.domain {
        Domain::PositiveReal => v.is_finite() && v > 0.0,
        Domain::NonNegativeReal => v.is_finite() && v >= 0.0,
        _ => false,
    };
    ok.then_some(v).ok_or_else(bad)
}

/// The text as a count (an integer >= 1).
pub(crate) fn count(s: &Setting, text: &str) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Error::param(s.name, text, s.domain.describe())),
    }
}

/// The text as a norm (lp-MKL's p, multi-template learning's q), in `parse_p`'s grammar.
pub(crate) fn norm(s: &Setting, text: &str) -> Result<f64> {
    parse_p(text).map_err(|_| Error::param(s.name, text, s.domain.describe()))
}

/// The text as a switch.
pub(crate) fn switch(s: &Setting, text: &str) -> Result<bool> {
    match text.trim() {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(Error::param(s.name, text, s.domain.describe())),
    }
}

/// A comma-separated list of finite numbers >= 0 (`rho2`).
pub(crate) fn reals(s: &Setting, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|t| match t.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(Error::param(
                s.name,
                text,
                "comma-separated finite numbers >= 0",
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_taggers_default_to_mtl_unless_an_online_setting_is_given() {
        assert_eq!(default_learner(Task::Sequence, true, []), Mtl);
        assert_eq!(
            default_learner(Task::Sequence, true, ["validation", "q"]),
            Mtl
        );
        assert_eq!(default_learner(Task::Sequence, true, ["epochs"]), Online);
        assert_eq!(default_learner(Task::Sequence, false, []), Online);
        assert_eq!(default_learner(Task::Parsing, true, []), Online);
    }

    #[test]
    fn every_learner_is_registered_once_in_order() {
        let kinds: Vec<LearnerKind> = LEARNERS.iter().map(|l| l.kind).collect();
        assert_eq!(kinds, LearnerKind::ALL);
        for l in LEARNERS {
            assert_eq!(learner(l.kind).kind, l.kind);
        }
    }

    #[test]
    fn names_and_flags_are_unique_and_well_formed() {
        let mut names: Vec<&str> = SETTINGS.iter().chain(STRENGTH).map(|s| s.name).collect();
        let mut flags: Vec<&str> = SETTINGS
            .iter()
            .chain(STRENGTH)
            .flat_map(|s| std::iter::once(s.flag).chain(s.deprecated_flags.iter().copied()))
            .collect();
        let (n, f) = (names.len(), flags.len());
        names.sort_unstable();
        names.dedup();
        flags.sort_unstable();
        flags.dedup();
        assert_eq!((names.len(), flags.len()), (n, f), "a name or flag twice");
        for s in SETTINGS {
            assert!(s.flag.starts_with("--"), "{}", s.flag);
            assert!(!s.learners.is_empty(), "{} has no learner", s.name);
            assert!(
                s.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                s.name
            );
            assert_eq!(setting_by_flag(s.flag), Some(s));
            assert_eq!(owners(s.name), s.learners);
        }
        assert!(owners("no_such_setting").is_empty());
    }

    /// One name per setting: the flag is the name (dashes for underscores) everywhere but
    /// the regularizer's short `--reg`; older flags live on as deprecated aliases.
    #[test]
    fn a_flag_is_its_setting_name() {
        for s in SETTINGS {
            let want = match s.name {
                "regularizer" => "--reg".to_string(),
                n => format!("--{}", n.replace('_', "-")),
            };
            assert_eq!(s.flag, want, "{}", s.name);
        }
        assert_eq!(setting_by_flag("--gap-tol").unwrap().name, "tol");
        assert_eq!(setting_by_flag("--svr-epsilon").unwrap().name, "epsilon");
        assert_eq!(setting_by_flag("--poly-degree").unwrap().name, "degree");
    }

    #[test]
    fn mirror_descent_and_the_wrappers_share_max_iter() {
        assert_eq!(setting_by_flag("--iterations").unwrap().name, "max_iter");
        for k in [MirrorDescent, Ucd, Poly, Mtl, SimpleMkl, GaussSeidel] {
            assert!(settings_of(k).any(|s| s.name == "max_iter"), "{k}");
        }
        assert!(settings_of(Online).all(|s| s.name != "max_iter"));
    }
}
