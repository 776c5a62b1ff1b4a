#![allow(clippy::needless_range_loop)]
use super::engine::GompStop;
use super::*;
use crate::data::Matrix;
use crate::error::Error;
use crate::kernel::{
    fit_all, kernel_matrices, test_kernel_matrix, KernelMatrix, KernelSpec, MemoryLimit,
};
use crate::run::{Control, Observer, Progress, RunStatus, StepUnit, StopFlag};
use crate::solver::ridge::center_targets;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicUsize, Ordering};

fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
    Matrix::from_vec(
        rows,
        cols,
        (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
    )
}

/// Slow twin of `min_g R(g; r)` for `K = Phi Phi^T`, in the primal: with
/// `w = (Phi^T Phi + lambda l I)^-1 Phi^T r` (normal equations by Gauss-Jordan),
/// `R = (1/l)||r - Phi w||^2 + lambda ||w||^2`; with `bias` a free unpenalized
/// intercept is added as an extra column whose penalty is zero.
fn rls_objective(phi: &Matrix, r: &[f64], lambda: f64, bias: bool) -> f64 {
    let l = r.len();
    let q = phi.cols + usize::from(bias);
    let feat = |i: usize, a: usize| if a < phi.cols { phi.get(i, a) } else { 1.0 };
    let mut a = vec![vec![0.0; q + 1]; q];
    for (ai, row) in a.iter_mut().enumerate() {
        for b in 0..q {
            row[b] = (0..l).map(|i| feat(i, ai) * feat(i, b)).sum::<f64>() / l as f64;
        }
        if ai < phi.cols {
            row[ai] += lambda;
        }
        row[q] = (0..l).map(|i| feat(i, ai) * r[i]).sum::<f64>() / l as f64;
    }
    // Gauss-Jordan with partial pivoting.
    for col in 0..q {
        let piv = (col..q)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap();
        a.swap(col, piv);
        for row in 0..q {
            if row != col {
                let f = a[row][col] / a[col][col];
                for k in col..=q {
                    let v = a[col][k];
                    a[row][k] -= f * v;
                }
            }
        }
    }
    let w: Vec<f64> = (0..q).map(|i| a[i][q] / a[i][i]).collect();
    let mut loss = 0.0;
    for (i, ri) in r.iter().enumerate() {
        let f: f64 = (0..q).map(|b| feat(i, b) * w[b]).sum();
        loss += (ri - f) * (ri - f);
    }
    let pen: f64 = w[..phi.cols].iter().map(|v| v * v).sum();
    loss / l as f64 + lambda * pen
}

fn gram(phi: &Matrix) -> Matrix {
    KernelMatrix::Factor(phi.clone()).to_dense()
}

#[test]
fn improvement_equals_difference_of_rls_objectives() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let l = 14;
    for q in [1usize, 3, 20] {
        let phi = random_matrix(l, q, &mut rng);
        let r = random_matrix(l, 1, &mut rng);
        for lambda in [1e-3, 0.1, 2.0] {
            let direct = r.data.iter().map(|v| v * v).sum::<f64>() / l as f64
                - rls_objective(&phi, &r.data, lambda, false);
            let dense = improvement(&KernelMatrix::Dense(gram(&phi)), &r, lambda).unwrap();
            let fact = improvement(&KernelMatrix::Factor(phi.clone()), &r, lambda).unwrap();
            assert!((dense - direct).abs() < 1e-10, "{dense} vs {direct}");
            assert!((fact - direct).abs() < 1e-10, "{fact} vs {direct}");
            assert!(direct >= 0.0);
        }
    }
}

