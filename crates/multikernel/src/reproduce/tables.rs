//! The shipped data sets the reproductions read, by name.

use crate::data::{read_table, TargetKind};
use crate::error::{Error, Result};
use crate::reproduce::uci::UciTable;
use crate::task::TaskKind;
use std::path::Path;

/// The UCI tables of `reproduce uci`: file stem (`DIR/NAME.csv`) and task.
pub const UCI_TABLES: [(&str, TaskKind); 5] = [
    ("sonar", TaskKind::Binary),
    ("ionosphere", TaskKind::Binary),
    ("breast-cancer", TaskKind::Binary),
    ("pima-diabetes", TaskKind::Binary),
    ("boston-housing", TaskKind::Regression),
];

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
        let data = read_table(&dir.join(format!("{name}.csv")), None, target, None, None)?;
        out.push(UciTable {
            name: name.to_string(),
            data,
            task,
        });
    }
    Ok(out)
}
