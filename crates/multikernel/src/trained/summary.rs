//! What a trained model says about itself: the learner, the task, the chosen settings and
//! the kernels with their weights ([`Summary`]), the same for every learner so the CLI and
//! the Python package print them without knowing the learner.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One row of a model's kernel table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    pub name: String,
    /// One value per column of [`Summary::columns`] (e.g. weight and block norm).
    pub values: Vec<f64>,
}

/// A model's self-description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The learner, with its paper (`MKL-GOMP (Sindhwani & Lozano 2012)`).
    pub learner: String,
    /// `binary`, `multiclass`, `regression` or `sequence`.
    pub task: String,
    /// Class names, or the label alphabet of a sequence model.
    pub classes: Vec<String>,
    pub n_features: usize,
    /// The settings the model was trained with, as name and value (`lambda`, `C`, `reg`,
    /// `p`, `degree`, ...), in a fixed order.
    pub settings: Vec<(String, String)>,
    /// One line on the fit: what was chosen and why the run stopped.
    pub headline: String,
    /// Names of the value columns of the kernel table (`weight`, `norm`, `improvement`).
    pub columns: Vec<String>,
    /// Rows are in the order the learner chose the kernels (MKL-GOMP): print their rank.
    pub ranked: bool,
    pub kernels: Vec<KernelRow>,
    /// Anything else worth a line (e.g. which input each product-kernel factor is).
    pub notes: Vec<String>,
}

/// Kernel rows printed by [`Summary::kernel_table`] before `... N more`.
pub const SHOWN_KERNELS: usize = 40;

impl Summary {
    /// Every kernel of the table with one weight, comparable across learners: lp-MKL's
    /// `theta` (unit lp norm) or polynomial MKL's `weight`; the group norms normalized to
    /// sum 1 for the online learner (the kernel weights of squared l2,1 MKL, `theta_m`
    /// proportional to `||w_m||`); 1 for each kernel MKL-GOMP chose, in the order it chose
    /// them.
    pub fn kernel_weights(&self) -> Vec<(String, f64)> {
        let column = |name: &str| self.columns.iter().position(|c| c == name);
        let values: Vec<f64> = match (column("theta").or(column("weight")), column("norm")) {
            (Some(c), _) => self.kernels.iter().map(|k| k.values[c]).collect(),
            (None, Some(c)) => {
                let norms: Vec<f64> = self.kernels.iter().map(|k| k.values[c]).collect();
                let total: f64 = norms.iter().sum();
                if total > 0.0 {
                    norms.iter().map(|v| v / total).collect()
                } else {
                    norms
                }
            }
            (None, None) => vec![1.0; self.kernels.len()],
        };
        self.kernels
            .iter()
            .map(|k| k.name.clone())
            .zip(values)
            .collect()
    }

    /// The kernel table: a header, then at most `limit` rows and a `... N more` line.
    pub fn kernel_table(&self, limit: usize) -> String {
        let mut out = String::new();
        let mut head = String::from(" ");
        if self.ranked {
            head.push_str(&format!(" {:>5}", "order"));
        }
        for c in &self.columns {
            head.push_str(&format!("  {c:>12}"));
        }
        out.push_str(&format!("{head}  kernel\n"));
        for (i, row) in self.kernels.iter().take(limit).enumerate() {
            let mut line = String::from(" ");
            if self.ranked {
                line.push_str(&format!(" {:>5}", i + 1));
            }
            for v in &row.values {
                line.push_str(&format!("  {}", cell(*v)));
            }
            out.push_str(&format!("{line}  {}\n", row.name));
        }
        if self.kernels.len() > limit {
            out.push_str(&format!("  ... {} more\n", self.kernels.len() - limit));
        }
        out
    }

    /// The value of a setting by name.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A table cell: six decimals, or scientific notation for very small or large values.
fn cell(v: f64) -> String {
    if v == 0.0 || (1e-4..1e6).contains(&v.abs()) {
        format!("{v:>12.6}")
    } else {
        format!("{v:>12.4e}")
    }
}

/// A positive constant in a readable form: `0.0048`, `12.5000`, `1.000e-6`.
pub(crate) fn num(v: f64) -> String {
    if (1e-3..1e4).contains(&v.abs()) {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// A switch in words: `on` or `off`.
pub(crate) fn yes_no(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

/// Kernel rows of one value each (a weight), in the order given.
pub(crate) fn value_rows(pairs: Vec<(String, f64)>) -> Vec<KernelRow> {
    pairs
        .into_iter()
        .map(|(name, v)| KernelRow {
            name,
            values: vec![v],
        })
        .collect()
}

impl fmt::Display for Summary {
    /// Everything: learner and task, classes, settings, the headline, the kernel table (the
    /// first [`SHOWN_KERNELS`] rows; `{:#}` shows all of them), then the notes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "learner: {}", self.learner)?;
        writeln!(f, "task: {}, features: {}", self.task, self.n_features)?;
        if !self.classes.is_empty() {
            let label = if self.task == "sequence" {
                "labels"
            } else {
                "classes"
            };
            writeln!(f, "{label}: {}", self.classes.join(", "))?;
        }
        if !self.settings.is_empty() {
            let s: Vec<String> = self
                .settings
                .iter()
                .map(|(n, v)| format!("{n} {v}"))
                .collect();
            writeln!(f, "settings: {}", s.join(", "))?;
        }
        writeln!(f, "{}", self.headline)?;
        let limit = if f.alternate() {
            usize::MAX
        } else {
            SHOWN_KERNELS
        };
        f.write_str(&self.kernel_table(limit))?;
        for n in &self.notes {
            writeln!(f, "  {n}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_ranks_and_truncates() {
        let s = Summary {
            learner: "test".into(),
            task: "binary".into(),
            classes: vec!["a".into(), "b".into()],
            n_features: 3,
            settings: vec![("lambda".into(), "0.1".into())],
            headline: "chose 3".into(),
            columns: vec!["improvement".into()],
            ranked: true,
            kernels: (0..3)
                .map(|i| KernelRow {
                    name: format!("k{i}"),
                    values: vec![1.0 / (i + 1) as f64],
                })
                .collect(),
            notes: vec![],
        };
        let t = s.kernel_table(2);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].contains("order") && lines[0].contains("improvement"));
        assert!(lines[2].trim_start().starts_with("2 ") && lines[2].ends_with("k1"));
        assert_eq!(lines[3].trim(), "... 1 more");
        assert_eq!(s.setting("lambda"), Some("0.1"));
        let text = s.to_string();
        assert!(
            text.contains("classes: a, b") && text.contains("k2"),
            "{text}"
        );
        assert_eq!(num(0.00481), "0.0048");
        assert_eq!(num(1e-6), "1.000e-6");
    }
}
