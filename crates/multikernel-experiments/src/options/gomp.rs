//! Options of `reproduce gomp` ([`crate::gomp`]).

use super::Output;
use crate::gomp::{self, GompConfig};
use crate::Report;
use multikernel::data::{read_table, TargetKind};
use multikernel::error::Result;
use std::path::PathBuf;

/// MKL-GOMP against lp-MKL: the simulation of Sindhwani & Lozano (2012) and glass.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct GompOptions {
    #[command(flatten)]
    pub output: Output,
    /// Repetitions per sparsity level.
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    /// The glass table (skipped when the file is absent).
    #[arg(long, default_value = "data/uci/glass.csv")]
    pub glass: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl Default for GompOptions {
    fn default() -> Self {
        GompOptions {
            output: Output::default(),
            reps: 10,
            glass: PathBuf::from("data/uci/glass.csv"),
            seed: 1,
        }
    }
}

impl GompOptions {
    /// The experiment's config, with the glass table read (`log` says when it is absent
    /// and skipped).
    pub fn config(&self, log: &dyn Fn(&str)) -> Result<GompConfig> {
        let glass = if self.glass.exists() {
            Some(read_table(
                &self.glass,
                None,
                TargetKind::Classes,
                None,
                None,
            )?)
        } else {
            log(&format!(
                "{} not found: glass skipped",
                self.glass.display()
            ));
            None
        };
        Ok(GompConfig {
            reps: self.reps,
            seed: self.seed,
            glass,
            out_dir: self.output.out_dir.clone(),
            ..GompConfig::default()
        })
    }

    /// Runs [`gomp::run`] on [`GompOptions::config`], creating the output directory.
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        let cfg = self.config(log)?;
        self.output.create_out_dir()?;
        gomp::run(&cfg, &mut |line| log(line))
    }
}
