//! Options of `reproduce ocr` ([`crate::ocr`]).

use super::Output;
use crate::ocr::{self, OcrConfig};
use crate::Report;
use multikernel::error::Result;
use std::path::PathBuf;

/// OCR handwriting, Table 1 of Martins et al. (2011): SPOM on sequences.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct OcrOptions {
    #[command(flatten)]
    pub output: Output,
    /// Training folds (each tested on the other nine): e.g. 0-9, 3, 0,4,7.
    #[arg(long, default_value = "0-9")]
    pub folds: String,
    #[arg(long, default_value_t = 20)]
    pub epochs: usize,
    /// Rerun the hyper-parameter selection on each training fold.
    #[arg(long)]
    pub cv: bool,
    /// Only these rows (comma separated, e.g. mkl-lqg,quadratic).
    #[arg(long)]
    pub methods: Option<String>,
    /// The OCR data (letter.data, plain or gzip).
    #[arg(long, default_value = "data/ocr/letter.data.gz")]
    pub data: PathBuf,
    /// Loss: hinge (structured SVM) or crf.
    #[arg(long, default_value = "hinge")]
    pub loss: String,
}

impl Default for OcrOptions {
    fn default() -> Self {
        OcrOptions {
            output: Output::default(),
            folds: "0-9".into(),
            epochs: 20,
            cv: false,
            methods: None,
            data: PathBuf::from("data/ocr/letter.data.gz"),
            loss: "hinge".into(),
        }
    }
}

impl OcrOptions {
    /// The experiment's config, the fold list and the loss parsed.
    pub fn config(&self) -> Result<OcrConfig> {
        Ok(OcrConfig {
            data: self.data.clone(),
            folds: multikernel::data::ocr::parse_folds(&self.folds)?,
            epochs: self.epochs,
            cv: self.cv,
            out_dir: self.output.out_dir.clone(),
            methods: self
                .methods
                .as_ref()
                .map(|m| m.split(',').map(|s| s.trim().to_string()).collect()),
            loss: self.loss.parse()?,
            ..OcrConfig::default()
        })
    }

    /// Runs [`ocr::run`] on [`OcrOptions::config`], creating the output directory.
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        let cfg = self.config()?;
        self.output.create_out_dir()?;
        ocr::run(&cfg, &mut |line| log(line))
    }
}