/// The first step's improvement (with bias: centered kernels and targets) equals the
/// brute-force RLS difference with a free intercept, for each kind of kernel, and is
/// the maximum over the dictionary; later steps likewise on the refit's residual.
#[test]
fn path_improvements_match_brute_force_with_bias() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let l = 16;
    let phis: Vec<Matrix> = vec![
        random_matrix(l, 1, &mut rng),
        random_matrix(l, 3, &mut rng),
        random_matrix(l, 6, &mut rng),
        random_matrix(l, 1, &mut rng),
        random_matrix(l, 2, &mut rng),
    ];
    let dict: Vec<KernelMatrix> = phis
        .iter()
        .enumerate()
        .map(|(j, p)| {
            if j % 2 == 0 && p.cols > 1 {
                KernelMatrix::Dense(gram(p))
            } else {
                KernelMatrix::Factor(p.clone())
            }
        })
        .collect();
    let mut y = random_matrix(l, 1, &mut rng);
    y.data.iter_mut().for_each(|v| *v += 2.0);
    let lambda = 0.05;
    for precompute in [Precompute::Cholesky, Precompute::None] {
        let params = GompParams {
            lambda,
            max_kernels: 4,
            eps: 0.0,
            precompute,
            ..GompParams::default()
        };
        let path = gomp(&dict, &y, &params, &()).unwrap().0;
        assert_eq!(path.steps.len(), 4);
        // Residual before each step, by the brute-force definition y - f.
        let mut resid: Vec<f64> = y.data.clone();
        for (t, step) in path.steps.iter().enumerate() {
            let rr = resid.iter().map(|v| v * v).sum::<f64>() / l as f64;
            let rmean = resid.iter().sum::<f64>() / l as f64;
            let r0 = rr - rmean * rmean; // R(constant; r), the free intercept alone
            let imps: Vec<f64> = (0..dict.len())
                .map(|j| r0 - rls_objective(&phis[j], &resid, lambda, true))
                .collect();
            let chosen_before: Vec<usize> = path.steps[..t].iter().map(|s| s.kernel).collect();
            let best = (0..dict.len())
                .filter(|j| !chosen_before.contains(j))
                .max_by(|&a, &b| imps[a].total_cmp(&imps[b]))
                .unwrap();
            assert_eq!(step.kernel, best, "step {t}: {imps:?}");
            assert!(
                (step.improvement - imps[best]).abs() < 1e-10,
                "{} vs {}",
                step.improvement,
                imps[best]
            );
            // Refit by brute force on the stacked features of the chosen kernels.
            let sel: Vec<usize> = path.steps[..=t].iter().map(|s| s.kernel).collect();
            let cols: usize = sel.iter().map(|&j| phis[j].cols).sum();
            let mut stacked = Matrix::zeros(l, cols);
            let mut off = 0;
            for &j in &sel {
                for i in 0..l {
                    for a in 0..phis[j].cols {
                        stacked.set(i, off + a, phis[j].get(i, a));
                    }
                }
                off += phis[j].cols;
            }
            let train = path
                .decision(t + 1, &dict, &|j| Ok(dict[j].clone()), l)
                .unwrap();
            let fitted_obj = {
                let mut loss = 0.0;
                for i in 0..l {
                    loss += (y.get(i, 0) - train.get(i, 0)).powi(2);
                }
                let a = &step.alpha;
                let pen: f64 = sel.iter().map(|&j| dict[j].quad_form(a)).sum();
                loss / l as f64 + lambda * pen
            };
            let brute = rls_objective(&stacked, &y.data, lambda, true);
            assert!(
                (fitted_obj - brute).abs() < 1e-10,
                "{fitted_obj} vs {brute}"
            );
            for i in 0..l {
                resid[i] = y.get(i, 0) - train.get(i, 0);
            }
            let res_step: f64 = resid.iter().map(|v| v * v).sum::<f64>() / l as f64;
            assert!((res_step - step.residual).abs() < 1e-10);
        }
    }
}

