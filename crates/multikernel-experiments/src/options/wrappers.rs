//! Options of `reproduce wrappers` ([`crate::wrappers`]).

use super::{at_least_one, Output};
use crate::wrappers::{self, WrappersConfig};
use crate::Report;
use multikernel::error::Result;
use std::path::PathBuf;

/// SPOM against wrapper MKL on OCR (Figure 2 of Martins et al. 2011).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct WrappersOptions {
    #[command(flatten)]
    pub output: Output,
    /// The OCR data (letter.data, plain or gzip).
    #[arg(long, default_value = "data/ocr/letter.data.gz")]
    pub data: PathBuf,
    /// The training fold (the accuracy curves use a sample of the others).
    #[arg(long, default_value_t = 0)]
    pub fold: usize,
    /// C = 1/(lambda N).
    #[arg(long = "C", default_value_t = 100.0)]
    pub c: f64,
    /// The figure's passes over the data.
    #[arg(long, default_value_t = 150)]
    pub epochs: usize,
    /// Length of each method's run; the optimum is the best objective of these runs.
    #[arg(long, default_value_t = 1000)]
    pub optimum_epochs: usize,
    /// PEGASOS epochs in the wrappers' first SVM call.
    #[arg(long, default_value_t = 20)]
    pub first_epochs: usize,
    /// PEGASOS epochs in each later (warm-started) call.
    #[arg(long, default_value_t = 3)]
    pub warm_epochs: usize,
    /// SPOM's eta0 (default: the mkl-lqg row's of reproduce ocr).
    #[arg(long)]
    pub spom_eta0: Option<f64>,
    /// Test words of the accuracy curves (a seeded sample; 0 = all).
    #[arg(long, default_value_t = 500)]
    pub curve_words: usize,
    /// Only these methods (comma separated: spom, gauss-seidel, simplemkl).
    #[arg(long, value_delimiter = ',')]
    pub methods: Option<Vec<String>>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl Default for WrappersOptions {
    fn default() -> Self {
        WrappersOptions {
            output: Output::default(),
            data: PathBuf::from("data/ocr/letter.data.gz"),
            fold: 0,
            c: 100.0,
            epochs: 150,
            optimum_epochs: 1000,
            first_epochs: 20,
            warm_epochs: 3,
            spom_eta0: None,
            curve_words: 500,
            methods: None,
            seed: 1,
        }
    }
}

impl WrappersOptions {
    /// The experiment's config, the options checked.
    pub fn config(&self) -> Result<WrappersConfig> {
        at_least_one("epochs", self.epochs)?;
        at_least_one("first_epochs", self.first_epochs)?;
        at_least_one("warm_epochs", self.warm_epochs)?;
        Ok(WrappersConfig {
            data: self.data.clone(),
            fold: self.fold,
            c: self.c,
            epochs: self.epochs,
            optimum_epochs: self.optimum_epochs,
            first_epochs: self.first_epochs,
            warm_epochs: self.warm_epochs,
            spom_eta0: self.spom_eta0,
            curve_words: self.curve_words,
            seed: self.seed,
            methods: self.methods.clone(),
            out_dir: self.output.out_dir.clone(),
            ..WrappersConfig::default()
        })
    }

    /// Runs [`wrappers::run`] on [`WrappersOptions::config`].
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        wrappers::run(&self.config()?, &mut |line| log(line))
    }
}
