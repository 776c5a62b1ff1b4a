//! Error values of the library. Algorithms return these; the CLI and the Python package turn
//! them into messages. Messages name the file, the line, the parameter and what was expected,
//! so a user can fix the input without reading the code; they never name a command-line flag
//! (the CLI maps [`Error::InvalidParameter::name`] to its own flags).
//!
//! A run that stops early (cancelled, out of time) is not an error: see [`crate::run`].

use std::path::PathBuf;

/// Every failure the library reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An output that cannot be written as asked, found before any work ([`crate::io`]:
    /// one of the run's inputs, another output, a folder that takes no file, a checkpoint
    /// that is not a regular file). `name` is the caller's word for the output (a flag such
    /// as `--out`, a parameter name), given to [`crate::io::check_outputs`].
    #[error("{name} {}: {msg}", path.display())]
    Output {
        name: String,
        path: PathBuf,
        msg: String,
    },
    /// A line of an input file is malformed.
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    /// A hyper-parameter outside its range, or a value that cannot be parsed. `name` is the
    /// library's name of the parameter (`C`, `eta0`, `max_kernels`, `kernel`, ...).
    #[error("{name} = {value}: {expected}")]
    InvalidParameter {
        name: String,
        value: String,
        /// What would be accepted, e.g. "a positive number".
        expected: String,
    },
    /// Two things whose sizes must agree do not (features of a test file and a model, rows
    /// and targets, the arrays stored in a model file).
    #[error("{what}: expected {expected}, found {found}")]
    ShapeMismatch {
        what: String,
        expected: usize,
        found: usize,
    },
    /// The data do not fit the task: no rows, one class for a classifier, class labels where
    /// values are needed, a label the model never saw, ...
    #[error("{0}")]
    Data(String),
    /// A combination the learner does not offer (e.g. several outputs for a learner of one).
    #[error("{0}")]
    Unsupported(String),
    /// An allocation would exceed the configured memory limit; nothing was allocated.
    #[error(
        "{what} needs {} but the memory limit is {}; raise the limit to {} GiB or more (or \
         use fewer or smaller inputs)",
        fmt_bytes(*needed),
        fmt_bytes(*limit),
        suggest_gib(*needed)
    )]
    Memory {
        what: String,
        /// Bytes the allocation needs.
        needed: usize,
        /// Bytes the limit allows.
        limit: usize,
    },
    /// A model (file or bytes) is unreadable, of an unknown version, or inconsistent.
    #[error("model {origin}: {msg}")]
    Model {
        /// The file, or `<bytes>` for a model read from memory.
        origin: String,
        msg: String,
    },
    /// A numerical routine failed (e.g. a matrix that should be positive definite is not).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// An error in one named input of a call (`validation`: the validation file of
    /// [`crate::estimator::source`]), so a shell can name its own flag for it.
    #[error("{name}: {source}")]
    Input {
        /// The library's name of the input (a setting name, as in
        /// [`Error::InvalidParameter`]).
        name: &'static str,
        #[source]
        source: Box<Error>,
    },
}

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// [`Error::InvalidParameter`] from a parameter's name, its value and what is accepted.
    pub fn param(
        name: impl Into<String>,
        value: impl std::fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Error::InvalidParameter {
            name: name.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// [`Error::ShapeMismatch`].
    pub fn shape(what: impl Into<String>, expected: usize, found: usize) -> Self {
        Error::ShapeMismatch {
            what: what.into(),
            expected,
            found,
        }
    }

    /// [`Error::Data`].
    pub fn data(msg: impl Into<String>) -> Self {
        Error::Data(msg.into())
    }

    /// [`Error::Unsupported`].
    pub(crate) fn unsupported(msg: impl Into<String>) -> Self {
        Error::Unsupported(msg.into())
    }

    /// [`Error::Input`]: this error, in the input named `name`.
    pub(crate) fn within(self, name: &'static str) -> Self {
        Error::Input {
            name,
            source: Box::new(self),
        }
    }

    /// [`Error::Model`] for a model file or `<bytes>`.
    pub(crate) fn model(origin: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Model {
            origin: origin.into(),
            msg: msg.into(),
        }
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// Bytes in GiB (two decimals) from 0.1 GiB up, else in MiB.
pub(crate) fn fmt_bytes(b: usize) -> String {
    let g = b as f64 / GIB;
    if g >= 0.1 {
        format!("{g:.2} GiB")
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// The smallest whole number of GiB (with 10% headroom) that admits `bytes`.
pub fn suggest_gib(bytes: usize) -> u64 {
    ((bytes as f64 * 1.1 / GIB).ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_went_wrong() {
        let e = Error::param("C", -1.0, "a positive number");
        assert_eq!(e.to_string(), "C = -1: a positive number");
        let e = Error::shape("features of test.csv", 60, 59);
        assert_eq!(e.to_string(), "features of test.csv: expected 60, found 59");
        let e = Error::Memory {
            what: "3 Gram matrices".into(),
            needed: 3 << 30,
            limit: 1 << 30,
        };
        let m = e.to_string();
        assert!(
            m.contains("3.00 GiB") && m.contains("1.00 GiB") && m.contains("to 4 GiB"),
            "{m}"
        );
        assert_eq!(fmt_bytes(1 << 20), "1.0 MiB");
        assert_eq!(suggest_gib(1), 1);
    }
}