/// Good and bad kernels on mutually orthogonal feature columns (coherence 0, so the
/// recovery condition of Theorem 2 holds): the path picks exactly the good kernels and
/// then stops on eps.
#[test]
fn exact_recovery_on_orthogonal_supports() {
    let l = 32;
    // Orthonormal columns orthogonal to the constant vector: Walsh-Hadamard rows.
    let walsh = |k: usize, i: usize| -> f64 {
        if (k & i).count_ones() & 1 == 0 {
            1.0
        } else {
            -1.0
        }
    };
    let col = |k: usize| -> Vec<f64> { (0..l).map(|i| walsh(k, i)).collect() };
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    // Kernel supports: each kernel owns distinct Walsh functions 1..31.
    let supports: Vec<Vec<usize>> = vec![
        vec![1, 2],       // good, dense
        vec![3],          // bad, rank one
        vec![4, 5, 6],    // bad, dense
        vec![7],          // good, rank one
        vec![8, 9],       // bad, factor
        vec![10, 11, 12], // good, factor
        vec![13],         // bad, rank one
        vec![14, 15],     // bad, dense
    ];
    let good = [0usize, 3, 5];
    let phis: Vec<Matrix> = supports
        .iter()
        .map(|s| {
            let mut m = Matrix::zeros(l, s.len());
            for (a, &k) in s.iter().enumerate() {
                let scale = rng.gen_range(0.5..2.0);
                for (i, v) in col(k).into_iter().enumerate() {
                    m.set(i, a, scale * v);
                }
            }
            m
        })
        .collect();
    let dict: Vec<KernelMatrix> = phis
        .iter()
        .enumerate()
        .map(|(j, p)| match j {
            0 | 2 | 7 => KernelMatrix::Dense(gram(p)),
            _ => KernelMatrix::Factor(p.clone()),
        })
        .collect();
    let mut y = vec![0.3; l];
    for (g, &j) in good.iter().enumerate() {
        for a in 0..phis[j].cols {
            let w = rng.gen_range(0.5..1.5) * (g + 1) as f64;
            for (i, yi) in y.iter_mut().enumerate() {
                *yi += w * phis[j].get(i, a);
            }
        }
    }
    let y = Matrix::from_vec(l, 1, y);
    for precompute in [Precompute::Cholesky, Precompute::None] {
        let params = GompParams {
            lambda: 1e-3,
            max_kernels: 8,
            eps: 1e-12,
            precompute,
            ..GompParams::default()
        };
        let path = gomp(&dict, &y, &params, &()).unwrap().0;
        let mut sel = path.selected();
        sel.sort_unstable();
        assert_eq!(sel, good.to_vec());
        assert_eq!(path.stop, GompStop::Eps);
    }
}

#[test]
fn multivariate_with_one_output_equals_plain_and_sums_outputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let l = 20;
    let dict: Vec<KernelMatrix> = (0..6)
        .map(|j| {
            let p = random_matrix(l, 1 + j % 3, &mut rng);
            if j % 2 == 0 {
                KernelMatrix::Dense(gram(&p))
            } else {
                KernelMatrix::Factor(p)
            }
        })
        .collect();
    let y1 = random_matrix(l, 1, &mut rng);
    let params = GompParams {
        lambda: 0.02,
        max_kernels: 4,
        eps: 0.0,
        ..GompParams::default()
    };
    let plain = gomp(&dict, &y1, &params, &()).unwrap().0;
    // The same column among zero columns: the zero outputs add nothing.
    let mut y3 = Matrix::zeros(l, 3);
    for i in 0..l {
        y3.set(i, 1, y1.get(i, 0));
    }
    let multi = gomp(&dict, &y3, &params, &()).unwrap().0;
    assert_eq!(plain.selected(), multi.selected());
    for (a, b) in plain.steps.iter().zip(&multi.steps) {
        assert!((a.improvement - b.improvement).abs() < 1e-12);
        for i in 0..l {
            assert!((a.alpha.get(i, 0) - b.alpha.get(i, 1)).abs() < 1e-12);
            assert_eq!(b.alpha.get(i, 0), 0.0);
        }
        assert!((a.bias[0] - b.bias[1]).abs() < 1e-12);
    }
    // Two different outputs: the first step's improvement is the sum of the per-output
    // improvements (brute force per column), and the choice maximizes that sum.
    let y2 = random_matrix(l, 2, &mut rng);
    let two = gomp(&dict, &y2, &params, &()).unwrap().0;
    let (_, yc) = center_targets(&y2);
    let sums: Vec<f64> = dict
        .iter()
        .map(|k| {
            let kc = k.centered();
            (0..2)
                .map(|c| {
                    let col = Matrix::from_vec(l, 1, yc.col(c));
                    improvement(&kc, &col, 0.02).unwrap()
                })
                .sum()
        })
        .collect();
    let best = (0..dict.len())
        .max_by(|&a, &b| sums[a].total_cmp(&sums[b]))
        .unwrap();
    assert_eq!(two.steps[0].kernel, best);
    assert!((two.steps[0].improvement - sums[best]).abs() < 1e-10);
}

