//! The shipped data sets the reproductions read, by name.

use crate::uci::UciTable;
use multikernel::data::{read_table, TargetKind};
use multikernel::engine::task::TaskKind;
use multikernel::error::{Error, Result};
use std::path::Path;

/// The UCI tables of `reproduce uci`: file stem (`DIR/NAME.csv`, or a generated table of
/// [`GENERATED_ROWS`] rows, seed [`GENERATED_SEED`]; `interactions`: [`INTERACTIONS_ROWS`]
/// rows of [`INTERACTIONS_FEATURES`] features, where a learned combination of the default
/// dictionary loses to one of its kernels, docs/selection.md) and task.
pub const UCI_TABLES: [(&str, TaskKind); 9] = [
    ("sonar", TaskKind::Binary),
    ("ionosphere", TaskKind::Binary),
    ("breast-cancer", TaskKind::Binary),
    ("pima-diabetes", TaskKind::Binary),
    ("glass", TaskKind::Multiclass),
    ("ringnorm", TaskKind::Binary),
    ("waveform", TaskKind::Multiclass),
    ("boston-housing", TaskKind::Regression),
    ("interactions", TaskKind::Binary),
];

/// Rows of the generated `interactions` table of `reproduce uci` (as `multikernel generate
/// interactions --n 600 --r 20 --seed 1`).
pub const INTERACTIONS_ROWS: usize = 600;
/// Features of the `interactions` table: the most that still gets per-feature kernels in
/// the default dictionary (`multikernel::kernel::dictionary::PER_FEATURE_MAX`).
pub const INTERACTIONS_FEATURES: usize = 20;

/// Rows of the generated tables (ringnorm, waveform; Breiman 1996) of `reproduce uci`.
pub const GENERATED_ROWS: usize = 1000;
/// Seed of the generated tables (as `multikernel generate NAME --n 1000 --seed 1`).
pub const GENERATED_SEED: u64 = 1;

/// Reads the UCI tables of [`UCI_TABLES`] from `dir`, all of them or the comma-separated
/// `names`, in the table's order.
pub fn load_uci(dir: &Path, names: Option<&str>) -> Result<Vec<UciTable>> {
    let wanted: Option<Vec<&str>> = names.map(|s| s.split(',').map(str::trim).collect());
    if let Some(w) = &wanted {
        if let Some(n) = w.iter().find(|n| !UCI_TABLES.iter().any(|(t, _)| t == *n)) {
            return Err(Error::param(
                "data set",
                n,
                format!("one of {}", UCI_TABLES.map(|t| t.0).join(", ")),
            ));
        }
    }
    let mut out = Vec::new();
    for (name, task) in UCI_TABLES {
        if wanted.as_ref().is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        let target = if task == TaskKind::Regression {
            TargetKind::Real
        } else {
            TargetKind::Classes
        };
        let data = match name {
            "ringnorm" => multikernel::data::synthetic::ringnorm(GENERATED_ROWS, GENERATED_SEED),
            "waveform" => multikernel::data::synthetic::waveform(GENERATED_ROWS, GENERATED_SEED),
            "interactions" => multikernel::data::synthetic::interactions(
                INTERACTIONS_ROWS,
                INTERACTIONS_FEATURES,
                GENERATED_SEED,
            )?,
            _ => read_table(&dir.join(format!("{name}.csv")), None, target, None, None)?,
        };
        out.push(UciTable {
            name: name.to_string(),
            data,
            task,
        });
    }
    Ok(out)
}
