//! Error values of the library. Algorithms return these; the CLI prints them.

use std::path::PathBuf;

/// Every failure the library reports. Messages name the file, the line and what was
/// expected, so a user can fix the input without reading the code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line of an input file is malformed.
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: PathBuf,
        line: usize,
        msg: String,
    },
    /// A data set, option or hyper-parameter is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// An allocation would exceed the configured memory limit.
    #[error("memory limit exceeded: {0}")]
    Memory(String),
    /// A model file is unreadable, of the wrong version, or inconsistent.
    #[error("model file {path}: {msg}")]
    Model { path: PathBuf, msg: String },
    /// A numerical routine failed (e.g. a matrix that should be positive definite is not).
    #[error("numerical failure: {0}")]
    Numerical(String),
}

/// Result with the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
}