#[test]
fn decision_path_matches_single_decisions_and_subsample_is_seeded() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let l = 18;
    let x = random_matrix(l + 7, 5, &mut rng);
    let train_x = Matrix::from_vec(l, 5, x.data[..l * 5].to_vec());
    let test_x = Matrix::from_vec(7, 5, x.data[l * 5..].to_vec());
    let dict: Vec<KernelMatrix> = (0..5)
        .map(|j| KernelMatrix::rank_one(train_x.col(j)))
        .collect();
    let test = |j: usize| Ok(KernelMatrix::rank_one(test_x.col(j)));
    let y = random_matrix(l, 2, &mut rng);
    let params = GompParams {
        lambda: 0.01,
        max_kernels: 5,
        eps: 0.0,
        ..GompParams::default()
    };
    let path = gomp(&dict, &y, &params, &()).unwrap().0;
    assert_eq!(path.stop, GompStop::MaxKernels);
    let all = path.decision_path(&dict, &test, 7).unwrap();
    assert_eq!(all.len(), 6);
    for (s, m) in all.iter().enumerate() {
        let one = path.decision(s, &dict, &test, 7).unwrap();
        for (a, b) in one.data.iter().zip(&m.data) {
            assert!((a - b).abs() < 1e-12);
        }
    }
    let sub = GompParams {
        subsample: Some(2),
        seed: 9,
        ..params.clone()
    };
    let a = gomp(&dict, &y, &sub, &()).unwrap().0;
    let b = gomp(&dict, &y, &sub, &()).unwrap().0;
    assert_eq!(a.selected(), b.selected());
    assert_eq!(a.steps.len(), 5);
    let mut dedup = a.selected();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), 5);
}

#[test]
fn invalid_parameters_and_memory_limit_are_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let l = 6;
    let dict = vec![KernelMatrix::Dense(gram(&random_matrix(l, 2, &mut rng)))];
    let y = random_matrix(l, 1, &mut rng);
    let bad = GompParams {
        lambda: 0.0,
        ..GompParams::default()
    };
    assert!(gomp(&dict, &y, &bad, &()).is_err());
    let tight = GompParams {
        precompute: Precompute::Cholesky,
        memory_bytes: 10,
        ..GompParams::default()
    };
    assert!(matches!(
        gomp(&dict, &y, &tight, &()),
        Err(Error::Memory { .. })
    ));
    let auto = GompParams {
        precompute: Precompute::Auto,
        memory_bytes: 10,
        ..GompParams::default()
    };
    assert!(gomp(&dict, &y, &auto, &()).is_ok());
}

fn names(d: usize) -> Vec<String> {
    (0..d).map(|j| format!("x{j}")).collect()
}

