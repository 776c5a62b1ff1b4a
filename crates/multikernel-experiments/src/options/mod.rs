//! What a program sets to run a reproduction, in the terms of `multikernel reproduce NAME`:
//! one options type per experiment (its defaults are the command's), checked before any work
//! and turned into that experiment's config; [`Reproduction`] names one of them and runs it;
//! [`Output`] prints the report's table and writes its JSON rows.
//!
//! The options derive `clap::Args` (and [`Reproduction`]
//! `clap::Subcommand`), so the command line's flags, defaults and help are declared here, once,
//! beside the fields they set; the CLI only mounts [`Reproduction`] under `reproduce`.
//! Errors are the library's ([`Error::InvalidParameter`] names the option, e.g. `epochs`),
//! which a shell maps to its own flag names.
//!
//! `multikernel reproduce uci --splits 2` from a Rust program:
//!
//! ```no_run
//! use multikernel_experiments::options::{Output, Reproduction, UciOptions};
//! # fn main() -> multikernel::Result<()> {
//! let r = Reproduction::Uci(UciOptions { splits: 2, ..UciOptions::default() });
//! let report = r.run(&|line| eprintln!("{line}"))?;
//! Output::default().finish(&report, &mut std::io::stdout(), &|_| {})?;
//! # Ok(())
//! # }
//! ```

mod gomp;
mod mirror_descent;
mod mtl;
mod ocr;
mod parsing;
mod uci;
mod wrappers;

pub use gomp::GompOptions;
pub use mirror_descent::MirrorDescentOptions;
pub use mtl::MtlOptions;
pub use ocr::OcrOptions;
pub use parsing::ParsingOptions;
pub use uci::{write_uci_splits, UciOptions};
pub use wrappers::WrappersOptions;

use crate::Report;
use multikernel::error::{Error, Result};
use std::io::Write;
use std::path::PathBuf;

/// Where a reproduction's report goes besides the printed table.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct Output {
    /// Write the rows as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Directory for CSV and SVG files.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
}

impl Output {
    /// Writes the report's table (and a newline) to `out`, then, with [`Output::json`], the
    /// JSON rows ([`Report::to_json`]) to that file, whole or not at all.
    pub fn finish(&self, report: &Report, out: &mut dyn Write, log: &dyn Fn(&str)) -> Result<()> {
        writeln!(out, "{}", report.table).map_err(|source| Error::Io {
            path: PathBuf::from("<the report's table>"),
            source,
        })?;
        if let Some(path) = &self.json {
            multikernel::io::write_atomic(path, report.to_json().as_bytes())?;
            log(&format!("rows written to {}", path.display()));
        }
        Ok(())
    }

    /// Creates [`Output::out_dir`] (and its parents) if it is set.
    fn create_out_dir(&self) -> Result<()> {
        match &self.out_dir {
            Some(d) => multikernel::io::create_dir(d),
            None => Ok(()),
        }
    }
}

/// One reproduction and its options: the subcommands of `multikernel reproduce`.
#[derive(Debug, Clone, PartialEq, clap::Subcommand)]
pub enum Reproduction {
    /// UCI tables: single kernels, their average, sparse and non-sparse MKL (online, Alg. 1).
    Uci(UciOptions),
    /// OCR handwriting, Table 1 of Martins et al. (2011): SPOM on sequences.
    Ocr(OcrOptions),
    /// MKL-GOMP against lp-MKL: the simulation of Sindhwani & Lozano (2012) and glass.
    Gomp(GompOptions),
    /// Randomized mirror descent over polynomial product kernels: Figures 1-3 of Afkanpour
    /// et al. (2013).
    MirrorDescent(MirrorDescentOptions),
    /// Dependency parsing with templates as groups (Martins et al. 2011, Sec. 4.2): the
    /// Turkish Web Treebank, web and wiki.
    Parsing(ParsingOptions),
    /// Multi-template learning (Mao & Tsang, Sec. 3) against SPOM, the l2 structural SVM and
    /// the l2 CRF: TWT UPOS tagging with the small and redundant CRF++ template files, and
    /// parsing (--parsing).
    Mtl(MtlOptions),
    /// SPOM against wrapper MKL (Gauss-Seidel, SimpleMKL around structured PEGASOS) on OCR:
    /// Figure 2 of Martins et al. (2011), objective and accuracy against epochs and seconds.
    Wrappers(WrappersOptions),
}

impl Reproduction {
    /// Where the report goes.
    pub fn output(&self) -> &Output {
        match self {
            Reproduction::Uci(o) => &o.output,
            Reproduction::Ocr(o) => &o.output,
            Reproduction::Gomp(o) => &o.output,
            Reproduction::MirrorDescent(o) => &o.output,
            Reproduction::Parsing(o) => &o.output,
            Reproduction::Mtl(o) => &o.output,
            Reproduction::Wrappers(o) => &o.output,
        }
    }

    /// The files and folders the experiment reads, by option name (`data_dir`, `glass`, ...),
    /// so that a shell can refuse an output that would overwrite one of them before the run.
    pub fn inputs(&self) -> Vec<(&'static str, &std::path::Path)> {
        match self {
            Reproduction::Uci(o) => vec![("data_dir", o.data_dir.as_path())],
            Reproduction::Ocr(o) => vec![("data", o.data.as_path())],
            Reproduction::Gomp(o) => vec![("glass", o.glass.as_path())],
            Reproduction::MirrorDescent(o) => vec![("data_dir", o.data_dir.as_path())],
            Reproduction::Parsing(o) => {
                let mut v = vec![("data_dir", o.data_dir.as_path())];
                v.extend(o.templates.as_deref().map(|t| ("templates", t)));
                v
            }
            Reproduction::Mtl(o) => {
                vec![
                    ("data_dir", o.data_dir.as_path()),
                    ("template_dir", o.template_dir.as_path()),
                ]
            }
            Reproduction::Wrappers(o) => vec![("data", o.data.as_path())],
        }
    }

    /// Checks the options, reads the data and runs the experiment; `log` receives the
    /// progress lines. Bad options fail before any data is read.
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        match self {
            Reproduction::Uci(o) => o.run(log),
            Reproduction::Ocr(o) => o.run(log),
            Reproduction::Gomp(o) => o.run(log),
            Reproduction::MirrorDescent(o) => o.run(log),
            Reproduction::Parsing(o) => o.run(log),
            Reproduction::Mtl(o) => o.run(log),
            Reproduction::Wrappers(o) => o.run(log),
        }
    }
}

/// `Err` naming `name` unless `value >= 1`.
fn at_least_one(name: &str, value: usize) -> Result<()> {
    if value == 0 {
        return Err(Error::param(name, value, "at least 1"));
    }
    Ok(())
}

/// `Err` naming `name` unless `value` is a finite number above 0.
fn positive(name: &str, value: f64) -> Result<()> {
    if !(value.is_finite() && value > 0.0) {
        return Err(Error::param(name, value, "a positive number"));
    }
    Ok(())
}
