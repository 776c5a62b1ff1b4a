//! Options of `reproduce uci` ([`crate::uci`]), and the tables and splits it
//! writes for a peer's script.

use super::Output;
use crate::tables::load_uci;
use crate::uci::{self, UciConfig, UciTable};
use crate::Report;
use multikernel::error::{Error, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

/// UCI tables: single kernels, their average, sparse and non-sparse MKL (online, Alg. 1).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct UciOptions {
    #[command(flatten)]
    pub output: Output,
    /// Number of random 70/30 splits.
    #[arg(long, default_value_t = 10)]
    pub splits: usize,
    /// Directory holding the UCI CSV files.
    #[arg(long, default_value = "data/uci")]
    pub data_dir: PathBuf,
    /// Only these data sets (comma separated).
    #[arg(long)]
    pub datasets: Option<String>,
    #[arg(long, default_value_t = 20)]
    pub epochs: usize,
    /// Grid of C searched by validation (comma separated; default: the recorded grid).
    #[arg(long, value_delimiter = ',')]
    pub c_grid: Option<Vec<f64>>,
    /// Grid of eta0 searched by validation (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub eta0_grid: Option<Vec<f64>>,
    /// Use the averaged iterate.
    #[arg(long)]
    pub average: bool,
    /// Seed of the splits.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Do not try the step rule 1/(lambda t); only eta0/sqrt(t).
    #[arg(long)]
    pub no_inv: bool,
    /// Only these rows (comma separated): linear, poly2, rbf, average, mkl-l21sq, mkl-l2q
    /// (the online learner), auto, single-cv (built-in selection). Default: all.
    #[arg(long, value_delimiter = ',')]
    pub methods: Option<Vec<String>>,
}

impl Default for UciOptions {
    fn default() -> Self {
        UciOptions {
            output: Output::default(),
            splits: 10,
            data_dir: PathBuf::from("data/uci"),
            datasets: None,
            epochs: 20,
            c_grid: None,
            eta0_grid: None,
            average: false,
            seed: 1,
            no_inv: false,
            methods: None,
        }
    }
}

impl UciOptions {
    /// The experiment's config, the row names checked.
    pub fn config(&self) -> Result<UciConfig> {
        let d = UciConfig::default();
        let cfg = UciConfig {
            splits: self.splits,
            epochs: self.epochs,
            seed: self.seed,
            averaging: self.average,
            try_inv: !self.no_inv,
            c_grid: self.c_grid.clone().unwrap_or(d.c_grid.clone()),
            eta0_grid: self.eta0_grid.clone().unwrap_or(d.eta0_grid.clone()),
            methods: self.methods.clone(),
            ..d
        };
        let known = |m: &str| {
            uci::methods().iter().any(|(n, _, _)| *n == m) || uci::SELECTED_METHODS.contains(&m)
        };
        if let Some(m) = cfg.methods.iter().flatten().find(|m| !known(m)) {
            return Err(Error::param(
                "methods",
                m,
                "rows among linear, poly2, rbf, average, mkl-l21sq, mkl-l2q, auto, single-cv",
            ));
        }
        Ok(cfg)
    }

    /// Reads the tables, writes them and their splits to [`Output::out_dir`] if set
    /// ([`write_uci_splits`]), and runs [`uci::run`] on [`UciOptions::config`].
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        let cfg = self.config()?;
        let tables = load_uci(&self.data_dir, self.datasets.as_deref())?;
        if let Some(dir) = &self.output.out_dir {
            write_uci_splits(dir, &tables, &cfg)?;
            log(&format!("tables and splits written to {}", dir.display()));
        }
        log(&format!(
            "reproduce uci: {} splits, C from {:?}, step rule from {:?} by {}-fold validation",
            cfg.splits,
            cfg.c_grid,
            cfg.step_rules(),
            cfg.folds
        ));
        uci::run(&tables, &cfg, log)
    }
}

/// `DIR/uci-splits.json` and `DIR/data/NAME.csv`: every table as CSV (the generated ones
/// too) and the rows of each split ([`uci::split_rows`]), so that a peer's script trains on
/// exactly the same rows (benches/peers/sklearn_svm). Each file is written whole or not at
/// all.
pub fn write_uci_splits(dir: &Path, tables: &[UciTable], cfg: &UciConfig) -> Result<()> {
    let data_dir = dir.join("data");
    multikernel::io::create_dir(&data_dir)?;
    let mut out = Vec::new();
    for t in tables {
        let file = data_dir.join(format!("{}.csv", t.name));
        multikernel::io::write_atomic(&file, multikernel::data::to_csv(&t.data).as_bytes())?;
        let splits: Vec<serde_json::Value> = (0..cfg.splits)
            .map(|s| {
                let (train, test) = uci::split_rows(t, s, cfg);
                json!({"train": train, "test": test})
            })
            .collect();
        out.push(json!({
            "name": t.name,
            "task": multikernel::estimator::Task::from(t.task).to_string(),
            "file": format!("data/{}.csv", t.name),
            "splits": splits,
        }));
    }
    let text = json!({"seed": cfg.seed, "tables": out}).to_string();
    multikernel::io::write_atomic(&dir.join("uci-splits.json"), text.as_bytes())
}
