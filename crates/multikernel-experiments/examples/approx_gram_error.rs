//! The Gram accuracy table of docs/scaling.md: relative Frobenius error
//! `||K~ - K||_F / ||K||_F` of the approximate training Gram matrix (Nystrom, random Fourier
//! features, polynomial sketch) on ionosphere (351 rows, 34 features), mean of three seeds,
//! by dimension.
//!
//! Run: `cargo run --release -p multikernel --example approx_gram_error [TABLE]` (default
//! `data/uci/ionosphere.csv`).

use multikernel::data::{read_table, Matrix, TargetKind};
use multikernel::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
use std::path::PathBuf;

fn dense(k: &FittedKernel, x: &Matrix, limit: &MemoryLimit) -> multikernel::Result<Matrix> {
    match k.gram_sym(x, limit)? {
        Gram::Dense(m) => Ok(m),
        Gram::Sparse(_) => Err(multikernel::Error::data("a sparse Gram for a dense table")),
    }
}

fn main() -> multikernel::Result<()> {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/uci/ionosphere.csv"),
        PathBuf::from,
    );
    let x = read_table(&path, None, TargetKind::Classes, None, None)?.x;
    let limit = MemoryLimit::default();
    println!("| kernel | map | dim | map dim | relative error |");
    println!("|---|---|---|---|---|");
    for (base, method, dims) in [
        ("rbf:norm=trace", "nystrom", [16, 64, 256, 351]),
        ("rbf:norm=trace", "rff", [64, 256, 1024, 4096]),
        (
            "poly:degree=2,offset=1,norm=trace",
            "nystrom",
            [16, 64, 256, 351],
        ),
        (
            "poly:degree=2,offset=1,norm=trace",
            "sketch",
            [64, 256, 1024, 4096],
        ),
        (
            "poly:degree=3,offset=1,norm=trace",
            "sketch",
            [64, 256, 1024, 4096],
        ),
    ] {
        let exact: KernelSpec = base.parse()?;
        let want = dense(&FittedKernel::fit(&exact, &x, &[], 0)?, &x, &limit)?;
        let norm = want.data.iter().map(|v| v * v).sum::<f64>().sqrt();
        for dim in dims {
            let spec: KernelSpec = format!("{base},approx={method},dim={dim}").parse()?;
            let (mut error, mut map_dim) = (0.0, 0);
            for seed in [1, 2, 3] {
                let k = FittedKernel::fit(&spec, &x, &[], seed)?;
                map_dim = k.feature_map().map_or(0, |m| m.dim());
                let got = dense(&k, &x, &limit)?;
                let d: f64 = got
                    .data
                    .iter()
                    .zip(&want.data)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                error += d.sqrt() / norm / 3.0;
            }
            println!("| {base} | {method} | {dim} | {map_dim} | {error:.3e} |");
        }
    }
    Ok(())
}