#[test]
fn model_matches_solver_path_and_selects_on_validation() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let (n, d) = (40, 6);
    let x = random_matrix(n + 30, d, &mut rng);
    let mut y = Matrix::zeros(n + 30, 1);
    for i in 0..n + 30 {
        let v = 2.0 * x.get(i, 1) - x.get(i, 4) + 0.1 * rng.gen_range(-1.0..1.0);
        y.set(i, 0, v);
    }
    let idx_tr: Vec<usize> = (0..n).collect();
    let idx_va: Vec<usize> = (n..n + 30).collect();
    let (xtr, ytr) = (x.select_rows(&idx_tr), y.select_rows(&idx_tr));
    let (xva, yva) = (x.select_rows(&idx_va), y.select_rows(&idx_va));
    let specs: Vec<KernelSpec> = ["perfeature:linear:norm=variance", "rbf:norm=variance"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let params = GompModelParams {
        gomp: GompParams {
            lambda: 1e-3,
            max_kernels: 5,
            eps: 0.0,
            ..GompParams::default()
        },
        ..GompModelParams::default()
    };
    let mut model = GompModel::fit(xtr.view(), &names(d), &ytr, &specs, &params, &())
        .unwrap()
        .0;
    assert_eq!(model.dictionary_size, d + 1);
    assert_eq!(model.n_kernels(), 5);
    // Solver-level path on the same kernel matrices gives the same decisions.
    let limit = MemoryLimit::default();
    let st = model.standardizer.clone().unwrap();
    let (xs, xvs) = (st.apply(&xtr), st.apply(&xva));
    let fitted = fit_all(&specs, &xs, &names(d), 0).unwrap();
    let mats = kernel_matrices(&fitted, &xs, &limit).unwrap();
    let path = gomp(&mats, &ytr, &params.gomp, &()).unwrap().0;
    assert_eq!(path.selected(), model.dictionary_index);
    let test = |j: usize| test_kernel_matrix(&fitted[j], &xvs, &xs, &limit);
    let want = path.decision_path(&mats, &test, 30).unwrap();
    let got = model.predict_path(xva.view(), &limit).unwrap();
    assert_eq!(got.len(), 6);
    for (a, b) in got.iter().zip(&want) {
        for (u, v) in a.data.iter().zip(&b.data) {
            assert!((u - v).abs() < 1e-10);
        }
    }
    let full = model.predict(xva.view(), &limit).unwrap();
    for (u, v) in full.data.iter().zip(&got[5].data) {
        assert!((u - v).abs() < 1e-10);
    }
    // JSON round trip.
    let back: GompModel = serde_json::from_str(&serde_json::to_string(&model).unwrap()).unwrap();
    assert_eq!(back.predict(xva.view(), &limit).unwrap(), full);
    // Validation selection: the argmin of the per-length losses, then truncated.
    let (s, losses) = model
        .select_on_validation(xva.view(), &yva, ValidationMetric::SquaredError, &limit)
        .unwrap();
    assert_eq!(losses.len(), 6);
    assert_eq!(s, best_index(&losses));
    assert!(s >= 1 && losses[s] < 0.5 * losses[0], "{losses:?}");
    assert_eq!(model.n_kernels(), s);
    assert_eq!(model.kernels().len(), s);
    let again = model.predict(xva.view(), &limit).unwrap();
    let l = ValidationMetric::SquaredError.loss(&again, &yva);
    assert!((l - losses[s]).abs() < 1e-12);
}

#[test]
fn classification_error_metric() {
    let pred = Matrix::from_rows(&[vec![0.3], vec![-0.2], vec![0.1]]);
    let truth = Matrix::from_rows(&[vec![1.0], vec![1.0], vec![-1.0]]);
    assert!((ValidationMetric::ClassificationError.loss(&pred, &truth) - 2.0 / 3.0).abs() < 1e-15);
    let pred = Matrix::from_rows(&[vec![0.3, 0.5, 0.1], vec![0.9, 0.2, 0.0]]);
    let truth = Matrix::from_rows(&[vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]);
    assert!((ValidationMetric::ClassificationError.loss(&pred, &truth) - 0.5).abs() < 1e-15);
}

// ---------------------------------------------------------------------------------------
// Run contract.

/// Six kernels over 24 points (dense, factor and rank one) and two outputs.
fn contract_problem() -> (Vec<KernelMatrix>, Matrix) {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let l = 24;
    let dict: Vec<KernelMatrix> = (0..6)
        .map(|j| {
            let p = random_matrix(l, 1 + j % 3, &mut rng);
            match j % 3 {
                0 => KernelMatrix::Factor(p),
                1 => KernelMatrix::Factor(p),
                _ => KernelMatrix::Dense(gram(&p)),
            }
        })
        .collect();
    (dict, random_matrix(l, 2, &mut rng))
}

fn contract_params(max_kernels: usize, eps: f64) -> GompParams {
    GompParams {
        lambda: 0.01,
        max_kernels,
        eps,
        ..GompParams::default()
    }
}

