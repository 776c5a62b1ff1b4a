//! The structured inner solver against its definitions (slow twins written pair by pair) and
//! the structured wrappers end to end.
//!
//! The gradient is not checked against finite differences of `J` computed by long PEGASOS
//! solves (their noise swamps the differences); instead the formula's pieces are checked
//! exactly: `q_m` against the kernel written out pair by pair, and `-lambda/2 q_m` against
//! central differences of the functions it is the derivative of (the primal at fixed blocks
//! `theta_m`, the dual part `-lambda/2 c^T K_d c` at fixed `c`).

use super::*;
use crate::data::Matrix;
use rand::{Rng, SeedableRng};

/// Words over 5 labels with 64 binary features per position: the first 32 are noisy copies
/// of one prototype per label, the last 32 are coin flips unrelated to the label. The label
/// after 0 is always 1.
fn words(n_words: usize, seed: u64) -> SequenceData {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut proto_rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    let protos: Vec<Vec<u8>> = (0..5)
        .map(|_| (0..32).map(|_| u8::from(proto_rng.gen_bool(0.4))).collect())
        .collect();
    let (mut x, mut labels, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n_words {
        let len = rng.gen_range(2..5);
        let start = labels.len();
        let mut prev = 9;
        for _ in 0..len {
            let y = if prev == 0 { 1 } else { rng.gen_range(0..5) };
            prev = y;
            labels.push(y);
            for &p in &protos[y] {
                let v = if rng.gen_bool(0.15) { 1 - p } else { p };
                x.push(f64::from(v));
            }
            for _ in 0..32 {
                x.push(f64::from(u8::from(rng.gen_bool(0.4))));
            }
        }
        spans.push(start..labels.len());
    }
    let n = labels.len();
    SequenceData::new(
        Matrix::from_vec(n, 64, x),
        labels,
        spans,
        ["A", "B", "C", "D", "E"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        (0..64).map(|j| format!("f{j}")).collect(),
        None,
    )
    .unwrap()
}

/// `features=a+..+b-1`.
fn cols(a: usize, b: usize) -> String {
    (a..b).map(|j| j.to_string()).collect::<Vec<_>>().join("+")
}

/// The Gaussian on the informative half, the Gaussian on the noise, the linear kernel of
/// the noise.
fn specs() -> Vec<KernelSpec> {
    [
        format!("rbf:sigma2=4,features={}", cols(0, 32)),
        format!("rbf:sigma2=4,features={}", cols(32, 64)),
        format!("linear:norm=diag,features={}", cols(32, 64)),
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

fn setup(train: &SequenceData) -> (Vec<FittedKernel>, Vec<Gram>) {
    let kernels = fit_kernels(&specs(), &train.x, 0).unwrap();
    let grams = base_grams(&kernels, &train.x, &MemoryLimit::default()).unwrap();
    (kernels, grams)
}

/// `sum_y c_y^T K c_y` with the kernel evaluated pair by pair.
fn slow_sqnorm(k: &FittedKernel, x: &Matrix, c: &[f64], l: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..x.rows {
        for j in 0..x.rows {
            let kij = k.eval(x.row(i), x.row(j));
            for y in 0..l {
                s += c[i * l + y] * kij * c[j * l + y];
            }
        }
    }
    s
}

/// The gradient's pieces: `q_m` against the kernel written out, `J` against its definition,
/// and `-lambda/2 q_m` against central differences (in each `d_m`, off the simplex) of the
/// primal `lambda/2 sum_m ||theta_m||^2 / d_m + loss` at fixed blocks `theta_m` and of
/// `-lambda/2 c^T K_d c` at fixed `c`.
#[test]
fn gradient_is_the_derivative_at_fixed_parameters() {
    let train = words(40, 1);
    let (kernels, grams) = setup(&train);
    let lambda = lambda_from_c(3.0, train.n_sequences());
    let mut inner = SequenceInner::new(&train, &grams, lambda, 5, &MemoryLimit::default())
        .unwrap()
        .with_epochs(4, 2);
    let d = [0.5, 0.2, 0.3];
    let s = inner.solve(&d, None, &()).unwrap();
    assert_eq!(s.passes, 4.0);
    assert_eq!(s.status, RunStatus::Completed);
    let st = &s.state;
    let l = train.n_labels();
    let c = st.online.kernel_coefs(false).remove(0);
    let q: Vec<f64> = kernels
        .iter()
        .map(|k| slow_sqnorm(k, &train.x, &c, l))
        .collect();
    for (m, &qm) in q.iter().enumerate() {
        assert!(qm > 0.0);
        let got = st.block_sqnorms[m];
        assert!((got - qm).abs() < 1e-9 * qm, "{m}: {got} vs {qm}");
        assert!((s.gradient[m] + 0.5 * lambda * qm).abs() < 1e-9 * lambda * qm);
    }
    // J = lambda/2 (c^T K_d c + ||W||^2) + average loss; c^T K_d c from the combined kernel
    // written out.
    let kd: f64 = (0..3).map(|m| d[m] * q[m]).sum();
    let w: f64 = st.online.explicit_values(false)[0]
        .iter()
        .map(|v| v * v)
        .sum();
    assert!((st.transitions_sqnorm - w).abs() < 1e-12 * (1.0 + w));
    let want = 0.5 * lambda * (kd + w) + st.average_loss;
    assert!(
        (s.objective - want).abs() < 1e-9 * want,
        "{} vs {want}",
        s.objective
    );
    // The shared evaluator: ||theta_m|| = d_m sqrt(q_m), never above J.
    let norms: Vec<f64> = (0..3).map(|m| d[m] * q[m].sqrt()).collect();
    let shared = mkl_objective(lambda, &norms, st.average_loss, w);
    assert!((st.mkl_objective(lambda) - shared).abs() < 1e-9 * shared);
    assert!(shared <= s.objective * (1.0 + 1e-12));
    // Central differences at fixed parameters.
    let theta_sq: Vec<f64> = (0..3).map(|m| d[m] * d[m] * q[m]).collect();
    let primal = |dd: &[f64]| -> f64 {
        0.5 * lambda * (0..3).map(|m| theta_sq[m] / dd[m]).sum::<f64>() + st.average_loss
    };
    let dual = |dd: &[f64]| -> f64 { -0.5 * lambda * (0..3).map(|m| dd[m] * q[m]).sum::<f64>() };
    let h = 1e-5;
    for m in 0..3 {
        let mut up = d.to_vec();
        let mut down = d.to_vec();
        up[m] += h;
        down[m] -= h;
        for (name, f) in [
            ("primal", &primal as &dyn Fn(&[f64]) -> f64),
            ("dual", &dual),
        ] {
            let fd = (f(&up) - f(&down)) / (2.0 * h);
            assert!(
                (fd - s.gradient[m]).abs() < 1e-6 * s.gradient[m].abs(),
                "{name} {m}: {fd} vs {}",
                s.gradient[m]
            );
        }
    }
}

/// Warm starts: a solve of 0 epochs from a state at the same weights returns its objective
/// and gradient bit for bit; at other weights the recomputed scores are `K_d' c` written
/// out (dense and sparse Gram matrices); rounds and epochs go on from the state.
#[test]
fn warm_start_reproduces_the_state() {
    let train = words(30, 2);
    let (kernels, grams) = setup(&train);
    let n = train.n_positions();
    let l = train.n_labels();
    let lambda = lambda_from_c(10.0, train.n_sequences());
    let mut inner = SequenceInner::new(&train, &grams, lambda, 1, &MemoryLimit::default())
        .unwrap()
        .with_epochs(3, 2);
    let d = [0.6, 0.3, 0.1];
    let cold = inner.solve(&d, None, &()).unwrap();
    let warm = inner.solve(&d, Some(&cold.state), &()).unwrap();
    assert_eq!(warm.passes, 2.0);
    assert_eq!(warm.state.epochs, 5);
    assert_eq!(warm.state.online.t, 5 * train.n_sequences() as u64);
    assert!(warm.objective < cold.objective * 1.5);
    inner.set_epochs(3, 0);
    let same = inner.solve(&d, Some(&warm.state), &()).unwrap();
    assert_eq!(same.passes, 0.0);
    assert_eq!(same.objective.to_bits(), warm.objective.to_bits());
    assert_eq!(same.gradient, warm.gradient);
    assert_eq!(same.state.online.t, warm.state.online.t);
    // At other weights: the same c, the scores of K_d'.
    let d2 = [0.1, 0.2, 0.7];
    let moved = inner.solve(&d2, Some(&warm.state), &()).unwrap();
    assert_eq!(moved.state.block_sqnorms, warm.state.block_sqnorms);
    let c = warm.state.online.kernel_coefs(false).remove(0);
    let group = &moved.state.online.kernel[0];
    let s = group.scale();
    let mut sq = 0.0;
    for p in 0..n {
        for y in 0..l {
            let mut f = 0.0;
            for j in 0..n {
                let k: f64 = (0..3)
                    .map(|m| d2[m] * kernels[m].eval(train.x.row(p), train.x.row(j)))
                    .sum();
                f += k * c[j * l + y];
            }
            let got = s * group.image()[y * n + p];
            assert!(
                (got - f).abs() < 1e-9 * (1.0 + f.abs()),
                "({p}, {y}): {got} vs {f}"
            );
            sq += c[p * l + y] * f;
        }
    }
    assert!((group.sqnorm() - sq).abs() < 1e-9 * sq);
    let kd: f64 = (0..3).map(|m| d2[m] * moved.state.block_sqnorms[m]).sum();
    let want = 0.5 * lambda * (kd + moved.state.transitions_sqnorm) + moved.state.average_loss;
    assert!((moved.objective - want).abs() < 1e-12 * want);
    // The engine's recomputation (one product by K_d') agrees with the scores from the
    // products K_m c.
    let mut st = warm.state.online.clone();
    st.recompute_images(std::slice::from_ref(inner.combined()))
        .unwrap();
    for (a, b) in st.kernel[0].image().iter().zip(group.image()) {
        assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()));
    }
    assert!((st.kernel[0].sqnorm() - group.sqnorm()).abs() < 1e-9 * sq);
    // A sparse Gram (B1-spline) through the same recomputation.
    let b = FittedKernel::fit(&"bspline:zeros=0.8".parse().unwrap(), &train.x, &[], 0).unwrap();
    let sparse = b.gram_sym(&train.x, &MemoryLimit::default()).unwrap();
    assert!(matches!(sparse, Gram::Sparse(_)));
    let mut st = warm.state.online.clone();
    st.recompute_images(std::slice::from_ref(&sparse)).unwrap();
    for p in (0..n).step_by(7) {
        for y in 0..l {
            let f: f64 = (0..n)
                .map(|j| b.eval(train.x.row(p), train.x.row(j)) * c[j * l + y])
                .sum();
            let got = st.kernel[0].scale() * st.kernel[0].image()[y * n + p];
            assert!((got - f).abs() < 1e-9 * (1.0 + f.abs()));
        }
    }
    assert!(st.recompute_images(&grams).is_err());
}

fn config(method: WrapperMethod) -> SequenceWrapperConfig {
    SequenceWrapperConfig {
        wrapper: WrapperParams {
            max_iter: 12,
            ..WrapperParams::default()
        },
        first_epochs: 10,
        seed: 2,
        ..SequenceWrapperConfig::new(method, specs(), 10.0)
    }
}

/// Both methods end to end: held-out words labeled well, weights on the simplex with most
/// of them on the kernel of the informative features, the model a SequenceModel like
/// SPOM's (round-trips; through `Model` in `tests/it/wrappers.rs`), its record honest.
#[test]
fn wrappers_learn_the_informative_kernel() {
    let train = words(60, 3);
    let test = words(40, 4);
    let lim = MemoryLimit::default();
    for method in [WrapperMethod::SimpleMkl, WrapperMethod::GaussSeidel] {
        let cfg = config(method);
        let (model, info) = fit_sequence_wrapper(&train, &cfg, &()).unwrap();
        let acc = model.token_accuracy(&test, &lim).unwrap();
        assert!(acc > 0.9, "{}: accuracy {acc}", method.name());
        let total: f64 = model.weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "{:?}", model.weights);
        assert!(model.weights.iter().all(|w| *w >= 0.0));
        assert!(
            model.weights[0] > 0.6,
            "{}: weights {:?}",
            method.name(),
            model.weights
        );
        assert_eq!(model.weight_names.len(), 3);
        assert_eq!(model.groups.len(), 1);
        assert!(info.steps >= 2, "{}: {info:?}", method.name());
        let t = &model.training;
        let w = t.wrapper.as_ref().unwrap();
        assert_eq!(w.method, method);
        assert_eq!((w.first_epochs, w.warm_epochs), (10, 3));
        assert!(t.epochs >= 10 + 3);
        assert_eq!(t.reg, RegSpec::L21Sq);
        assert!(t.final_objective.unwrap() > 0.0);
        let text = serde_json::to_string(&model).unwrap();
        let back: SequenceModel = serde_json::from_str(&text).unwrap();
        assert_eq!(back, model);
    }
}

/// A stop from the observer ends the run with a usable model; bad settings are refused
/// before any work.
#[test]
fn stops_and_refusals() {
    let train = words(20, 5);
    let stop = crate::run::StopFlag::new();
    stop.stop();
    let (model, info) =
        fit_sequence_wrapper(&train, &config(WrapperMethod::SimpleMkl), &stop).unwrap();
    assert_eq!(info.status, RunStatus::Cancelled);
    model.validate().unwrap();
    let bad = |f: &dyn Fn(&mut SequenceWrapperConfig)| {
        let mut cfg = config(WrapperMethod::GaussSeidel);
        f(&mut cfg);
        fit_sequence_wrapper(&train, &cfg, &()).unwrap_err()
    };
    assert!(matches!(bad(&|c| c.c = 0.0), Error::InvalidParameter { name, .. } if name == "C"));
    assert!(matches!(
        bad(&|c| c.c = f64::NAN),
        Error::InvalidParameter { .. }
    ));
    assert!(
        matches!(bad(&|c| c.kernels.clear()), Error::InvalidParameter { name, .. } if name == "kernels")
    );
    assert!(matches!(
        bad(&|c| c.warm_epochs = 0),
        Error::InvalidParameter { .. }
    ));
    assert!(matches!(
        bad(&|c| c.memory = MemoryLimit { bytes: 16 << 10 }),
        Error::Memory { .. }
    ));
    let empty = train.select(&[]);
    assert!(fit_sequence_wrapper(&empty, &config(WrapperMethod::SimpleMkl), &()).is_err());
}
