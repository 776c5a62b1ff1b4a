//! `multikernel generate`: the seeded generators of [`multikernel::data::synthetic`] written
//! as CSV files that `train` / `eval` read back (header `x1..xd,y`).

use crate::cli::GenerateArgs;
use anyhow::{bail, Result};
use multikernel::data::synthetic::{ringnorm, waveform, MonomialProblem};
use multikernel::data::{Dataset, Targets};

/// Terms and maximal degree of the Sec. 5.2 problem.
const POLY_TERMS: usize = 10;
const POLY_DEGREE: usize = 3;

pub fn run(a: &GenerateArgs) -> Result<()> {
    if a.n == 0 {
        bail!("--n must be at least 1");
    }
    let ds = match a.dataset.trim().to_ascii_lowercase().as_str() {
        "polynomial" | "synthetic" => {
            let problem = MonomialProblem::new(a.r, POLY_TERMS, POLY_DEGREE, a.problem_seed)?;
            eprintln!("target: {}", problem.term_names().join(" + "));
            problem.generate(a.n, a.seed)
        }
        "ringnorm" => ringnorm(a.n, a.seed),
        "waveform" => waveform(a.n, a.seed),
        other => bail!("unknown data set '{other}': expected polynomial, ringnorm or waveform"),
    };
    multikernel::io::write_atomic(&a.out, to_csv(&ds).as_bytes())?;
    eprintln!(
        "wrote {} points x {} features to {}",
        ds.len(),
        ds.x.cols,
        a.out.display()
    );
    Ok(())
}

/// Features then the target; numbers in Rust's shortest round-trip form.
fn to_csv(ds: &Dataset) -> String {
    let mut out = ds.feature_names.join(",");
    out.push_str(",y\n");
    for i in 0..ds.len() {
        for v in ds.x.row(i) {
            out.push_str(&format!("{v},"));
        }
        match &ds.targets {
            Targets::Real(y) => out.push_str(&format!("{}\n", y[i])),
            Targets::Classes { classes, y } => {
                out.push_str(&classes[y[i]]);
                out.push('\n');
            }
        }
    }
    out
}