/// `Completed` at `max_kernels`, `Converged` when every kernel is chosen or the best
/// improvement is below eps; one step per kernel with the training residual as objective.
#[test]
fn run_status_follows_the_stop_reason() {
    let (dict, y) = contract_problem();
    let (path, info) = gomp(&dict, &y, &contract_params(3, 0.0), &()).unwrap();
    assert_eq!(
        (path.stop, info.status),
        (GompStop::MaxKernels, RunStatus::Completed)
    );
    assert_eq!((info.unit, info.steps), (StepUnit::Kernel, 3));
    let residuals: Vec<f64> = path.steps.iter().map(|s| s.residual).collect();
    let traced: Vec<f64> = info.trace.iter().map(|t| t.objective).collect();
    assert_eq!(traced, residuals);
    assert_eq!(info.objective, residuals.last().copied());

    let (path, info) = gomp(&dict, &y, &contract_params(10, 0.0), &()).unwrap();
    assert_eq!(
        (path.stop, info.status),
        (GompStop::Exhausted, RunStatus::Converged)
    );
    assert_eq!(info.steps, 6);

    let (path, info) = gomp(&dict, &y, &contract_params(10, 1e9), &()).unwrap();
    assert_eq!(
        (path.stop, info.status),
        (GompStop::Eps, RunStatus::Converged)
    );
    assert_eq!(info.steps, 0);
}

/// Rows of raw features for the model-level contract tests, with two targets.
fn contract_rows() -> (Matrix, Matrix, Vec<KernelSpec>) {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let x = random_matrix(30, 4, &mut rng);
    let mut y = Matrix::zeros(30, 2);
    for i in 0..30 {
        y.set(i, 0, x.get(i, 0) - 2.0 * x.get(i, 2));
        y.set(i, 1, (2.0 * x.get(i, 1)).sin());
    }
    let specs = [
        "perfeature:linear",
        "rbf:norm=variance",
        "poly:degree=2,norm=diag",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    (x, y, specs)
}

#[test]
fn an_observer_stops_the_run_after_the_first_kernel() {
    let stop_after_one = |p: &Progress| {
        assert_eq!((p.unit, p.total), (StepUnit::Kernel, Some(5)));
        if p.step >= 1 {
            Control::Stop
        } else {
            Control::Continue
        }
    };
    let (dict, y) = contract_problem();
    let (path, info) = gomp(&dict, &y, &contract_params(5, 0.0), &stop_after_one).unwrap();
    assert_eq!(
        (path.stop, info.status),
        (GompStop::Cancelled, RunStatus::Cancelled)
    );
    assert_eq!((path.steps.len(), info.steps), (1, 1));
    let f = path
        .decision(1, &dict, &|j| Ok(dict[j].clone()), 24)
        .unwrap();
    assert_eq!((f.rows, f.cols), (24, 2));

    let (x, y, specs) = contract_rows();
    let params = GompModelParams {
        gomp: contract_params(5, 0.0),
        ..GompModelParams::default()
    };
    let (model, info) =
        GompModel::fit(x.view(), &names(4), &y, &specs, &params, &stop_after_one).unwrap();
    assert_eq!(
        (model.stop, info.status),
        (GompStop::Cancelled, RunStatus::Cancelled)
    );
    assert_eq!(model.n_kernels(), 1);
    model.validate().unwrap();
    let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
    assert_eq!((f.rows, f.cols), (30, 2));
    assert!(f.data.iter().all(|v| v.is_finite()));
}

#[test]
fn a_stop_flag_set_before_the_run_stops_it_at_the_first_poll() {
    let flag = StopFlag::new();
    flag.stop();
    let (dict, y) = contract_problem();
    let (path, info) = gomp(&dict, &y, &contract_params(5, 0.0), &flag).unwrap();
    assert_eq!(
        (path.stop, info.status),
        (GompStop::Cancelled, RunStatus::Cancelled)
    );
    assert_eq!((path.steps.len(), info.steps), (0, 0));

    // The model of no kernel predicts the mean of each target.
    let (x, y, specs) = contract_rows();
    let (model, info) = GompModel::fit(
        x.view(),
        &names(4),
        &y,
        &specs,
        &GompModelParams::default(),
        &flag,
    )
    .unwrap();
    assert_eq!((model.n_kernels(), info.status), (0, RunStatus::Cancelled));
    model.validate().unwrap();
    let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
    for c in 0..2 {
        let mean = y.col(c).iter().sum::<f64>() / 30.0;
        assert!((0..30).all(|i| (f.get(i, c) - mean).abs() < 1e-12));
    }
}

/// Stops after a number of polls, counting them (from any thread).
struct StopAfterPolls {
    polls: AtomicUsize,
    limit: usize,
}

impl Observer for StopAfterPolls {
    fn should_stop(&self) -> bool {
        self.polls.fetch_add(1, Ordering::SeqCst) >= self.limit
    }
}

/// The observer is polled between candidate evaluations, not only between steps: a stop
/// asked after the run's first two polls (at its start and at the top of the first step)
/// ends the run inside the step.
#[test]
fn candidate_evaluations_poll_the_observer() {
    let (dict, y) = contract_problem();
    let obs = StopAfterPolls {
        polls: AtomicUsize::new(0),
        limit: 2,
    };
    let params = GompParams {
        precompute: Precompute::None,
        ..contract_params(5, 0.0)
    };
    let (path, info) = gomp(&dict, &y, &params, &obs).unwrap();
    assert_eq!((path.steps.len(), info.status), (0, RunStatus::Cancelled));
    // The two polls that let the run go on, and at least one candidate's.
    assert!(obs.polls.load(Ordering::SeqCst) >= 3);
}

// ---------------------------------------------------------------------------------------
// Validation of stored models.

#[test]
fn validate_accepts_fitted_models_and_refuses_mangled_copies() {
    let (x, y, specs) = contract_rows();
    let (model, _) = GompModel::fit(
        x.view(),
        &names(4),
        &y,
        &specs,
        &GompModelParams::default(),
        &(),
    )
    .unwrap();
    model.validate().unwrap();
    assert!(model.n_kernels() >= 2);
    let refused = |f: &dyn Fn(&mut GompModel)| {
        let mut m = model.clone();
        f(&mut m);
        m.validate().unwrap_err()
    };
    // A truncated vector, swapped dimensions, indices out of range, non-finite numbers.
    assert!(matches!(
        refused(&|m| {
            m.path[1].alpha.data.pop();
        }),
        Error::ShapeMismatch { .. }
    ));
    refused(&|m| {
        m.path[0].bias.pop();
    });
    refused(&|m| {
        m.kernels.pop();
    });
    refused(&|m| {
        let (r, c) = (m.x_train.rows, m.x_train.cols);
        (m.x_train.rows, m.x_train.cols) = (c, r);
    });
    refused(&|m| m.dictionary_index[0] = m.dictionary_size);
    refused(&|m| m.intercept[1] = f64::NAN);
    refused(&|m| m.x_train.data[3] = f64::INFINITY);
    refused(&|m| m.lambda = 0.0);
    refused(&|m| {
        m.standardizer.as_mut().unwrap().scale.pop();
    });
    refused(&|m| m.standardizer.as_mut().unwrap().scale[0] = 0.0);
    refused(&|m| {
        m.feature_names.pop();
    });
    // A kernel reading a feature the model does not have (its fields are private: through
    // the model file's JSON).
    let mut v = serde_json::to_value(&model).unwrap();
    let k = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|k| k["features"].is_array())
        .unwrap();
    v["kernels"][k]["features"] = serde_json::json!([9]);
    let bad: GompModel = serde_json::from_value(v).unwrap();
    assert!(matches!(bad.validate(), Err(Error::Model { .. })));
}

/// Single random changes to a model file: whatever `validate` accepts predicts without a
/// panic (the corrupted files of the reliability issue panicked in `predict`).
#[test]
fn predict_never_panics_on_a_model_that_validates() {
    let (x, y, specs) = contract_rows();
    let (model, _) = GompModel::fit(
        x.view(),
        &names(4),
        &y,
        &specs,
        &GompModelParams::default(),
        &(),
    )
    .unwrap();
    let limit = MemoryLimit::default();
    let v = serde_json::to_value(&model).unwrap();
    let (refused, accepted) = crate::solver::check::mangle::check_copies(
        &v,
        400,
        1,
        GompModel::validate,
        |m: &GompModel| m.predict(x.view(), &limit),
    );
    assert!(
        refused > 100 && accepted > 10,
        "{refused} refused, {accepted} accepted"
    );
}
